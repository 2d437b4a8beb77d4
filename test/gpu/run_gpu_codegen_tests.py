#!/usr/bin/env python3
"""GPU code generation without a GPU: every GPU kernel of the e2e models and of
the ONNX node-suite models the CPU passes is generated and compiled by NVRTC,
and the result is confirmed by tools that read it, not by v4fc's word.

For every model:
  1. `v4fc compile --target=cuda` (and `--precision=fp16`, some `--precision=tf32`,
     for the e2e models with matrix products) must succeed (a model the CPU compiles but the GPU path
     refuses is a failure: unsupported ops must fall back to the CPU, not fail; the CPU compile
     runs only when a GPU compile fails, to tell the two apart);
  2. `v4fc inspect --extract-cuda` writes the module's images; each cubin must be
     an ELF of machine EM_CUDA (190) for the requested arch (e_flags) that
     defines every entry point of the plan as a global function (readelf, or
     cuobjdump when installed); the PTX must target the arch and have an
     `.entry` for every entry point;
  3. ptxas (when installed) assembles the PTX of the e2e models and of every
     other node model checked (every 10th with --all or --node-every) for the
     arch: the forward-compatibility PTX is valid.
Models whose every dispatch stays on the CPU (dynamic dims, control flow, ops
without a GPU kernel) are counted as such; their CPU placement is what
`--verbose` reports.

Without NVRTC (no CUDA toolkit) the test is skipped with that reason (exit 0).

The node-suite models: by default a deterministic sample (node_sample.py: with
a fixed seed, a cover of every (op type, dtype) of the models the CPU passes
plus every 8th of the other all-float32 ones, about a quarter of them); --all checks every one, --node-every N every N-th,
--seed S another cover; -k REGEX filters the model names ("e2e:NAME",
"node:test_NAME") after that choice (-k with --all: every matching model);
--op OP_TYPE takes the e2e models and every passing node test with that op.

  .venv/bin/python test/gpu/run_gpu_codegen_tests.py --build build [-j 2] [--all | --node-every N | --seed S] [-k REGEX] [--op OP_TYPE]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "test" / "e2e"))
sys.path.insert(0, str(ROOT / "test" / "onnx-backend"))

EM_CUDA = 190


def find_tool(name):
    found = shutil.which(name) or sorted(glob.glob(f"/usr/local/cuda*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


def nvrtc_available():
    return bool(os.environ.get("V4F_NVRTC") or glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*") or
                glob.glob("/usr/local/cuda*/targets/x86_64-linux/lib/libnvrtc.so*"))


def cubin_functions(path: Path, readelf: str, cuobjdump: str | None):
    """(machine, sm arch, set of global function names) of a cubin."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path.name}: not an ELF64 file")
    machine = int.from_bytes(data[18:20], "little")
    flags = int.from_bytes(data[48:52], "little")
    arch = (flags >> 8) & 0xff
    if cuobjdump:
        out = subprocess.run([cuobjdump, "-elf", str(path)], capture_output=True, text=True).stdout
        names = set(re.findall(r"\bFUNC\s+GLOBAL\s+\S+\s+\S+\s+(\S+)", out))
    else:
        out = subprocess.run([readelf, "-sW", str(path)], capture_output=True, text=True, check=True).stdout
        names = {l.split()[-1] for l in out.splitlines() if " FUNC " in l and " GLOBAL " in l}
    return machine, arch, names


class Checker:
    def __init__(self, args, work: Path):
        self.v4fc = str(Path(args.build) / "bin" / "v4fc")
        self.work = work
        self.readelf = find_tool("readelf")
        self.cuobjdump = find_tool("cuobjdump")
        self.ptxas = find_tool("ptxas")
        self.arch = 90

    def check(self, name: str, model: onnx.ModelProto, flags, precisions, assemble: bool):
        d = self.work / re.sub(r"[^A-Za-z0-9._-]", "_", name)
        d.mkdir(parents=True, exist_ok=True)
        path = d / "model.onnx"
        onnx.save(model, path)
        def cpu_refuses():
            # Only asked when a GPU compile fails: a model the CPU compiles too is a failure.
            r = subprocess.run([self.v4fc, "compile", str(path), "-o", str(d / "cpu.v4f"), *flags],
                               capture_output=True, text=True, timeout=600)
            return r.returncode != 0

        gpu_dispatches = kernels = 0
        for prec in precisions:
            art = d / f"gpu-{prec}.v4f"
            r = subprocess.run([self.v4fc, "compile", str(path), "-o", str(art), "--target=cuda", f"--precision={prec}",
                                "--verbose", *flags], capture_output=True, text=True, timeout=600)
            if r.returncode:
                if cpu_refuses():
                    return name, "cpu-refused", 0, 0, ""
                return name, "FAIL", 0, 0, f"--target=cuda --precision={prec} fails:\n{r.stderr[-1500:]}"
            m = re.search(r"placement: (\d+) of (\d+) dispatches on the GPU", r.stderr)
            if not m:
                return name, "FAIL", 0, 0, "no placement note in --verbose"
            gpu_dispatches = int(m.group(1))
            if gpu_dispatches == 0:
                return name, "cpu-only", 0, 0, ""
            x = d / f"x-{prec}"
            x.mkdir(exist_ok=True)
            r = subprocess.run([self.v4fc, "inspect", str(art), "--extract-cuda", str(x)], capture_output=True, text=True)
            if r.returncode:
                return name, "FAIL", 0, 0, f"inspect --extract-cuda: {r.stderr.strip()}"
            entries = (x / "exe1.entry_points").read_text().split() if (x / "exe1.entry_points").exists() else []
            cubins = sorted(x.glob("exe*.cubin"))
            ptxs = sorted(x.glob("exe*.ptx"))
            if not entries or not cubins or not ptxs:
                return name, "FAIL", 0, 0, f"extracted {len(entries)} entry points, {len(cubins)} cubins, {len(ptxs)} PTX"
            for c in cubins:
                machine, arch, funcs = cubin_functions(c, self.readelf, self.cuobjdump)
                if machine != EM_CUDA or arch != self.arch:
                    return name, "FAIL", 0, 0, f"{c.name}: machine {machine}, sm_{arch} (want {EM_CUDA}, sm_{self.arch})"
                missing = [e for e in entries if e not in funcs]
                if missing:
                    return name, "FAIL", 0, 0, f"{c.name} lacks kernels {missing[:5]}"
            for p in ptxs:
                text = p.read_text()
                if f".target sm_{self.arch}" not in text:
                    return name, "FAIL", 0, 0, f"{p.name}: not PTX for sm_{self.arch}"
                missing = [e for e in entries if not re.search(rf"\.entry\s+{re.escape(e)}\s*\(", text)]
                if missing:
                    return name, "FAIL", 0, 0, f"{p.name} lacks .entry {missing[:5]}"
                if assemble and self.ptxas:
                    r = subprocess.run([self.ptxas, f"-arch=sm_{self.arch}", str(p), "-o", str(x / "ptxas.cubin")],
                                       capture_output=True, text=True, timeout=300)
                    if r.returncode:
                        return name, "FAIL", 0, 0, f"ptxas rejects {p.name}: {r.stderr[-800:]}"
            kernels += len(entries)
        shutil.rmtree(d, ignore_errors=True)
        return name, "ok", gpu_dispatches, kernels, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--all", action="store_true", help="check every passing node test (default: a sample, see above)")
    ap.add_argument("--node-every", type=int, default=0, help="check every N-th passing node test (1 = all)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the node sample's cover (default: node_sample.SEED)")
    ap.add_argument("--no-node", action="store_true")
    ap.add_argument("-k", "--filter", dest="k", default="", help="regex filter on model names (e2e:NAME, node:test_NAME)")
    ap.add_argument("--op", action="append", default=[], metavar="OP_TYPE",
                    help="only the models with a node of this ONNX op type: the e2e models and every passing "
                         "node test that have one (repeatable)")
    args = ap.parse_args()
    if not nvrtc_available():
        print("SKIPPED: NVRTC (the CUDA toolkit) is not installed on this machine, so no GPU kernels can be "
              "compiled here; the CPU tests still run")
        return 0
    if not find_tool("readelf"):
        print("error: readelf (binutils) is needed to read the cubins")
        return 2
    import models
    import node_sample
    import run_node_tests as rnt
    work = Path(tempfile.mkdtemp(prefix="v4f-gpu-codegen-"))
    checker = Checker(args, work)
    jobs = []
    fp16 = {"mlp", "cnn", "transformer", "resnet50", "packed_matmuls", "gelu_epilogue", "layer_norm_rows",
            "packed_convs", "conv_packed_b", "im2col_rows", "depthwise_convs"}
    tf32 = {"mlp", "cnn", "transformer", "resnet50", "packed_matmuls", "im2col_rows"}  # FP32 on TF32 tensor cores
    for name, gen in models.all_generators().items():
        if "/" in name and not name.startswith("opset_variants/"):
            continue  # the same models compiled for other CPU ISAs
        precisions = ["fp32"] + (["fp16"] if name in fp16 else []) + (["tf32"] if name in tf32 else [])
        jobs.append(("e2e:" + name, gen, precisions, True))
    if not args.no_node:
        suite, tests = rnt.passing_tests()
        if args.op:
            chosen, assemble_every = node_sample.tests_with_ops(suite, tests, args.op), 2
            how = f"every one with {' or '.join(args.op)}"
        elif args.all or args.node_every:
            chosen, assemble_every = tests[::1 if args.all else args.node_every], 10
            how = "all" if len(chosen) == len(tests) else f"every {args.node_every}th"
        else:
            seed = node_sample.SEED if args.seed is None else args.seed
            chosen, assemble_every = node_sample.sample(suite, tests, "op-dtype", seed, float32_extra=8), 2
            how = (f"a sample covering every (op type, dtype) and every 8th other all-float32 model, seed {seed}; "
                   "--all for every one")
        print(f"node suite: {len(chosen)} of {len(tests)} models the CPU passes ({how})", flush=True)
        for i, t in enumerate(chosen):
            jobs.append(("node:" + t, (lambda p=suite / t / "model.onnx": p), ["fp32"], i % assemble_every == 0))
    if args.k:
        jobs = [j for j in jobs if re.search(args.k, j[0])]
    t0 = time.time()
    results = []

    def run(job):
        name, gen, precs, assemble = job
        if name.startswith("node:"):
            model, flags = onnx.load(gen()), []
        else:
            case = gen()
            model, flags = case.model, list(case.compile_flags)
        if args.op and not node_sample.op_types(model.graph) & set(args.op):
            return name, "skipped", 0, 0, ""
        try:
            return checker.check(name, model, flags, precs, assemble)
        except Exception as e:  # noqa: BLE001
            return name, "FAIL", 0, 0, f"{type(e).__name__}: {e}"

    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for r in ex.map(run, jobs):
            results.append(r)
            if r[1] == "FAIL":
                print(f"FAIL {r[0]}: {r[4]}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    by = {}
    results = [r for r in results if r[1] != "skipped"]  # not of the --op types
    for name, status, disp, kern, _ in results:
        suite = name.split(":")[0]
        s = by.setdefault(suite, {"ok": 0, "cpu-only": 0, "cpu-refused": 0, "FAIL": 0, "dispatches": 0, "kernels": 0})
        s[status] += 1
        s["dispatches"] += disp
        s["kernels"] += kern
    tool = "cuobjdump" if checker.cuobjdump else "readelf"
    for suite, s in by.items():
        print(f"{suite}: {s['ok']} models with GPU kernels ({s['dispatches']} GPU dispatches, {s['kernels']} kernels "
              f"confirmed by {tool}{' + ptxas' if checker.ptxas else ''}), {s['cpu-only']} entirely on the CPU, "
              f"{s['cpu-refused']} refused by the CPU compile too, {s['FAIL']} failed")
    print(f"{len(results)} models in {time.time() - t0:.0f}s")
    return 1 if any(r[1] == "FAIL" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
