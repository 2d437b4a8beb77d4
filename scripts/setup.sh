#!/usr/bin/env bash
# Sets up everything v4f needs on a fresh Debian/Ubuntu machine, idempotently:
#   1. system packages (apt-get, only those missing)
#   2. the Python venv at .venv/ with the pinned scripts/requirements.txt
#      (reinstalled only when that file changes)
#   3. the CMake/Ninja build in build/ (configured only when needed)
# Fast when everything is already there.
#
# Environment knobs:
#   V4F_BUILD_DIR=build        build directory
#   V4F_SKIP_APT=1             don't check/install system packages
#   V4F_SKIP_VENV=1            don't touch the Python venv
#   V4F_SKIP_BUILD=1           don't configure/build
#   V4F_CMAKE_ARGS="..."       extra arguments for the CMake configure step
#   V4F_JOBS=N                 parallel build jobs (default: nproc)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD_DIR="${V4F_BUILD_DIR:-build}"
VENV="$ROOT/.venv"
REQS="$ROOT/scripts/requirements.txt"
JOBS="${V4F_JOBS:-$(nproc)}"

APT_PACKAGES=(
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools clang-19 lld-19 liblld-19-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libcli11-dev
  libflatbuffers-dev flatbuffers-compiler libgtest-dev
  ccache ninja-build cmake zlib1g-dev libzstd-dev binutils
  libcpp-httplib-dev nlohmann-json3-dev libssl-dev pkg-config libsodium-dev
  libclang-rt-19-dev
  # BLAKE3's C sources (the artifact digest; cmake/Blake3.cmake): Debian ships
  # them in the Rust crate's source package (no Rust toolchain is installed).
  librust-blake3-dev
)

now() { date +%s.%N; }
T_START=$(now)
declare -a PHASES=()
phase_done() { # name start
  local dt
  dt=$(awk -v a="$2" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')
  PHASES+=("$1: ${dt}s")
  echo "[setup] $1 done in ${dt}s"
}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# ---------------------------------------------------------------- 1. apt
if [ "${V4F_SKIP_APT:-0}" != "1" ]; then
  t=$(now)
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  # python3-venv is needed for `python3 -m venv` on Debian (ensurepip).
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=("python3-venv")
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "[setup] installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "[setup] system packages: all present"
  fi
  phase_done "apt" "$t"
fi

# ---------------------------------------------------------------- 2. venv
if [ "${V4F_SKIP_VENV:-0}" != "1" ]; then
  t=$(now)
  STAMP="$VENV/.requirements.sha256"
  want_hash=$( (sha256sum "$REQS"; python3 --version) | sha256sum | cut -d' ' -f1)
  if [ ! -x "$VENV/bin/python" ]; then
    echo "[setup] creating venv at .venv/ ($(python3 --version))"
    python3 -m venv "$VENV"
  fi
  have_hash=$(cat "$STAMP" 2>/dev/null || true)
  if [ "$want_hash" != "$have_hash" ]; then
    echo "[setup] installing pinned Python packages from scripts/requirements.txt"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS"
    echo "$want_hash" > "$STAMP"
  else
    echo "[setup] Python venv: up to date"
  fi
  phase_done "venv" "$t"
fi

# ---------------------------------------------------------------- 3. build
if [ "${V4F_SKIP_BUILD:-0}" != "1" ]; then
  t=$(now)
  CC_BIN="$(command -v clang-19 || echo /usr/lib/llvm-19/bin/clang)"
  CXX_BIN="$(command -v clang++-19 || echo /usr/lib/llvm-19/bin/clang++)"
  CMAKE_ARGS=(
    -G Ninja
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_C_COMPILER="$CC_BIN"
    -DCMAKE_CXX_COMPILER="$CXX_BIN"
    -DCMAKE_C_COMPILER_LAUNCHER=ccache
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
    -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm
    # Hints for the lit test suite (used when test/CMakeLists.txt registers it).
    -DPython3_EXECUTABLE="$VENV/bin/python"
    -DLLVM_EXTERNAL_LIT="$VENV/bin/lit"
    --no-warn-unused-cli
  )
  # shellcheck disable=SC2206
  [ -n "${V4F_CMAKE_ARGS:-}" ] && CMAKE_ARGS+=(${V4F_CMAKE_ARGS})
  # Reconfigure only when the build dir is missing/unconfigured or the args changed
  # (Ninja itself re-runs CMake when a CMakeLists.txt changes).
  ARGS_STAMP="$BUILD_DIR/.v4f-configure-args"
  args_now=$(printf '%s\n' "${CMAKE_ARGS[@]}")
  if [ ! -f "$BUILD_DIR/build.ninja" ] || [ ! -f "$BUILD_DIR/CMakeCache.txt" ] \
     || [ "$(cat "$ARGS_STAMP" 2>/dev/null || true)" != "$args_now" ]; then
    echo "[setup] configuring $BUILD_DIR/"
    mkdir -p "$BUILD_DIR"
    cmake -S "$ROOT" -B "$BUILD_DIR" "${CMAKE_ARGS[@]}"
    printf '%s\n' "$args_now" > "$ARGS_STAMP"
  else
    echo "[setup] $BUILD_DIR/ already configured"
  fi
  phase_done "configure" "$t"
  t=$(now)
  echo "[setup] building (ninja -j$JOBS)"
  ninja -C "$BUILD_DIR" -j "$JOBS"
  phase_done "build" "$t"
fi

total=$(awk -v a="$T_START" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')
echo "[setup] phases: ${PHASES[*]:-none}; total ${total}s"
