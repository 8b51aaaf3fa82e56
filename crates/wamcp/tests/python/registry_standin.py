"""A loopback stand-in for PyPI, the npm registry and a cargo sparse registry.

Usage: registry_standin.py DIR
Serves one package for each (wheel `standin-pkg` 1.0, npm `standin-pkg`
1.0.0, crate `standin` 1.0.0) on 127.0.0.1 at a free port, prints the port,
and appends every requested path to DIR/requests.log.
"""

import base64
import hashlib
import http.server
import io
import json
import os
import sys
import tarfile
import zipfile


def tar_gz(files):
    """A .tgz of (name, text) pairs, with fixed times so it is the same each run."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def wheel():
    """A pure-Python wheel whose RECORD holds every file's hash."""
    files = {
        "standin_pkg/__init__.py": "VALUE = 1\n",
        "standin_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: standin-pkg\nVersion: 1.0\n",
        "standin_pkg-1.0.dist-info/WHEEL":
            "Wheel-Version: 1.0\nGenerator: standin\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(text.encode())))
    record.append("standin_pkg-1.0.dist-info/RECORD,,")
    files["standin_pkg-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def build(port):
    """Every path served and its bytes."""
    base = "http://127.0.0.1:%d" % port
    tgz = tar_gz([
        ("package/package.json", json.dumps({"name": "standin-pkg", "version": "1.0.0", "main": "index.js"})),
        ("package/index.js", "module.exports = 'standin';\n"),
    ])
    packument = {
        "name": "standin-pkg",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {
            "name": "standin-pkg",
            "version": "1.0.0",
            "dist": {
                "tarball": base + "/standin-pkg/-/standin-pkg-1.0.0.tgz",
                "shasum": hashlib.sha1(tgz).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
            },
        }},
    }
    crate = tar_gz([
        ("standin-1.0.0/Cargo.toml", '[package]\nname = "standin"\nversion = "1.0.0"\nedition = "2021"\n'),
        ("standin-1.0.0/src/lib.rs", "pub const VALUE: u32 = 1;\n"),
    ])
    entry = {"name": "standin", "vers": "1.0.0", "deps": [], "cksum": hashlib.sha256(crate).hexdigest(),
             "features": {}, "yanked": False}
    whl = wheel()
    whl_name = "standin_pkg-1.0-py3-none-any.whl"
    simple = '<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>' % (
        whl_name, hashlib.sha256(whl).hexdigest(), whl_name)
    return {
        "/simple/standin-pkg/": simple.encode(),
        "/files/" + whl_name: whl,
        "/standin-pkg": json.dumps(packument).encode(),
        "/standin-pkg/-/standin-pkg-1.0.0.tgz": tgz,
        "/index/config.json": json.dumps({"dl": base + "/crates/{crate}/{version}/download"}).encode(),
        "/index/st/an/standin": (json.dumps(entry) + "\n").encode(),
        "/crates/standin/1.0.0/download": crate,
    }


def main():
    root = sys.argv[1]
    log = open(os.path.join(root, "requests.log"), "a", buffering=1)
    files = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            log.write(path + "\n")
            body = files.get(path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            # pip reads an index page only when it says it is HTML.
            if path.startswith("/simple/"):
                self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    files.update(build(server.server_address[1]))
    print(server.server_address[1], flush=True)
    server.serve_forever()


main()
