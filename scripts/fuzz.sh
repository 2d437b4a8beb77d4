#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with ASan + UBSan in build-fuzz/ and
# runs one for a bounded time:
#   scripts/fuzz.sh TARGET SECONDS      TARGET: artifact | npy | all
# Seeds come from the main build (build/bin/v4fc compiles the lit test models
# for the baseline x86-64 CPU) and from numpy (.npy files of every dtype); the
# working corpus stays in build-fuzz/corpus/TARGET between runs. A crash
# leaves its input in build-fuzz/crashes/TARGET/ and makes the script fail:
# turn it into a regression test (docs/testing.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${1:?usage: scripts/fuzz.sh artifact|npy|all SECONDS}"
SECONDS_PER_TARGET="${2:?usage: scripts/fuzz.sh artifact|npy|all SECONDS}"
FUZZ_BUILD="${V4F_FUZZ_BUILD_DIR:-build-fuzz}"
MAIN_BUILD="${V4F_BUILD_DIR:-build}"
PY="$ROOT/.venv/bin/python"

if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$FUZZ_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DV4F_BUILD_COMPILER=OFF -DV4F_BUILD_TESTS=OFF -DV4F_BUILD_SERVER=OFF \
    -DV4F_BUILD_FUZZERS=ON -DV4F_ENABLE_SANITIZERS=ON > /dev/null
fi
ninja -C "$FUZZ_BUILD" fuzz_artifact fuzz_npy > /dev/null

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

run() {
  local t="$1"
  local exe="$FUZZ_BUILD/fuzz/fuzz_$t"
  [ -x "$exe" ] || exe="$FUZZ_BUILD/bin/fuzz_$t"
  mkdir -p "$FUZZ_BUILD/crashes/$t"
  "seed_$t"
  echo "[fuzz] $t for ${SECONDS_PER_TARGET}s (corpus $FUZZ_BUILD/corpus/$t: $(ls "$FUZZ_BUILD/corpus/$t" | wc -l) files)"
  # allocator_may_return_null and a high malloc limit: an allocation too
  # large for the machine fails as it would under the real allocator (the
  # code must turn that into an error), instead of ASan/libFuzzer aborting.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$exe" "$FUZZ_BUILD/corpus/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=4096 \
    -malloc_limit_mb=100000000 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/crashes/$t/" 2>&1 |
    grep -E "^#[0-9]+ *(DONE|pulse)|stat::|ERROR|SUMMARY|crash-|timeout-|oom-|Test unit written" | tail -12
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "[fuzz] $t FAILED (exit $rc): inputs in $FUZZ_BUILD/crashes/$t/" >&2
    return 1
  fi
}

case "$TARGET" in
  all) run artifact && run npy ;;
  artifact|npy) run "$TARGET" ;;
  *) echo "unknown target '$TARGET' (artifact, npy, all)" >&2; exit 2 ;;
esac
