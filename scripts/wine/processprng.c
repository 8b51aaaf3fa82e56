/*
 * bcryptprimitives.dll for Wine 8, which lacks ProcessPrng.
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from
 * bcryptprimitives.dll for its random numbers; on Wine 8 every Rust program
 * therefore fails to load with status c0000135. This DLL supplies the one
 * export, backed by RtlGenRandom (advapi32's SystemFunction036). It exists
 * only in the test prefix; nothing ships with it.
 */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE out, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length: feed it in chunks. */
    const SIZE_T chunk_max = 1u << 28;
    while (len > 0) {
        ULONG chunk = (ULONG)(len < chunk_max ? len : chunk_max);
        if (!RtlGenRandom(out, chunk))
            return FALSE;
        out += chunk;
        len -= chunk;
    }
    return TRUE;
}
