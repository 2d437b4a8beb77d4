#!/usr/bin/env python3
"""SHA-256 of every artifact the e2e, GPU-codegen and bench runners compile, for one v4fc.

A refactor that must not change behaviour must leave every artifact byte-identical
(builds are reproducible: same model + flags = same bytes).  This script generates
the models the runners generate -- by importing the runners' own generators, never
copies of them -- compiles each with the given v4fc and exactly the flags the runner
uses for that case, and writes one JSON object {case: sha256 | "ERROR: <first line of
stderr>"}, sorted by case name.  Compare two such files with --compare.

  .venv/bin/python scripts/artifact_digests.py --v4fc /work/baseline/bin/v4fc --out base.json \
      [--work DIR] [--filter REGEX] [--cuda]
  .venv/bin/python scripts/artifact_digests.py --compare base.json new.json   # exit 1 on any difference
  .venv/bin/python scripts/artifact_digests.py --list [--cuda]                 # case names, nothing compiled

Cases (one entry per compile the runner does; each ISA / precision / quantization
variant is its own entry):

  e2e:<name>             test/e2e/run_e2e.py: every models.all_generators() case (the ISA
                         variants /avx2 /sse /multi_isa included), `v4fc compile model.onnx
                         -o model.v4f <case.compile_flags>`.  (run_e2e also compiles
                         resnet50 a second time with the same flags: not repeated here.)
  cuda:<name>/<prec>     --cuda, test/gpu/run_gpu_codegen_tests.py: the e2e models it takes
                         (no ISA-suffixed names, opset_variants/ kept), `--target=cuda
                         --precision=<prec> --verbose <case.compile_flags>` for fp32 and,
                         for the models in that runner's fp16 / tf32 sets (read from its
                         source with `ast`, so they cannot drift), fp16 / tf32.  Only with
                         NVRTC (that runner's nvrtc_available()).  Its `cpu.v4f` compile is
                         e2e:<name> already.  (The runner stops after fp32 when a model puts
                         no dispatch on the GPU; here every listed precision is compiled.)
  bench:<name>           bench/suite.py: every SPECS model built by its own build() (the
                         bench_models.py builders, resnet50 via bench.load_model, the
                         committed mobilenet_v3_small.onnx), flags spec.compile_flags; and
                         bench:fma_probe (suite's one-op FMA-peak probe, tiny_chain(1, 16)).
  quant:<name>/<tag>     bench/quant_bench.py: every MODELS entry compiled float32 (no
                         flags) and quantized (its flags; CAL = the same 8-sample
                         calibration .npz quant_bench writes), and the files ORT's own
                         quantizer writes (quantize_dynamic / quantize_static QDQ u8 / s8
                         activations), compiled as they are (needs onnxruntime.quantization).

Not covered (printed at start): bench/python_overhead.py (compiles through the `v4f`
Python package, not installed in .venv), bench/serve_*.py (the serve test repository,
test/serve/make_repository.py), bench/load_rss.py and bench/compare_builds.py (default
resnet50 with no flags: the same compile as bench:resnet50).

Every compile runs one at a time, in the case's own directory under --work, with
relative paths (`v4fc compile <file>.onnx -o <file>.v4f ...`, cwd = that directory):
the artifact cannot depend on where --work is.  Models, inputs and artifacts are kept
there (re-running overwrites them), with timings.json (seconds per case).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
for sub in ("test/e2e", "test/gpu", "bench"):
    sys.path.insert(0, str(ROOT / sub))

import numpy as np  # noqa: E402

import models  # noqa: E402  (test/e2e/models.py)
import run_e2e  # noqa: E402  (COMPILE_TIMEOUT_S, sanitize)

GPU_RUNNER = ROOT / "test" / "gpu" / "run_gpu_codegen_tests.py"

NOT_COVERED = [
    "bench/python_overhead.py: compiles through the `v4f` Python package (v4f.compile), "
    "which is not installed in .venv",
    "bench/serve_batching.py, bench/serve_soak.py: the serve test repository (test/serve/make_repository.py), "
    "not bench models",
    "bench/load_rss.py, bench/compare_builds.py: default model resnet50 with no flags = bench:resnet50",
]


# ---------------------------------------------------------------------------
# jobs


@dataclass
class Source:
    """One model file written into a case directory, shared by the compiles of it."""
    key: str                                  # the directory under --work
    filename: str                             # the .onnx file's name in it
    # Writes the model (and whatever it needs) into the directory; returns extra
    # substitutions for the flags ({"CAL": "x_cal.npz"}).
    write: Callable[[Path], Dict[str, str]]
    needs: Tuple[str, ...] = ()               # Python modules the builder needs


@dataclass
class Job:
    name: str
    source: Source
    artifact: str                             # file name of the artifact in the directory
    flags: List[str] = field(default_factory=list)


def _write_case(filename: str, make) -> Callable[[Path], Dict[str, str]]:
    def write(d: Path) -> Dict[str, str]:
        case = make()
        (d / filename).write_bytes(case.model.SerializeToString())
        return {}
    return write


def e2e_jobs() -> Tuple[List[Job], Dict[str, Source]]:
    """test/e2e/run_e2e.py: `v4fc compile model.onnx -o model.v4f <case.compile_flags>`.
    The flags come from the generated case, so the Source records them on write."""
    jobs, sources = [], {}
    for name, gen in models.all_generators().items():
        src = Source("e2e__" + run_e2e.sanitize(name.replace("/", "__")), "model.onnx", None)
        src.write = _e2e_writer(src, gen)
        sources[name] = src
        jobs.append(Job("e2e:" + name, src, "model.v4f", ["@CASE_FLAGS"]))
    return jobs, sources


def _e2e_writer(src: Source, gen) -> Callable[[Path], Dict[str, str]]:
    def write(d: Path) -> Dict[str, str]:
        case = gen()
        (d / src.filename).write_bytes(case.model.SerializeToString())
        return {"@CASE_FLAGS": list(case.compile_flags)}
    return write


def gpu_precision_sets() -> Tuple[set, set]:
    """The fp16 and tf32 name sets of run_gpu_codegen_tests.main(), read from its source."""
    tree = ast.parse(GPU_RUNNER.read_text())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            for st in ast.walk(node):
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                        and st.targets[0].id in ("fp16", "tf32"):
                    found[st.targets[0].id] = set(ast.literal_eval(st.value))
    if set(found) != {"fp16", "tf32"}:
        raise SystemExit(f"{GPU_RUNNER}: cannot find the fp16 / tf32 sets in main() (found {sorted(found)})")
    return found["fp16"], found["tf32"]


def cuda_jobs(e2e_sources: Dict[str, Source]) -> List[Job]:
    """test/gpu/run_gpu_codegen_tests.py, e2e part: `v4fc compile model.onnx -o gpu-<prec>.v4f
    --target=cuda --precision=<prec> --verbose <case.compile_flags>`."""
    fp16, tf32 = gpu_precision_sets()
    jobs = []
    for name, src in e2e_sources.items():
        if "/" in name and not name.startswith("opset_variants/"):
            continue  # the same models compiled for other CPU ISAs (as the runner skips them)
        precisions = ["fp32"] + (["fp16"] if name in fp16 else []) + (["tf32"] if name in tf32 else [])
        for prec in precisions:
            jobs.append(Job(f"cuda:{name}/{prec}", src, f"gpu-{prec}.v4f",
                            ["--target=cuda", f"--precision={prec}", "--verbose", "@CASE_FLAGS"]))
    return jobs


def bench_jobs() -> List[Job]:
    """bench/suite.py: each SPECS model built by its own build(work) into work/<name>/,
    compiled to <name>.v4f with spec.compile_flags (+ suite's --compile-flags, default
    empty); the FMA probe compiled with no flags."""
    import suite  # noqa: E402  (bench/suite.py)

    jobs = []
    for name, spec in suite.SPECS.items():
        src = Source("bench__" + name, "", None)

        def write(d: Path, spec=spec, src=src) -> Dict[str, str]:
            path, _ = spec.build(d)
            path = Path(path)
            if path.parent.resolve() != d.resolve():  # a committed model: the suite compiles it in place
                shutil.copyfile(path, d / path.name)
            src.filename = path.name
            return {}

        src.write = write
        jobs.append(Job("bench:" + name, src, f"{name}.v4f", list(spec.compile_flags)))
    probe = Source("bench__fma_probe", "fma_probe.onnx", None)

    def write_probe(d: Path) -> Dict[str, str]:
        suite._from_case("fma_probe", lambda: suite.bench_models.tiny_chain(1, 16))(d)
        return {}

    probe.write = write_probe
    jobs.append(Job("bench:fma_probe", probe, "fma_probe.v4f", []))
    return jobs


def quant_jobs() -> List[Job]:
    """bench/quant_bench.py: per MODELS entry, float32 and quantized compiles of
    <name>.onnx, and ORT's own quantized files compiled with no flags."""
    import quant_bench  # noqa: E402  (bench/quant_bench.py)

    jobs = []
    for name, (builder, qflags, ort_quant) in quant_bench.MODELS.items():
        src = Source("quant__" + name, f"{name}.onnx", None)

        def write(d: Path, name=name, builder=builder, qflags=qflags) -> Dict[str, str]:
            case = builder()
            (d / f"{name}.onnx").write_bytes(case.model.SerializeToString())
            subst = {}
            if "CAL" in qflags:  # as quant_bench.main(): random samples of every input
                inputs = case.input_sets[0]
                rng = np.random.default_rng(7)
                cal = {k: rng.standard_normal((quant_bench.CALIBRATION_SAMPLES,) + v.shape).astype(v.dtype)
                       for k, v in inputs.items()}
                np.savez(d / f"{name}_cal.npz", **cal)
                subst["CAL"] = f"{name}_cal.npz"
            return subst

        src.write = write
        jobs.append(Job(f"quant:{name}/float32", src, f"{name}_float32.v4f", []))
        jobs.append(Job(f"quant:{name}/quantized", src, f"{name}_quantized.v4f", list(qflags)))
        for tag, ort_file, make in _ort_quantized(name, ort_quant):
            osrc = Source("quant__" + name, ort_file, make, needs=("onnxruntime.quantization",))
            jobs.append(Job(f"quant:{name}/{tag}", osrc, Path(ort_file).stem + ".v4f", []))
    return jobs


def _ort_quantized(name: str, ort_quant: Optional[str]):
    """(tag, file, writer) of the files quant_bench.main() has ORT's quantizer write
    (same calls and arguments); each writer expects <name>.onnx (and the .npz) there."""
    out = []
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's per-tensor warnings
    if ort_quant == "dynamic":
        def write(d: Path) -> Dict[str, str]:
            from onnxruntime.quantization import QuantType, quantize_dynamic
            quantize_dynamic(str(d / f"{name}.onnx"), str(d / f"{name}_ort_int8.onnx"),
                             weight_type=QuantType.QInt8, per_channel=True)
            return {}
        out.append(("ort_int8", f"{name}_ort_int8.onnx", write))
    elif ort_quant == "static":
        for act_name in ("QUInt8", "QInt8"):
            def write(d: Path, act_name=act_name) -> Dict[str, str]:
                from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                                      quantize_static)
                import quant_bench
                cal = dict(np.load(d / f"{name}_cal.npz"))
                n = quant_bench.CALIBRATION_SAMPLES

                class Reader(CalibrationDataReader):
                    def __init__(self):
                        self.it = iter([{k: v[i] for k, v in cal.items()} for i in range(n)])

                    def get_next(self):
                        return next(self.it, None)

                quantize_static(str(d / f"{name}.onnx"), str(d / f"{name}_ort_qdq_{act_name}.onnx"), Reader(),
                                quant_format=QuantFormat.QDQ, per_channel=True,
                                activation_type=getattr(QuantType, act_name), weight_type=QuantType.QInt8)
                return {}
            out.append((f"ort_qdq_{act_name}", f"{name}_ort_qdq_{act_name}.onnx", write))
    return out


def all_jobs(cuda: bool) -> Tuple[List[Job], List[str]]:
    """The jobs, and the notes on what was skipped."""
    notes = list(NOT_COVERED)
    jobs, e2e_sources = e2e_jobs()
    if cuda:
        import run_gpu_codegen_tests as gpu  # noqa: E402
        if gpu.nvrtc_available():
            jobs += cuda_jobs(e2e_sources)
        else:
            notes.append("--cuda: NVRTC (the CUDA toolkit under /usr/local/cuda*) not found: no cuda: cases")
    jobs += bench_jobs()
    jobs += quant_jobs()
    kept = []
    for j in jobs:
        missing = [m for m in j.source.needs if not _importable(m)]
        if missing:
            notes.append(f"{j.name}: skipped, needs {', '.join(missing)} (not in .venv)")
        else:
            kept.append(j)
    return kept, notes


def _importable(mod: str) -> bool:
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


# ---------------------------------------------------------------------------
# compile + digest


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no output)"


def compile_one(v4fc: str, d: Path, model_file: str, artifact: str, flags: List[str]) -> str:
    out = d / artifact
    if out.exists():
        out.unlink()
    cmd = [v4fc, "compile", model_file, "-o", artifact] + flags
    try:
        p = subprocess.run(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=run_e2e.COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"ERROR: timed out after {run_e2e.COMPILE_TIMEOUT_S}s"
    if p.returncode != 0:
        return f"ERROR: {first_line(p.stderr)}" + ("" if p.returncode > 0 else f" (signal {-p.returncode})")
    if not out.exists():
        return "ERROR: exit 0 but no artifact written"
    return sha256_file(out)


def run(args) -> int:
    v4fc = str(Path(args.v4fc).resolve())
    if not os.access(v4fc, os.X_OK):
        raise SystemExit(f"{v4fc}: not an executable")
    jobs, notes = all_jobs(args.cuda)
    if args.filter:
        rx = re.compile(args.filter)
        jobs = [j for j in jobs if rx.search(j.name)]
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate case names: " + ", ".join(sorted({n for n in names if names.count(n) > 1})))
    for n in notes:
        print(f"note: {n}", flush=True)
    if args.work:
        work = Path(args.work).resolve()
        work.mkdir(parents=True, exist_ok=True)
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="v4f-digests-")
        work = Path(tmp.name)
    print(f"{len(jobs)} cases, v4fc={v4fc}, work={work}", flush=True)

    digests: Dict[str, str] = {}
    timings: Dict[str, float] = {}
    written: Dict[Tuple[str, int], Tuple[Optional[str], Dict]] = {}  # (dir, source) -> (error, substitutions)
    t_all = time.perf_counter()
    # Jobs of one directory run together, so a big model is generated once and then
    # its directory can be left alone.
    order: Dict[str, List[Job]] = {}
    for j in jobs:
        order.setdefault(j.source.key, []).append(j)
    i = 0
    for key, group in order.items():
        d = work / key
        d.mkdir(parents=True, exist_ok=True)
        for j in group:
            i += 1
            t0 = time.perf_counter()
            deps = [j.source]
            if j.source.needs:  # an ORT-quantized file: written from the base model of its directory
                base = next((x.source for x in group if not x.source.needs), None)
                if base is None:  # filtered out: find it among all jobs
                    base = next(x.source for x in all_jobs(False)[0] if x.source.key == key and not x.source.needs)
                deps = [base, j.source]
            err, subst = None, {}
            for src in deps:
                k = (key, id(src))
                if k not in written:
                    try:
                        written[k] = (None, src.write(d) or {})
                    except Exception as e:  # noqa: BLE001  generator / quantizer failure
                        written[k] = (f"ERROR: model generation raised {type(e).__name__}: "
                                      f"{first_line(str(e)) if str(e) else ''}".rstrip(": "), {})
                e_, s_ = written[k]
                err = err or e_
                subst.update(s_)
            if err:
                digests[j.name] = err
            else:
                flags: List[str] = []
                for f in j.flags:
                    v = subst.get(f, f)
                    flags += v if isinstance(v, list) else [v]
                digests[j.name] = compile_one(v4fc, d, j.source.filename, j.artifact, flags)
            timings[j.name] = round(time.perf_counter() - t0, 2)
            print(f"[{i}/{len(jobs)}] {j.name}: {digests[j.name][:64]} ({timings[j.name]:.1f}s)", flush=True)
    total = time.perf_counter() - t_all

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(sorted(digests.items())), indent=1) + "\n")
    (work / "timings.json").write_text(json.dumps({"total_s": round(total, 1), "cases": timings}, indent=1) + "\n")
    errors = sorted(n for n, v in digests.items() if v.startswith("ERROR"))
    print(f"wrote {out}: {len(digests)} entries, {len(errors)} errors, in {total:.0f}s")
    for n in errors:
        print(f"  {n}: {digests[n]}")
    if tmp:
        tmp.cleanup()
    return 0


def compare(a_path: str, b_path: str) -> int:
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    diff = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    for k in diff:
        print(f"DIFFERS {k}:\n    {a_path}: {a[k]}\n    {b_path}: {b[k]}")
    for k in only_a:
        print(f"MISSING in {b_path}: {k} ({a[k]})")
    for k in only_b:
        print(f"MISSING in {a_path}: {k} ({b[k]})")
    same = len(a.keys() & b.keys()) - len(diff)
    errs = sorted(k for k in a.keys() & b.keys() if a[k] == b[k] and a[k].startswith("ERROR"))
    if errs:
        print(f"note: {len(errs)} entries are the same error in both: {', '.join(errs)}")
    bad = len(diff) + len(only_a) + len(only_b)
    print(f"{same} identical, {len(diff)} differ, {len(only_a)} only in {a_path}, {len(only_b)} only in {b_path}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--v4fc", help="the v4fc binary to compile with")
    ap.add_argument("--out", help="digests JSON to write")
    ap.add_argument("--work", help="directory for models and artifacts (kept); default a temp dir, removed")
    ap.add_argument("--filter", help="only cases whose name matches this regex (re.search)")
    ap.add_argument("--cuda", action="store_true", help="also the --target=cuda variants (when NVRTC is present)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    ap.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"), help="compare two digest files")
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.list:
        jobs, notes = all_jobs(args.cuda)
        rx = re.compile(args.filter) if args.filter else None
        for n in notes:
            print(f"note: {n}", file=sys.stderr)
        for j in jobs:
            if not rx or rx.search(j.name):
                print(j.name)
        return 0
    if not args.v4fc or not args.out:
        ap.error("--v4fc and --out are required (or --compare A B, or --list)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
