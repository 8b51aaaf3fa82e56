#!/usr/bin/env python3
"""A process that looks like a confined wamcp command to the HTTP listener's
peer check (Linux): no_new_privs and ten allow-all seccomp filters, then a
sleep. While it runs, `serve --http` looks up the holder of every client
socket, the slow path; use it to reproduce load on that path, e.g.

    scripts/marked-process.py &
    (ulimit -Sn 1024 -Hn 1024; cargo nextest run -p wamcp --test all -E 'test(http::)')
"""
import ctypes
import struct
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_RET_ALLOW = 0x7FFF0000


class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


# One BPF instruction: return ALLOW.
allow = (ctypes.c_ubyte * 8).from_buffer_copy(struct.pack("HBBI", 0x06, 0, 0, SECCOMP_RET_ALLOW))
program = Program(1, ctypes.addressof(allow))
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    raise OSError(ctypes.get_errno(), "no_new_privs")
for _ in range(10):
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")
time.sleep(300)
