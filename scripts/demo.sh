#!/usr/bin/env bash
# README command 1: set everything up, then compile the bundled example model with
# v4fc, inspect the artifact, run it with v4f-run (outputs + benchmark), and compare
# the outputs with ONNX Runtime.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${V4F_BUILD_DIR:-build}"
EX="$BUILD_DIR/examples"
PY="$ROOT/.venv/bin/python"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
banner() { printf '\n==== %s ====\n' "$*"; }
T0=$(now)

banner "setup"
scripts/setup.sh

for tool in "$BUILD_DIR/bin/v4fc" "$BUILD_DIR/bin/v4f-run"; do
  if [ ! -x "$tool" ]; then
    echo "demo: $tool was not built; see the build output above" >&2
    exit 1
  fi
done

banner "generate the example model (examples/make_example_model.py)"
"$PY" examples/make_example_model.py --out-dir "$EX"

banner "compile: v4fc compile $EX/example_cnn.onnx -o $EX/model.v4f --verbose"
t=$(now)
"$BUILD_DIR/bin/v4fc" compile "$EX/example_cnn.onnx" -o "$EX/model.v4f" --verbose
echo "compiled in $(since "$t")s -> $EX/model.v4f ($(stat -c %s "$EX/model.v4f") bytes)"

banner "inspect: v4fc inspect $EX/model.v4f"
"$BUILD_DIR/bin/v4fc" inspect "$EX/model.v4f"

banner "run: v4f-run $EX/model.v4f --input image=$EX/input.npy --output-dir $EX/out --benchmark 50"
rm -rf "$EX/out"
"$BUILD_DIR/bin/v4f-run" "$EX/model.v4f" --input "image=$EX/input.npy" \
  --output-dir "$EX/out" --benchmark 50

banner "outputs (compared with ONNX Runtime)"
"$PY" - "$EX" <<'PYEOF'
import sys, pathlib, numpy as np
ex = pathlib.Path(sys.argv[1])
np.set_printoptions(precision=4, suppress=True, linewidth=120)
for f in sorted((ex / "out").glob("*.npy")):
    y = np.load(f)
    print(f"{f.name}: shape {list(y.shape)} dtype {y.dtype}")
    print(y)
    ref = ex / "reference" / f.name
    if ref.exists():
        r = np.load(ref)
        err = float(np.abs(y.astype(np.float64) - r).max()) if y.shape == r.shape else float("inf")
        print(f"  max |v4f - onnxruntime| = {err:.3g}" + ("" if err <= 1e-4 else "  (LARGER THAN 1e-4)"))
        print(f"  argmax per row: v4f {y.argmax(-1).tolist()}  onnxruntime {r.argmax(-1).tolist()}")
PYEOF
echo
echo "demo finished in $(since "$T0")s"
