#!/usr/bin/env python3
"""GPU kernels checked numerically without a GPU: the CUDA C++ v4fc generates
for the e2e models, the GEMM edge cases and a sample of the ONNX node suite
runs on the host CPU under an emulator, and every output must match the CPU
artifact's within the tolerances the device check uses (scripts/gpu_check.py:
1e-4 FP32, 1e-2 FP16 for the e2e cases; the node suite's per-dtype ones).

How (test/gpu/emulator/): scripts/gpu_bundle.py builds the cases (GPU
artifacts with --target=cuda, --precision=fp16 and the cost model's
--target=cpu,cuda, the CPU artifact's outputs) and, with emit_cuda, each GPU
variant's CUDA C++; that source is compiled as host C++ with cuda_emulator.h
(one fiber per CUDA thread, blocks in order; fake <cuda_fp16.h>, <cuda_bf16.h>,
<mma.h>) and v4f-run runs the artifact with --device cuda on
libv4f_fake_cuda.so (V4F_CUDA_DRIVER), a host stand-in for the CUDA driver:
the real runtime's CUDA path (module and function loading, device arena,
host<->device copies at placement borders, CUDA Graph capture and replay,
the error word) runs unchanged.

What this cannot show: speed, and hardware behaviour the emulator does not
model (cuda_emulator.h lists it). scripts/gpu-check.sh on a GPU remains the
check of both.

Which cases: every e2e model (not the CPU ISA variants, not ResNet-50), the
GEMM edge cases, and of the ONNX node suite by default a deterministic sample
(node_sample.py: with a fixed seed, a cover of every (op type, float32 or
not) of the tests the CPU passes whose inputs are plain numpy tensors, about
a tenth of them, so every op's float32 GPU kernel runs); --all takes every
passing node test, --node-every N every N-th, --seed S another cover; -k
REGEX filters the case names ("e2e_NAME", "node_test_NAME") after that choice
(-k with --all: every matching case); --op OP_TYPE takes the e2e models and
every passing node test with that op. Cases are built (v4fc) and emulated
side by side on -j workers.

Without NVRTC (no CUDA toolkit: no GPU artifacts can be built) or without a
C++ compiler with _Float16 (clang++ >= 15), the test is skipped with the
reason (exit 0).

  .venv/bin/python test/gpu/run_gpu_emulation_tests.py --build build [-j 2] [--all | --node-every N | --seed S] [-k REGEX] [--op OP_TYPE]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
EMU = ROOT / "test" / "gpu" / "emulator"
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))

import gpu_bundle  # noqa: E402
from gpu_check import check_outputs, low_precision  # noqa: E402
from run_gpu_codegen_tests import nvrtc_available  # noqa: E402


def find_cxx():
    for c in ("clang++-19", "clang++"):
        p = shutil.which(c)
        if p:
            return p
    return None


def compile_kernels(cxx: str, source: Path, out: Path):
    """The generated CUDA C++ as a host shared object under the emulator.

    Compiled through ccache when it is installed (V4F_EMULATOR_CCACHE=0: not),
    from the case's folder with a relative source name so that the same
    generated source compiles once across runs and cases: ccache reuses an
    object only for a byte-identical source, the same emulator headers and
    flags and the same compiler, so what runs is what this compile would give."""
    # -ffp-contract=fast with FMA: NVRTC contracts a*b+c into FMAs (--fmad=true), so the host does too.
    ccache = shutil.which("ccache") if os.environ.get("V4F_EMULATOR_CCACHE", "1") != "0" else None
    obj = out.with_suffix(".o")
    r = subprocess.run([*([ccache] if ccache else []), cxx, "-std=c++17", "-O1", "-fPIC", "-w", "-mfma",
                        "-ffp-contract=fast", "-include", str(EMU / "cuda_emulator.h"), "-I", str(EMU / "include"),
                        "-x", "c++", "-c", source.name, "-o", obj.name],
                       capture_output=True, text=True, timeout=600, cwd=source.parent)
    if r.returncode == 0:
        r = subprocess.run([cxx, "-shared", str(obj), "-o", str(out)], capture_output=True, text=True, timeout=600)
    return None if r.returncode == 0 else r.stderr[-1500:]


def check_case(args, cxx: str, driver: Path, cdir: Path):
    meta = json.loads((cdir / "case.json").read_text())
    results = []
    for variant in meta["variants"]:
        name = f"{meta['name']} [{variant}]"
        src, lib = cdir / f"{variant}.cu", cdir / f"{variant}.so"
        why = compile_kernels(cxx, src, lib)
        if why:
            results.append((name, "FAIL", 0.0, f"the generated CUDA C++ does not compile under the emulator:\n{why}"))
            continue
        odir = cdir / f"out-{variant}"
        odir.mkdir(exist_ok=True)
        argv = [str(Path(args.build) / "bin" / "v4f-run"), str(cdir / f"{variant}.v4f"), "--device", "cuda",
                "--output-dir", str(odir), "--print", "0", "--threads", "1", "--steps", "2"]
        for k, f in meta["inputs"].items():
            argv += ["--input", f"{k}={cdir / f}"]
        env = dict(os.environ, V4F_CUDA_DRIVER=str(driver), V4F_FAKE_CUDA_KERNELS=str(lib))
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout, env=env)
        except subprocess.TimeoutExpired:
            results.append((name, "FAIL", 0.0, f"v4f-run under the emulator took more than {args.timeout} s"))
            continue
        if r.returncode:
            if "the artifact has no GPU kernels" in r.stderr:  # placement kept every dispatch on the CPU
                results.append((name, "cpu-only", 0.0, ""))
            else:
                results.append((name, "FAIL", 0.0, r.stderr.strip()[-800:]))
            continue
        problems, worst = check_outputs(meta, cdir, odir, low_precision(variant))
        results.append((name, "FAIL" if problems else "ok", worst, "; ".join(problems)[:800]))
    return results


def plain_inputs(model_path: Path) -> bool:
    """Whether a node test's graph inputs are all tensors numpy holds natively
    (what gpu_bundle.node_cases can feed v4f-run)."""
    import onnx
    from onnx import TensorProto as T
    plain = {T.FLOAT, T.DOUBLE, T.FLOAT16, T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32,
             T.UINT64, T.BOOL}
    m = onnx.load(str(model_path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return all(i.type.HasField("tensor_type") and i.type.tensor_type.elem_type in plain
               for i in m.graph.input if i.name not in inits)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--all", action="store_true", help="every passing node test (default: a sample, see above)")
    ap.add_argument("--node-every", type=int, default=0, help="every N-th passing node test instead of the sample")
    ap.add_argument("--seed", type=int, default=None, help="seed of the node sample's cover (default: node_sample.SEED)")
    ap.add_argument("--no-node", action="store_true")
    ap.add_argument("--real", action="store_true", help="also the exported models of test/models (dims fixed)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per emulated run")
    ap.add_argument("-k", "--filter", dest="k", default="", help="regex filter on case names")
    ap.add_argument("--op", action="append", default=[], metavar="OP_TYPE",
                    help="only the cases with a node of this ONNX op type: e2e models and every passing node "
                         "test that have one (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if not nvrtc_available():
        print("SKIPPED: NVRTC (the CUDA toolkit) is not installed on this machine, so no GPU artifacts can be built "
              "here; the CPU tests still run")
        return 0
    cxx = find_cxx()
    if not cxx:
        print("SKIPPED: no clang++ (>= 15, for _Float16) to compile the generated CUDA C++ for the host emulator")
        return 0
    driver = Path(args.build) / "lib" / "libv4f_fake_cuda.so"
    if not driver.exists():
        print(f"error: {driver} is missing (built with the project: test/gpu/emulator)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="v4f-gpu-emu-"))
    t0 = time.time()
    b = gpu_bundle.Bundle(argparse.Namespace(build=args.build, out=str(work), emit_cuda=True))
    b.note = lambda msg: print(msg, flush=True) if msg.startswith("FAIL") else None  # not every placement
    import models  # noqa: F401  (test/e2e, on the path through gpu_bundle)
    import node_sample
    import run_node_tests as rnt  # test/onnx-backend, on the path through gpu_bundle
    filt = re.compile(args.k) if args.k else None

    # The bundle's case builders hand each case (its name matching -k) to the
    # pool, which builds it (v4fc: CPU artifact and outputs, GPU variants and
    # their CUDA C++) and then runs it under the emulator, while the next
    # cases are generated.
    build_case = b.add_case
    pool = cf.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futures = []

    def build_and_check(name, a, kw):
        if not build_case(name, *a, **kw):
            return None
        return check_case(args, cxx, driver, work / "cases" / gpu_bundle.sanitize(name))

    def submit(name, *a, **kw):
        if filt and not filt.search(name):
            return False
        model = kw.get("model", a[1] if len(a) > 1 else None)
        if args.op and not node_sample.op_types(model.graph) & set(args.op):
            return False
        futures.append(pool.submit(build_and_check, name, a, kw))
        return True
    b.add_case = submit
    gpu_bundle.e2e_cases(b)
    gpu_bundle.gemm_cases(b)
    if args.real:
        gpu_bundle.real_cases(b)
    if not args.no_node:
        suite, tests = rnt.passing_tests()
        if args.op:
            chosen = node_sample.tests_with_ops(suite, tests, args.op)
            how = f"every one with {' or '.join(args.op)}"
        elif args.all or args.node_every:
            chosen = tests[::1 if args.all else args.node_every]
            how = "all" if len(chosen) == len(tests) else f"every {args.node_every}th"
        else:
            seed = node_sample.SEED if args.seed is None else args.seed
            chosen = node_sample.sample(suite, tests, "op-f32", seed,
                                        eligible=lambda t: plain_inputs(suite / t / "model.onnx"))
            how = f"a sample covering every (op type, float32 or not), seed {seed}; --all for every one"
        print(f"node suite: {len(chosen)} of {len(tests)} tests the CPU passes ({how})", flush=True)
        # gpu_bundle.node_cases takes every N-th of rnt.passing_tests(): here, of the chosen ones.
        passing_tests = rnt.passing_tests
        rnt.passing_tests = lambda: (suite, chosen)
        try:
            gpu_bundle.node_cases(b, 1)
        finally:
            rnt.passing_tests = passing_tests
    results = []
    cases = 0
    for fut in futures:
        rs = fut.result()
        if rs is None:
            continue  # not built: a CPU compile or run the node suite skips, or a FAIL printed above
        cases += 1
        for r in rs:
            results.append(r)
            if r[1] == "FAIL":
                print(f"FAIL {r[0]}: {r[3]}", flush=True)
    pool.shutdown()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work directory kept: {work}")
    by = {}
    for name, status, worst, _ in results:
        kind = name.split("_")[0]  # e2e, node, real
        v = next((p for p in ("fp16", "tf32", "mixed") if f"{p}]" in name), "fp32")
        s = by.setdefault((kind, v), {"ok": 0, "FAIL": 0, "cpu-only": 0, "worst": 0.0})
        s[status] += 1
        if status == "ok":
            s["worst"] = max(s["worst"], worst)
    for (kind, v), s in sorted(by.items()):
        print(f"{kind} {v}: {s['ok']} match the CPU under the emulator (largest error {s['worst']:.2g} of the largest "
              f"output), {s['FAIL']} failed, {s['cpu-only']} entirely on the CPU")
    print(f"{len(results)} GPU runs of {cases} cases in {time.time() - t0:.0f}s (built and run on {args.jobs} workers)")
    return 1 if any(r[1] == "FAIL" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
