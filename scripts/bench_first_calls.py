#!/usr/bin/env python3
"""First call of each heavy tool, timed from a fresh server: start, initialize,
then one tools/call whose time is measured. Servers alternate call for call.

    python3 scripts/bench_first_calls.py [--runs N] BINARY [BINARY...]

search_files runs on a generated tree of 60,000 files; fetch_web_page asks for
a page on a listed host, which fails at name resolution on a machine without
network, so what is timed is the lazily built HTTPS client, the policy and
the failed lookup; run_powershell runs `git --version` (rules load, confinement).
"""
import json, os, statistics, subprocess, sys, tempfile, time

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}}


def make_tree(root, files=60_000):
    for i in range(files):
        folder = os.path.join(root, f"d{i % 300}", f"e{i % 7}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{i}.rs"), "w") as f:
            f.write(f"// file {i}\nfn helper_{i}() {{}}\n" + ("let x = 1;\n" * 20))
    with open(os.path.join(root, "d1", "needle.rs"), "w") as f:
        f.write("fn main() { unique_needle_7731(); }\n")


def first_call(binary, home, tree, name, arguments):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/config",
               XDG_DATA_HOME=home + "/data", WAMCP_TOOLS="all",
               WAMCP_PROJECT_ROOTS=tree)
    for key in [k for k in env if k.startswith("WAMCP_") and k not in ("WAMCP_TOOLS", "WAMCP_PROJECT_ROOTS")]:
        del env[key]
    server = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=tree)
    send = lambda message: (server.stdin.write((json.dumps(message) + "\n").encode()), server.stdin.flush())
    send(INIT)
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": name, "arguments": arguments}})
    answer = json.loads(server.stdout.readline())
    elapsed = time.perf_counter() - started
    server.stdin.close()
    server.wait()
    text = answer.get("result", {}).get("content", [{}])[0].get("text", "")
    return elapsed, text


def main():
    args = sys.argv[1:]
    runs = 15
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as tree:
        make_tree(tree)
        calls = [
            ("search_files", {"pattern": "unique_needle_7731", "path": tree}, "needle.rs"),
            ("fetch_web_page", {"url": "https://docs.rs/serde/latest/serde/"}, "could not be resolved"),
            ("run_powershell", {"command": "git --version"}, "git version"),
        ]
        print(f"first call after initialize, median of {runs} alternating runs\n")
        print("| tool | " + " | ".join(args) + " |")
        print("|---|" + "---:|" * len(args))
        for name, arguments, expected in calls:
            times = {b: [] for b in args}
            for _ in range(runs):
                for binary in args:
                    elapsed, text = first_call(binary, home, tree, name, arguments)
                    if expected not in text:
                        sys.exit(f"{binary} {name}: unexpected answer: {text[:300]}")
                    times[binary].append(elapsed * 1000)
            print(f"| {name} | " + " | ".join(f"{statistics.median(times[b]):.1f} ms" for b in args) + " |")


main()
