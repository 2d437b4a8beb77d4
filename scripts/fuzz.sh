#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with ASan + UBSan in build-fuzz/ and
# runs one for a bounded time:
#   scripts/fuzz.sh TARGET SECONDS      TARGET: artifact | npy | shape | onnx | all
#   scripts/fuzz.sh prepare             build (or find in the cache) every target and
#                                       seed the corpora, no fuzzing (scripts/test.sh
#                                       does this while other phases run)
# (V4F_FUZZ_FORK=N runs N libFuzzer jobs side by side, for long runs.)
# The instrumented binaries are kept outside the checkout, in
# ${V4F_CACHE_DIR:-~/.cache/v4f}/fuzz/KEY/, where KEY hashes every input of
# their build: the contents of the sources and CMake files (CMakeLists.txt,
# cmake/, include/, lib/, runtime/, tools/, fuzz/, examples/), the configure
# flags below, and the versions of the compiler, LLVM/MLIR and the other
# libraries. A checkout whose inputs hash the same (a fresh CI clone of a
# commit that changed no source) runs them without configuring or building;
# otherwise they are built in build-fuzz/ (incremental, ccache-served) and
# stored under their key (the 3 newest keys are kept). V4F_FUZZ_REBUILD=1
# always builds.
# Seeds come from the main build (build/bin/v4fc compiles the lit test models
# for the baseline x86-64 CPU), from numpy (.npy files of every dtype), from
# the lit tests' textual ONNX models and a sample of the ONNX node suite's
# models (onnx), and from nothing (shape: structure-aware, any bytes are a
# program); the working corpus stays in build-fuzz/corpus/TARGET between runs. A crash
# leaves its input in build-fuzz/crashes/TARGET/ and makes the script fail:
# turn it into a regression test (docs/testing.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
USAGE="usage: scripts/fuzz.sh artifact|npy|shape|onnx|all SECONDS | scripts/fuzz.sh prepare"
TARGET="${1:?$USAGE}"
if [ "$TARGET" = prepare ]; then SECONDS_PER_TARGET=0; else SECONDS_PER_TARGET="${2:?$USAGE}"; fi
FUZZ_BUILD="${V4F_FUZZ_BUILD_DIR:-build-fuzz}"
MAIN_BUILD="${V4F_BUILD_DIR:-build}"
CACHE_ROOT="${V4F_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/v4f}/fuzz"
PY="$ROOT/.venv/bin/python"
ALL_TARGETS=(artifact npy shape onnx)

case "$TARGET" in
  all|prepare) TARGETS=("${ALL_TARGETS[@]}") ;;
  artifact|npy|shape|onnx) TARGETS=("$TARGET") ;;
  *) echo "unknown target '$TARGET' (artifact, npy, shape, onnx, all, prepare)" >&2; exit 2 ;;
esac

# The compiler libraries are built too (instrumented) for the onnx target.
CMAKE_FLAGS=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
  -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
  -DV4F_BUILD_COMPILER=ON -DV4F_BUILD_TESTS=OFF -DV4F_BUILD_SERVER=OFF
  -DV4F_BUILD_FUZZERS=ON -DV4F_ENABLE_SANITIZERS=ON)

# The cache key: what the build reads, by content (paths relative to the root).
build_key() {
  {
    printf '%s\n' "${CMAKE_FLAGS[@]}"
    clang++-19 --version 2>&1 | head -1
    cmake --version 2>&1 | head -1
    dpkg-query -W -f='${Package} ${Version}\n' clang-19 libclang-rt-19-dev llvm-19-dev libmlir-19-dev \
      libonnx-dev libprotobuf-dev libflatbuffers-dev flatbuffers-compiler libsodium-dev librust-blake3-dev \
      zlib1g-dev libzstd-dev 2>/dev/null || true
    local paths=(CMakeLists.txt cmake include lib runtime tools fuzz examples)
    if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
      git ls-files -z --cached --others --exclude-standard -- "${paths[@]}"
    else
      find "${paths[@]}" -type f -print0 2>/dev/null
    fi | LC_ALL=C sort -z | { xargs -0 -r sha256sum 2> /dev/null || true; }  # (a deleted file: left out)
  } | sha256sum | cut -c1-24
}
KEY=$(build_key)
CACHE="$CACHE_ROOT/$KEY"

have_cached() { local t; for t in "$@"; do [ -x "$CACHE/fuzz_$t" ] || return 1; done; }

EXE_DIR="$CACHE"
if [ "${V4F_FUZZ_REBUILD:-0}" = 1 ] || ! have_cached "${TARGETS[@]}"; then
  echo "[fuzz] building ${TARGETS[*]} in $FUZZ_BUILD/ (no cached build for key $KEY)"
  if [ ! -f "$FUZZ_BUILD/build.ninja" ] || ! grep -q "V4F_BUILD_COMPILER:BOOL=ON" "$FUZZ_BUILD/CMakeCache.txt"; then
    cmake -S . -B "$FUZZ_BUILD" "${CMAKE_FLAGS[@]}" > /dev/null
  fi
  ninja -C "$FUZZ_BUILD" "${TARGETS[@]/#/fuzz_}" > /dev/null
  EXE_DIR="$FUZZ_BUILD/fuzz"
  [ -x "$EXE_DIR/fuzz_${TARGETS[0]}" ] || EXE_DIR="$FUZZ_BUILD/bin"
  if [ "$(build_key)" = "$KEY" ]; then
    # Stored atomically (a copy, then a rename), so a run never sees half a binary.
    mkdir -p "$CACHE"
    for t in "${TARGETS[@]}"; do
      cp "$EXE_DIR/fuzz_$t" "$CACHE/.fuzz_$t.$$" && mv -f "$CACHE/.fuzz_$t.$$" "$CACHE/fuzz_$t"
    done
    touch "$CACHE"
    # Keep the 3 newest keys.
    ls -1dt "$CACHE_ROOT"/*/ 2> /dev/null | tail -n +4 | xargs -r rm -rf
  else
    echo "[fuzz] the sources changed during the build: not cached"
  fi
else
  echo "[fuzz] instrumented ${TARGETS[*]} from the cache ($CACHE: same sources, flags and toolchain)"
  touch "$CACHE"
fi

seed_artifact() {
  local dir="$FUZZ_BUILD/corpus/artifact"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  if [ -x "$MAIN_BUILD/bin/v4fc" ] && [ -x "$PY" ]; then
    local tmp; tmp=$(mktemp -d)
    for m in test/Codegen/kernel-abi.onnxtxt test/Codegen/signing.onnxtxt test/Codegen/arena-peak.onnxtxt; do
      [ -f "$m" ] || continue
      "$PY" test/tools/onnx_from_text.py "$m" "$tmp/m.onnx" && \
        "$MAIN_BUILD/bin/v4fc" compile "$tmp/m.onnx" -o "$dir/$(basename "$m" .onnxtxt).v4f" --target-cpu x86-64 || true
    done
    rm -rf "$tmp"
  fi
}

seed_npy() {
  local dir="$FUZZ_BUILD/corpus/npy"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  [ -x "$PY" ] || return 0
  "$PY" - "$dir" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
for i, (dt, shape) in enumerate([("float32", (2, 3)), ("int64", (4,)), ("uint8", (1, 2, 2)), ("bool", (3,)),
                                  ("float16", (2, 2)), ("float64", ()), ("int32", (0, 5)), (">f4", (2,))]):
    np.save(f"{d}/seed{i}.npy", np.arange(int(np.prod(shape))).astype(dt).reshape(shape))
PYEOF
}

seed_shape() {
  mkdir -p "$FUZZ_BUILD/corpus/shape"
}

# The lit tests' textual models, and every 10th model of the ONNX node suite
# (test/onnx-backend generates it; all of them with V4F_FUZZ_ALL_NODE_MODELS=1).
seed_onnx() {
  local dir="$FUZZ_BUILD/corpus/onnx"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  [ -x "$PY" ] || return 0
  local m
  for m in test/Codegen/*.onnxtxt test/Import/*.onnxtxt; do
    "$PY" test/tools/onnx_from_text.py "$m" "$dir/$(basename "$m" .onnxtxt).onnx" 2> /dev/null || true
  done
  local i=0 every=10
  [ "${V4F_FUZZ_ALL_NODE_MODELS:-0}" = 1 ] && every=1
  for m in test/onnx-backend/.node-data-onnx-*/*/model.onnx; do
    [ -f "$m" ] || continue
    if [ $((i % every)) -eq 0 ]; then cp "$m" "$dir/node-$(basename "$(dirname "$m")").onnx"; fi
    i=$((i + 1))
  done
}

run() {
  local t="$1"
  local exe="$EXE_DIR/fuzz_$t"
  mkdir -p "$FUZZ_BUILD/crashes/$t"
  "seed_$t"
  echo "[fuzz] $t for ${SECONDS_PER_TARGET}s (corpus $FUZZ_BUILD/corpus/$t: $(ls "$FUZZ_BUILD/corpus/$t" | wc -l) files)"
  local fork=()
  [ -n "${V4F_FUZZ_FORK:-}" ] && fork=(-fork="$V4F_FUZZ_FORK" -ignore_crashes=0)
  # allocator_may_return_null and a high malloc limit: an allocation too
  # large for the machine fails as it would under the real allocator (the
  # code must turn that into an error), instead of ASan/libFuzzer aborting.
  # onnx: allow_user_poisoning=0, because LLVM's BumpPtrAllocator, inlined
  # into our instrumented code, poisons slabs that the uninstrumented
  # libMLIR then allocates from without unpoisoning (a false
  # use-after-poison in MLIR's attribute uniquer); ASan's own checks stay on.
  local asan=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1
  [ "$t" = onnx ] && asan="$asan:allow_user_poisoning=0"
  ASAN_OPTIONS="$asan" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$exe" "$FUZZ_BUILD/corpus/$t" "${fork[@]}" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 \
    -rss_limit_mb=4096 -malloc_limit_mb=100000000 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/crashes/$t/" 2>&1 |
    grep -E "^#[0-9]+[[:space:]]*(DONE|pulse|INITED)|stat::|ERROR|SUMMARY|crash-|timeout-|oom-|Test unit written|INFO: fuzzed for" | tail -12
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "[fuzz] $t FAILED (exit $rc): inputs in $FUZZ_BUILD/crashes/$t/" >&2
    return 1
  fi
}

case "$TARGET" in
  prepare) for t in "${ALL_TARGETS[@]}"; do "seed_$t"; mkdir -p "$FUZZ_BUILD/crashes/$t"; done
           echo "[fuzz] corpora seeded in $FUZZ_BUILD/corpus: $(for t in "${ALL_TARGETS[@]}"; do
             printf '%s %s  ' "$t" "$(ls "$FUZZ_BUILD/corpus/$t" | wc -l)"; done)" ;;
  all) run artifact && run npy && run shape && run onnx ;;
  artifact|npy|shape|onnx) run "$TARGET" ;;
esac
