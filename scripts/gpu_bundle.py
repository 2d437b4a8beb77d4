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
        # test/gpu/run_gpu_emulation_tests.py: also write each GPU variant's
        # CUDA C++ (<variant>.cu, v4fc --emit=cuda) and keep the model's ONNX.
        self.emit_cuda = getattr(args, "emit_cuda", False)

    def note(self, msg):
        print(msg, flush=True)
        self.log.append(msg)

    def add_case(self, name: str, kind: str, model: onnx.ModelProto, inputs: dict, flags=(), fp16=False,
                 compress=False, expect_matmul=False, mixed=False, tf32=False) -> bool:
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
        if tf32:
            variants["gpu-tf32"] = ["--target=cuda", "--precision=tf32"]
        if mixed:
            # The cost model's placement: small dispatches stay on the CPU, with copies between.
            variants["gpu-mixed"] = ["--target=cpu,cuda"]
        for v, vflags in variants.items():
            r = run([self.v4fc, "compile", onnx_path, "-o", cdir / f"{v}.v4f", "--verbose", *vflags, *flags])
            if r.returncode:
                self.note(f"FAIL {name}: the GPU compile ({' '.join(vflags)}) fails:\n{r.stderr[-2000:]}")
                shutil.rmtree(cdir)
                return False
            if self.emit_cuda:
                r2 = run([self.v4fc, "compile", onnx_path, "-o", cdir / f"{v}.cu", "--emit=cuda", *vflags, *flags])
                if r2.returncode:
                    self.note(f"FAIL {name}: --emit=cuda ({' '.join(vflags)}) fails:\n{r2.stderr[-2000:]}")
                    shutil.rmtree(cdir)
                    return False
            placement = [l for l in r.stderr.splitlines() if "placement:" in l]
            if placement:
                self.note(f"{name} [{v}]: {placement[0].split('note: ')[-1]}")
                if v == "gpu-mixed" and " 0 of " in placement[0]:
                    # The cost model kept everything on the CPU: nothing to check on the GPU.
                    (cdir / f"{v}.v4f").unlink()
                    if self.emit_cuda:
                        (cdir / f"{v}.cu").unlink()
                    del variants[v]
                    break
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
        if compress:
            # Large artifacts travel xz-compressed (their weights are periodic, see heavy_cases).
            import lzma
            for v in variants:
                art = cdir / f"{v}.v4f"
                (cdir / f"{v}.v4f.xz").write_bytes(lzma.compress(art.read_bytes(), preset=1))
                art.unlink()
        if expect_matmul:
            for o in outputs:
                (cdir / "cpu" / f"{sanitize(o)}.npy").unlink()
        (cdir / "case.json").write_text(json.dumps({
            "name": name, "kind": kind, "inputs": {k: f"in/{sanitize(k)}.npy" for k in inputs},
            "outputs": {o: f"cpu/{sanitize(o)}.npy" for o in outputs},
            "variants": list(variants), "compressed": compress, "expect_matmul": expect_matmul}, indent=1))
        cpu.unlink()
        onnx_path.unlink()
        return True


def e2e_cases(b: Bundle):
    import models
    fp16 = {"mlp", "cnn", "transformer", "fused_attention", "sdpa_attention", "packed_matmuls", "softmax_rows",
            "layer_norm_rows", "gelu_epilogue", "packed_convs", "conv_packed_b", "im2col_rows", "depthwise_convs",
            "pinned_batch", "pinned_shape"}
    # FP32 models on TF32 tensor cores: products and convolutions.
    tf32 = {"mlp", "cnn", "transformer", "packed_matmuls", "im2col_rows"}
    n = 0
    for name, gen in models.all_generators().items():
        if "/" in name and not name.startswith("opset_variants/"):
            continue  # CPU ISA variants of the same models
        if name == "resnet50":
            continue  # 100 MB of weights: more than a device call carries
        case = gen()
        for i, inputs in enumerate(case.input_sets[:1]):
            n += b.add_case(f"e2e_{name}", "e2e", case.model, inputs, case.compile_flags, fp16=name in fp16,
                            mixed=name in fp16, tf32=name in tf32)
    return n


def node_cases(b: Bundle, every: int):
    import run_node_tests as rnt
    suite, tests = rnt.passing_tests()
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


def gemm_cases(b: Bundle):
    """Matrix products at the tile edges: the 128x128 tensor-core kernel
    (over two waves of tiles) with ragged M, N, K, and a batched product."""
    rng = np.random.default_rng(7)
    n = 0
    for name, (a_shape, b_shape) in {"gemm_big_ragged": ((1100, 40), (40, 3900)),
                                     "gemm_batched": ((4, 130, 72), (72, 200))}.items():
        out = list(a_shape[:-1]) + [b_shape[-1]]
        x = helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a_shape))
        y = helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b_shape))
        z = helper.make_tensor_value_info("c", TensorProto.FLOAT, out)
        m = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], name, [x, y], [z]),
                              opset_imports=[helper.make_opsetid("", 17)])
        # Small integers: every product and sum is exact in FP16 x FP16 -> FP32,
        # TF32 x TF32 -> FP32 and in FP32, so the GPU machine recomputes the expected output with
        # numpy (a 17 MB output need not travel).
        inputs = {"a": rng.integers(0, 4, a_shape).astype(np.float32), "b": rng.integers(0, 4, b_shape).astype(np.float32)}
        n += b.add_case(f"e2e_{name}", "e2e", m, inputs, fp16=True, expect_matmul=True, tf32=True)
    return n


def periodic_weights(model: onnx.ModelProto, period: int = 1021) -> onnx.ModelProto:
    """Every large float initializer made periodic (its first `period` values
    repeated): statistically like the random original, but the artifact
    compresses to a few MB, so ResNet-50 and BERT-base fit a device call."""
    for init in model.graph.initializer:
        arr = numpy_helper.to_array(init)
        if arr.dtype == np.float32 and arr.size > 4 * period:
            flat = np.resize(arr.ravel()[:period], arr.size).reshape(arr.shape)
            init.CopyFrom(numpy_helper.from_array(flat.astype(np.float32), init.name))
        elif arr.dtype == np.float32 and arr.ndim == 1 and arr.size > 1:
            # Per-channel vectors (BatchNorm, biases) become their mean: BN folding
            # then scales every output channel alike and the weights stay periodic.
            init.CopyFrom(numpy_helper.from_array(np.full(arr.shape, arr.mean(), np.float32), init.name))
    return model


def heavy_cases(b: Bundle):
    """ResNet-50 (batch 1, 224x224) and BERT-base (sequence 128): the latency
    targets of docs/gpu.md, compared with the CPU and timed on the GPU."""
    import models
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_models
    n = 0
    for name, case in (("resnet50", models.make_resnet50()), ("bert_base_s128", bench_models.bert_base(128))):
        n += b.add_case(f"heavy_{name}", "heavy", periodic_weights(case.model), case.input_sets[0],
                        list(case.compile_flags), fp16=True, compress=True)
    return n


def real_cases(b: Bundle):
    """The exported models of test/models with their dims fixed to the first
    shape of models.json (--input-shape): regions the GPU covers run there,
    the rest (Resize, shape arithmetic ...) on the CPU, with copies between."""
    spec = json.loads((ROOT / "test" / "models" / "models.json").read_text())
    rng = np.random.default_rng(11)
    n = 0
    for name, entry in spec.items():
        if "values" in entry or "fold" in entry:
            continue
        model = onnx.load(ROOT / "test" / "models" / entry["file"])
        shapes = entry["shapes"][0]
        flags, inputs = [], {}
        elem = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
        for k, dims in shapes.items():
            flags += ["--input-shape", f"{k}={','.join(map(str, dims))}"]
            if elem.get(k) == TensorProto.INT64:
                inputs[k] = rng.integers(0, 50, dims).astype(np.int64)
            elif elem.get(k) == TensorProto.INT32:
                inputs[k] = rng.integers(0, 50, dims).astype(np.int32)
            else:
                inputs[k] = rng.standard_normal(dims).astype(np.float32)
        if "attention_mask" in inputs:
            inputs["attention_mask"] = np.ones_like(inputs["attention_mask"])
        # resnet_tiny_dynamo is resnet_tiny from the other exporter: FP32 only (the carry limit).
        dup = name == "resnet_tiny_dynamo"
        n += b.add_case(f"real_{name}", "real", model, inputs, flags, fp16=not dup, mixed=not dup)
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
        for prec in ("fp32", "fp16", "tf32"):
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
    ap.add_argument("--max-case-mib", type=float, default=6.0,
                    help="leave out cases larger than this (a device call carries 64 MiB in all; the emulator "
                         "test runs them on the CPU)")
    args = ap.parse_args()
    b = Bundle(args)
    if b.out.exists():
        shutil.rmtree(b.out)
    (b.out / "bin").mkdir(parents=True)
    (b.out / "lib").mkdir()
    shutil.copy2(b.v4frun, b.out / "bin" / "v4f-run")
    shutil.copy2(os.path.realpath(b.build / "lib" / "libv4f_runtime.so.1"), b.out / "lib" / "libv4f_runtime.so.1")
    # libsodium (the runtime opens it for signatures, decryption and the BLAKE2b
    # digests of 5.0-5.1 artifacts; BLAKE3 is linked in) may be missing on the GPU machine.
    import glob
    sodium = sorted(glob.glob("/usr/lib/*/libsodium.so.2*") + glob.glob("/usr/lib/libsodium.so.2*"))
    if sodium:
        for name in ("libsodium.so", "libsodium.so.23"):
            shutil.copyfile(os.path.realpath(sodium[0]), b.out / "lib" / name)
    ne = e2e_cases(b) + gemm_cases(b) + real_cases(b) + heavy_cases(b)
    nn = 0 if args.no_node else node_cases(b, args.node_every)
    bench_cases(b)
    for cdir in sorted((b.out / "cases").iterdir()):
        mib = sum(f.stat().st_size for f in cdir.rglob("*") if f.is_file()) / 2**20
        if mib > args.max_case_mib and not cdir.name.startswith("heavy_"):
            b.note(f"left out {cdir.name}: {mib:.1f} MiB (--max-case-mib {args.max_case_mib})")
            shutil.rmtree(cdir)
            ne -= cdir.name.startswith(("e2e_", "real_"))
            nn -= cdir.name.startswith("node_")
    (b.out / "bundle.log").write_text("\n".join(b.log) + "\n")
    size = sum(f.stat().st_size for f in b.out.rglob("*") if f.is_file())
    print(f"bundle {b.out}: {ne} e2e cases, {nn} node cases, {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
