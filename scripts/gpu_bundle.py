#!/usr/bin/env python3
"""Prepares the bundle scripts/gpu-check.sh runs on a GPU machine (docs/gpu.md).

Runs HERE, on the build machine (no GPU needed): everything heavy -- ONNX models,
v4fc, NVRTC -- happens here, so the GPU machine only runs v4f-run. Writes DIR
(default gpu-check/, git-ignored):

  bin/v4f-run, lib/libv4f_runtime.so.1   the runtime-only runner (links libc/libm)
  cases/<name>/                           one per model:
      gpu.v4f [gpu-fp16.v4f]                compiled with --target=cuda (--precision=fp16)
      in/<input>.npy                        inputs
      cpu/<output>.npy                      the CPU artifact's outputs on those inputs
      case.json                             inputs, outputs, kind (e2e | node | bench)
  bench/                                  GEMM 8192^3 (fp32 / fp16) and the e2e
                                          transformer / cnn for timing

The e2e models are test/e2e/models.py's generators (not the ISA variants, and
not ResNet-50, whose 100 MB of random weights exceed what a device call may
carry); the node-suite sample is every N-th test the CPU passes (not in
test/onnx-backend/expected_failures.txt) whose inputs and outputs are plain
numpy tensors.

  .venv/bin/python scripts/gpu_bundle.py --build build [--out gpu-check] [--node-every 8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "e2e"))
sys.path.insert(0, str(ROOT / "test" / "onnx-backend"))


def sanitize(name: str) -> str:
    import re
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def run(cmd, timeout=300):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)


class Bundle:
    def __init__(self, args):
        self.build = Path(args.build).resolve()
        self.out = Path(args.out).resolve()
        self.v4fc = self.build / "bin" / "v4fc"
        self.v4frun = self.build / "bin" / "v4f-run"
        self.log = []

    def note(self, msg):
        print(msg, flush=True)
        self.log.append(msg)

    def add_case(self, name: str, kind: str, model: onnx.ModelProto, inputs: dict, flags=(), fp16=False) -> bool:
        cdir = self.out / "cases" / sanitize(name)
        if cdir.exists():
            shutil.rmtree(cdir)
        (cdir / "in").mkdir(parents=True)
        (cdir / "cpu").mkdir()
        onnx_path = cdir / "model.onnx"
        onnx.save(model, onnx_path)
        cpu = cdir / "cpu.v4f"
        r = run([self.v4fc, "compile", onnx_path, "-o", cpu, *flags])
        if r.returncode:
            self.note(f"skip {name}: the CPU compile fails ({r.stderr.strip().splitlines()[-1] if r.stderr else ''})")
            shutil.rmtree(cdir)
            return False
        variants = {"gpu": ["--target=cuda"]}
        if fp16:
            variants["gpu-fp16"] = ["--target=cuda", "--precision=fp16"]
        for v, vflags in variants.items():
            r = run([self.v4fc, "compile", onnx_path, "-o", cdir / f"{v}.v4f", "--verbose", *vflags, *flags])
            if r.returncode:
                self.note(f"FAIL {name}: the GPU compile ({' '.join(vflags)}) fails:\n{r.stderr[-2000:]}")
                shutil.rmtree(cdir)
                return False
            placement = [l for l in r.stderr.splitlines() if "placement:" in l]
            if placement:
                self.note(f"{name} [{v}]: {placement[0].split('note: ')[-1]}")
        cmd = [self.v4frun, cpu, "--output-dir", cdir / "cpu", "--threads", "2", "--print", "0"]
        for k, v in inputs.items():
            p = cdir / "in" / f"{sanitize(k)}.npy"
            np.save(p, v)
            cmd += ["--input", f"{k}={p}"]
        r = run(cmd)
        if r.returncode:
            self.note(f"skip {name}: the CPU run fails ({r.stderr.strip()[-300:]})")
            shutil.rmtree(cdir)
            return False
        outputs = [o.name for o in model.graph.output]
        (cdir / "case.json").write_text(json.dumps({
            "name": name, "kind": kind, "inputs": {k: f"in/{sanitize(k)}.npy" for k in inputs},
            "outputs": {o: f"cpu/{sanitize(o)}.npy" for o in outputs},
            "variants": list(variants)}, indent=1))
        cpu.unlink()
        onnx_path.unlink()
        return True


def e2e_cases(b: Bundle):
    import models
    fp16 = {"mlp", "cnn", "transformer", "packed_matmuls", "softmax_rows", "layer_norm_rows", "gelu_epilogue"}
    n = 0
    for name, gen in models.all_generators().items():
        if "/" in name and not name.startswith("opset_variants/"):
            continue  # CPU ISA variants of the same models
        if name == "resnet50":
            continue  # 100 MB of weights: more than a device call carries
        case = gen()
        for i, inputs in enumerate(case.input_sets[:1]):
            n += b.add_case(f"e2e_{name}", "e2e", case.model, inputs, case.compile_flags, fp16=name in fp16)
    return n


def node_cases(b: Bundle, every: int):
    import run_node_tests as rnt
    class A:
        suite_dir = None
        regenerate = False
    suite = rnt.locate_suite(A)
    expected = rnt.parse_expected(ROOT / "test" / "onnx-backend" / "expected_failures.txt")
    tests = sorted(d.name for d in suite.iterdir() if d.is_dir() and d.name not in expected)
    n = 0
    for t in tests[::every]:
        tdir = suite / t
        model = onnx.load(tdir / "model.onnx")
        data = tdir / "test_data_set_0"
        inits = {i.name for i in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        inputs = {}
        ok = True
        for j, nm in enumerate(names):
            p = data / f"input_{j}.pb"
            if not p.exists():
                ok = False
                break
            tp = onnx.TensorProto()
            try:
                tp.ParseFromString(p.read_bytes())
                arr = numpy_helper.to_array(tp)
            except Exception:  # noqa: BLE001
                ok = False
                break
            if arr.dtype.kind not in "fiub" or arr.dtype.name not in np.sctypeDict:
                ok = False
                break
            inputs[nm] = arr
        if ok:
            n += b.add_case(f"node_{t}", "node", model, inputs)
    return n


def bench_cases(b: Bundle):
    # A large GEMM whose operands are inputs (the artifact stays small; v4f-run
    # fills them with random data on the GPU machine).
    for size in (8192,):
        x = helper.make_tensor_value_info("a", TensorProto.FLOAT, [size, size])
        y = helper.make_tensor_value_info("b", TensorProto.FLOAT, [size, size])
        z = helper.make_tensor_value_info("c", TensorProto.FLOAT, [size, size])
        g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm", [x, y], [z])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        bdir = b.out / "bench"
        bdir.mkdir(parents=True, exist_ok=True)
        onnx.save(m, bdir / f"gemm{size}.onnx")
        for prec in ("fp32", "fp16"):
            r = run([b.v4fc, "compile", bdir / f"gemm{size}.onnx", "-o", bdir / f"gemm{size}-{prec}.v4f",
                     "--target=cuda", f"--precision={prec}"])
            if r.returncode:
                b.note(f"FAIL gemm{size} {prec}: {r.stderr[-500:]}")
        (bdir / f"gemm{size}.onnx").unlink()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=str(ROOT / "gpu-check"))
    ap.add_argument("--node-every", type=int, default=8, help="take every N-th passing node test")
    ap.add_argument("--no-node", action="store_true")
    args = ap.parse_args()
    b = Bundle(args)
    if b.out.exists():
        shutil.rmtree(b.out)
    (b.out / "bin").mkdir(parents=True)
    (b.out / "lib").mkdir()
    shutil.copy2(b.v4frun, b.out / "bin" / "v4f-run")
    shutil.copy2(os.path.realpath(b.build / "lib" / "libv4f_runtime.so.1"), b.out / "lib" / "libv4f_runtime.so.1")
    ne = e2e_cases(b)
    nn = 0 if args.no_node else node_cases(b, args.node_every)
    bench_cases(b)
    (b.out / "bundle.log").write_text("\n".join(b.log) + "\n")
    size = sum(f.stat().st_size for f in b.out.rglob("*") if f.is_file())
    print(f"bundle {b.out}: {ne} e2e cases, {nn} node cases, {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
