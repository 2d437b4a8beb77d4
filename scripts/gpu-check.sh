#!/usr/bin/env bash
# scripts/gpu-check.sh - the GPU check, run ON a machine with an NVIDIA GPU
# (docs/gpu.md). Builds nothing: it runs the bundle that
#   .venv/bin/python scripts/gpu_bundle.py --build build
# prepared on the build machine (gpu-check/: v4f-run, the runtime, the GPU
# artifacts, inputs and the CPU outputs), with python3 + numpy only. Bounded:
# every command has a timeout and the whole check a deadline (default 420 s).
#
#   scripts/gpu-check.sh [BUNDLE_DIR] [OUT_DIR]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="${1:-$here/../gpu-check}"
out="${2:-${OUT:-$here/../gpu-check-results}}"
mkdir -p "$out"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
chmod +x "$bundle/bin/v4f-run"
LD_LIBRARY_PATH="$bundle/lib" ldd "$bundle/bin/v4f-run" | head -8
PYTHONUNBUFFERED=1 timeout "${GPU_CHECK_TIMEOUT:-460}" python3 "$here/gpu_check.py" --bundle "$bundle" --out "$out" \
  --deadline "${GPU_CHECK_DEADLINE:-420}" ${GPU_CHECK_ONLY:+--only "$GPU_CHECK_ONLY"} \
  ${GPU_CHECK_BENCH_ONLY:+--bench-only} 2>&1 | tee "$out/gpu-check.log"
