#!/usr/bin/env bash
# The whole test suite: lint, the Linux tests, then the Windows build under
# Wine with a virtual display. Installs what it needs on Debian/Ubuntu:
# mingw-w64, Wine, Xvfb, the Rust Windows target, and the Python MCP SDK
# (in a private venv). Writes nothing into the repository: caches go to
# $WAMCP_CACHE (default ~/.cache/wamcp-test), builds to $CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${WAMCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wamcp-test}
WIN_TARGET=x86_64-pc-windows-gnu
MSVC_TARGET=x86_64-pc-windows-msvc   # what most Windows users build: compiled here, tested as GNU under Wine
WINE=/usr/lib/wine/wine64   # not /usr/bin/wine: its wrapper fails quietly without wine32
mkdir -p "$CACHE"
# Each step says when it starts, so a slow run shows which step took the time.
step() { printf '\n=== %s ===\n(%d s since the start)\n' "$*" "$SECONDS"; }

step "dependencies"
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
[ -x "$WINE" ] || need+=(wine wine64)
command -v Xvfb >/dev/null || need+=(xvfb)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# Real compilers and GPU probes the build tests drive (clang-cl is clang in cl
# mode, lld-link comes with lld; vulkaninfo runs on Mesa's software driver).
# node, npm, git, ssh and tar are the real programs the command-escape and
# confinement tests attack and use.
for tool in clang:clang lld-link:lld llvm-lib:llvm cmake:cmake ninja:ninja-build glslc:glslc \
            glslangValidator:glslang-tools vulkaninfo:vulkan-tools node:nodejs npm:npm git:git tar:tar \
            ssh:openssh-client; do
    command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || need+=(mesa-vulkan-drivers)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -q
    # With recommends, as in the recipe verified for Wine (WINE.md).
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi
rustup target add "$WIN_TARGET" "$MSVC_TARGET" >/dev/null
PYENV="$CACHE/pyenv"
if ! "$PYENV/bin/python" -c 'import mcp' 2>/dev/null; then
    python3 -m venv "$PYENV"
    "$PYENV/bin/pip" install -q 'mcp==2.3.0'
fi
export WAMCP_TEST_PYTHON="$PYENV/bin/python"
# Under this flag a test that cannot find what it needs fails instead of skipping.
export WAMCP_TEST_STRICT=1

step "lint"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy --workspace --all-targets --locked --target "$WIN_TARGET" -- -D warnings
cargo run -q --locked -p xtask -- docs --check   # generated tables, names, links, token budget

step "MSVC target compiles"
# clang in cl mode compiles the C that build scripts build (ring), against
# stand-ins for the C runtime's headers: a check never links, so
# declarations are all it needs.
mkdir -p "$CACHE/msvc-bin"
printf '#!/bin/sh\nexec clang --driver-mode=cl "$@"\n' >"$CACHE/msvc-bin/clang-cl"
chmod +x "$CACHE/msvc-bin/clang-cl"
CC_x86_64_pc_windows_msvc="$CACHE/msvc-bin/clang-cl" AR_x86_64_pc_windows_msvc=llvm-lib \
    CFLAGS_x86_64_pc_windows_msvc="/imsvc $PWD/scripts/msvc-check/include" \
    cargo check --workspace --all-targets --locked --target "$MSVC_TARGET"

# cargo-nextest (on this kind of machine already) starts every test in its
# own process and runs the tests of all binaries side by side, so the long
# ones overlap; settings in .config/nextest.toml. It skips doc tests, which
# run apart. Without it, cargo test runs the same tests one binary at a time.
if cargo nextest --version >/dev/null 2>&1; then
    run_tests() { cargo nextest run --workspace --locked "$@"; }
    python_sdk_tests() { cargo nextest run -p wamcp --locked --test all python_sdk::; }
else
    run_tests() { cargo test --workspace --locked "$@"; }
    python_sdk_tests() { cargo test -p wamcp --locked --test all python_sdk::; }
fi

step "Linux tests"
run_tests
cargo test --workspace --locked --doc

step "Wine prefix and display"
export WINEPREFIX="$CACHE/wineprefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="   # never offer to install Mono or Gecko
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"
display=77
while [ -e "/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
export DISPLAY=":$display"
Xvfb "$DISPLAY" -screen 0 1280x1024x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
cleanup() { wineserver -k 2>/dev/null || true; kill "$xvfb_pid" 2>/dev/null || true; }
trap cleanup EXIT
if [ ! -f "$WINEPREFIX/.wamcp-ready" ]; then
    rm -rf "$WINEPREFIX"
    "$WINE" wineboot -i >/dev/null 2>&1
    x86_64-w64-mingw32-gcc -O2 -shared -o "$CACHE/bcryptprimitives.dll" \
        scripts/wine/processprng.c scripts/wine/processprng.def -ladvapi32
    cp "$CACHE/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
    # Report Windows 10 rather than the prefix's default Windows 7.
    "$WINE" winecfg /v win10 >/dev/null 2>&1
    wineserver -w
    touch "$WINEPREFIX/.wamcp-ready"
fi
# Keep one server up, so each test binary starts in ~50 ms; one may already be running.
wineserver -p 2>/dev/null || true
# The first Windows program of a server's life starts Wine's services, which
# keep its standard handles open as long as the server runs: started under
# nextest, they would hold the pipe it reads a test binary's listing from,
# and it would wait for the end of that output forever.
"$WINE" cmd /c exit </dev/null >/dev/null 2>&1

step "Windows tests under Wine"
run_tests --target "$WIN_TARGET"

step "Python SDK against the Windows binary under Wine"
exe="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/$WIN_TARGET/debug/wamcp.exe"
WAMCP_TEST_WINE_EXE="$exe" WAMCP_TEST_WINE="$WINE" python_sdk_tests

step "all green"
