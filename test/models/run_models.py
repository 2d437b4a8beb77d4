#!/usr/bin/env python3
"""The real-model test set: each exported model compiled ONCE, run at every
input shape of models.json, compared with ONNX Runtime (rtol 1e-3, atol 1e-4).

  run_models.py --build build [-k NAME]

Models that v4f cannot compile or run yet are listed in expected_failures.txt
with the reason; a listed model that now passes fails the run (so the list
only shrinks), an unlisted failure fails it, and every listed name must exist.
Inputs: float inputs standard normal, integer inputs in [0, 100), attention
masks all ones; seeded per model and shape.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

HERE = Path(__file__).resolve().parent
RTOL, ATOL = 1e-3, 1e-4


def make_inputs(model: onnx.ModelProto, shapes: dict, seed: int, values: dict) -> dict:
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        shape = shapes[vi.name]
        if vi.name in values:
            out[vi.name] = np.array(values[vi.name], dtype).reshape(shape)
        elif "mask" in vi.name:
            out[vi.name] = np.ones(shape, dtype)
        elif np.issubdtype(dtype, np.integer):
            out[vi.name] = rng.integers(0, 100, size=shape).astype(dtype)
        else:
            out[vi.name] = rng.standard_normal(shape).astype(dtype)
    return out


def run_model(name: str, spec: dict, build: Path, work: Path) -> tuple[bool, str]:
    path = HERE / spec["file"]
    model = onnx.load(str(path))
    artifact = work / f"{name}.v4f"
    # "compile_flags": extra v4fc flags (e.g. --input-shape fixing every dim).
    flags = list(spec.get("compile_flags", []))
    # "fold": inputs folded to constants at compile time (v4fc --input-value).
    fold = spec.get("fold", {})
    dtypes = {vi.name: onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type) for vi in model.graph.input}
    for k, v in fold.items():
        f = work / f"{name}-fold-{k}.npy"
        np.save(f, np.array(v, dtypes[k]))
        flags += ["--input-value", f"{k}={f}"]
    p = subprocess.run([str(build / "bin" / "v4fc"), "compile", str(path), "-o", str(artifact)] + flags,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return False, "compile: " + " | ".join(p.stderr.strip().splitlines()[:3])[:600]
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outs = [o.name for o in sess.get_outputs()]
    notes = []
    for i, shapes in enumerate(spec["shapes"]):
        values = {k: v[i] for k, v in spec.get("values", {}).items()}
        values.update(fold)
        inputs = make_inputs(model, shapes, seed=1000 + i, values=values)
        ref = dict(zip(outs, sess.run(None, inputs)))
        scale = max(float(np.max(np.abs(r))) if r.size else 0.0 for r in ref.values())
        if not np.isfinite(scale) or scale < 1e-3:
            return False, f"shape set {i}: ONNX Runtime's outputs are {scale:.3g} at most: a comparison could not fail"
        d = work / f"{name}-{i}"
        d.mkdir()
        cmd = [str(build / "bin" / "v4f-run"), str(artifact), "--output-dir", str(d / "out"), "--threads", "2"]
        for j, (k, v) in enumerate(inputs.items()):
            if k in fold:
                continue
            np.save(d / f"in{j}.npy", v)
            cmd += ["--input", f"{k}={d / f'in{j}.npy'}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        tag = "shape " + ",".join(f"{k}{list(v.shape)}" for k, v in inputs.items() if k not in fold)
        if r.returncode != 0:
            return False, f"{tag}: run: " + (r.stderr.strip().splitlines() or ["(no output)"])[-1][:400]
        for k in outs:
            f = d / "out" / (''.join(c if c.isalnum() or c in "._-" else "_" for c in k) + ".npy")
            if not f.exists():
                return False, f"{tag}: output {k!r} not written"
            got = np.load(f)
            if got.shape != ref[k].shape:
                return False, f"{tag}: output {k!r} shape {list(got.shape)} vs ORT {list(ref[k].shape)}"
            err = float(np.max(np.abs(got.astype(np.float64) - ref[k]))) if got.size else 0.0
            if not np.allclose(got, ref[k], rtol=RTOL, atol=ATOL):
                return False, f"{tag}: output {k!r} max |err| {err:.3g} exceeds rtol {RTOL} atol {ATOL}"
            notes.append(f"{k}@{i} {err:.2g} (|ref| <= {float(np.max(np.abs(ref[k]))):.3g})")
    return True, "; ".join(notes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", "--filter", action="append", default=[])
    args = ap.parse_args()
    manifest = json.loads((HERE / "models.json").read_text())
    expected = {}
    for line in (HERE / "expected_failures.txt").read_text().splitlines():
        line = line.split("#", 1)
        name = line[0].strip()
        if name:
            expected[name] = line[1].strip() if len(line) > 1 else ""
    bad = [n for n in expected if n not in manifest]
    if bad:
        print(f"expected_failures.txt names models that do not exist: {bad}")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix="v4f-models-") as tmp:
        for name, spec in manifest.items():
            if args.filter and not any(f in name for f in args.filter):
                continue
            ok, why = run_model(name, spec, Path(args.build), Path(tmp))
            if ok and name in expected:
                print(f"XPASS {name}: passes now; remove it from expected_failures.txt ({why})")
                failed += 1
            elif ok:
                print(f"PASS  {name} [{spec['exporter']}]: max |err| {why}")
            elif name in expected:
                print(f"XFAIL {name}: {why}")
            else:
                print(f"FAIL  {name} [{spec['exporter']}]: {why}")
                failed += 1
    print(f"models: {'FAILED' if failed else 'ok'} ({failed} unexpected)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
