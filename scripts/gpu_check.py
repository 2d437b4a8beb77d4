#!/usr/bin/env python3
"""Runs the GPU bundle (scripts/gpu_bundle.py) on a machine with an NVIDIA GPU.

Needs only python3 + numpy there (no v4fc, no build): for every case, runs the
GPU artifact with bin/v4f-run --device cuda (three steps, so a whole-GPU plan
is captured once as a CUDA Graph and replayed) and compares its outputs with
the CPU artifact's outputs computed on the build machine:
  e2e FP32 artifacts   |gpu - cpu| <= 1e-4 + 1e-4 * |cpu|
  e2e FP16 artifacts   |gpu - cpu| <= 1e-2 + 1e-2 * |cpu|
  node-suite sample    the node suite's own per-dtype tolerances (float32 1e-4 / 1e-5)
then times the benchmarks (v4f-run --benchmark; GPU dispatches timed with CUDA
events through --profile). Every command has a timeout and the whole run a
deadline, so it ends well inside its budget. Prints a summary and writes
results.json to --out.

  python3 scripts/gpu_check.py --bundle gpu-check --out $OUT [--deadline 420]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

NODE_TOL = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5), "float16": (2e-3, 1e-3)}


def compare(got: np.ndarray, exp: np.ndarray, rtol: float, atol: float):
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != {exp.dtype}"
    if got.shape != exp.shape:
        return f"shape {got.shape} != {exp.shape}"
    if exp.dtype.kind not in "f":
        bad = int(np.count_nonzero(got != exp))
        return f"{bad} of {exp.size} differ" if bad else None
    g, e = got.astype(np.float64), exp.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(e)):
        return "NaN positions differ"
    fin = np.isfinite(e)
    if not np.array_equal(g[~fin & ~np.isnan(e)], e[~fin & ~np.isnan(e)]):
        return "infinities differ"
    d = np.abs(g[fin] - e[fin])
    bad = d > atol + rtol * np.abs(e[fin])
    if np.any(bad):
        return f"max_abs_err={float(d.max()):.3g} ({int(bad.sum())} of {e.size} outside rtol={rtol} atol={atol})"
    return None


def max_rel(got, exp):
    if exp.dtype.kind != "f" or exp.size == 0:
        return 0.0
    g, e = got.astype(np.float64), exp.astype(np.float64)
    fin = np.isfinite(e) & np.isfinite(g)
    if not fin.any():
        return 0.0
    return float(np.max(np.abs(g[fin] - e[fin])) / max(1e-30, float(np.max(np.abs(e[fin])))))


def low_precision(variant: str) -> bool:
    """Variants whose matrix products round their operands (FP16, TF32): 1e-2."""
    return variant.endswith(("fp16", "tf32"))


def check_outputs(meta: dict, cdir: Path, odir: Path, fp16: bool):
    """A case's outputs written to odir against the CPU artifact's (case.json):
    (problems, the largest error relative to the largest output); `fp16`: a
    low-precision variant (low_precision())."""
    import re
    problems, worst = [], 0.0
    for o, f in meta["outputs"].items():
        got_path = odir / (re.sub(r"[^A-Za-z0-9._-]", "_", o) + ".npy")
        if not got_path.exists():
            problems.append(f"{o}: no output written")
            continue
        got = np.load(got_path)
        if meta.get("expect_matmul"):
            exp = np.matmul(np.load(cdir / meta["inputs"]["a"]), np.load(cdir / meta["inputs"]["b"]))
        else:
            exp = np.load(cdir / f)
        if meta["kind"] == "node":
            rtol, atol = NODE_TOL.get(exp.dtype.name, (0, 0))
        else:
            rtol, atol = (1e-2, 1e-2) if fp16 else (1e-4, 1e-4)
        why = compare(got, exp, rtol, atol)
        worst = max(worst, max_rel(got, exp))
        if why:
            problems.append(f"{o}: {why}")
    return problems, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default="gpu-check")
    ap.add_argument("--out", default=".")
    ap.add_argument("--deadline", type=float, default=420, help="seconds for the whole check")
    ap.add_argument("--only", default="", help="substring filter on case names (and benchmarks)")
    ap.add_argument("--bench-only", action="store_true", help="skip the correctness cases")
    args = ap.parse_args()
    start = time.time()
    bundle = Path(args.bundle).resolve()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_bin = bundle / "bin" / "v4f-run"
    env = dict(os.environ, LD_LIBRARY_PATH=str(bundle / "lib") + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    results = {"cases": [], "bench": []}
    import tempfile
    tmp = Path(tempfile.mkdtemp(prefix="v4f-gpu-check-"))

    def v4frun(argv, timeout=60):
        try:
            r = subprocess.run([str(run_bin), *map(str, argv)], capture_output=True, text=True, timeout=timeout,
                               env=env)
            return r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {timeout}s"

    cases = sorted(p for p in (bundle / "cases").iterdir() if (p / "case.json").exists())
    # The heavy models first: their timings are the ones the deadline must not cut.
    cases.sort(key=lambda p: (not p.name.startswith("heavy_"), p.name))
    heavy = []
    for cdir in cases:
        meta = json.loads((cdir / "case.json").read_text())
        if (args.only and args.only not in meta["name"]) or (args.bench_only and not meta.get("compressed")):
            continue
        for variant in meta["variants"]:
            if time.time() - start > args.deadline * 0.75:
                results["cases"].append({"name": meta["name"], "variant": variant, "status": "skipped (deadline)"})
                continue
            odir = tmp / cdir.name / variant
            odir.mkdir(parents=True, exist_ok=True)
            art = cdir / f"{variant}.v4f"
            if meta.get("compressed"):
                import lzma
                art = tmp / cdir.name / f"{variant}.v4f"
                art.write_bytes(lzma.decompress((cdir / f"{variant}.v4f.xz").read_bytes()))
                heavy.append(art)
            argv = [art, "--device", "auto", "--output-dir", odir, "--print", "0", "--steps", "3"]
            for k, f in meta["inputs"].items():
                argv += ["--input", f"{k}={cdir / f}"]
            t0 = time.time()
            rc, log = v4frun(argv)
            rec = {"name": meta["name"], "kind": meta["kind"], "variant": variant, "seconds": round(time.time() - t0, 2)}
            if rc:
                rec.update(status="FAIL", why=log.strip()[-600:])
            else:
                problems, worst = check_outputs(meta, cdir, odir, low_precision(variant))
                rec.update(status="FAIL" if problems else "ok", max_rel_err=worst)
                if problems:
                    rec["why"] = "; ".join(problems)[:600]
            results["cases"].append(rec)
            print(f"{rec['status']:>4}  {meta['name']} [{variant}] {rec.get('why', '')}", flush=True)

    # Benchmarks: whole runs (host<->device copies included) and the GPU
    # dispatches alone (CUDA events, --profile).
    for art in heavy + sorted((bundle / "bench").glob("*.v4f")) + [
            cdir / v for cdir in cases for v in ("gpu.v4f", "gpu-fp16.v4f", "gpu-tf32.v4f")
            if cdir.name in ("e2e_transformer", "e2e_cnn", "real_bert_tiny", "real_resnet_tiny") and (cdir / v).exists()]:
        if time.time() - start > args.deadline * 0.92:
            break
        name = art.stem if art.parent.name == "bench" else f"{art.parent.name}-{art.stem}"
        if args.only and args.only not in name and "gemm" not in name:
            continue
        # Timing files stay in the temp dir: only results.json and the log come back.
        js = tmp / f"bench-{name}.json"
        rc, log = v4frun([art, "--device", "cuda", "--benchmark", "20", "--warmup", "3", "--json", js, "--print", "0"],
                         timeout=120)
        rec = {"name": name, "status": "ok" if rc == 0 else "FAIL"}
        if rc == 0 and js.exists():
            rec["run"] = json.loads(js.read_text())
        else:
            rec["why"] = log.strip()[-600:]
        trace = tmp / f"profile-{name}.json"
        rc, plog = v4frun([art, "--device", "cuda", "--profile", trace, "--profile-runs", "5", "--print", "0"],
                          timeout=120)
        # The hotspot table: its header and the 12 heaviest dispatches.
        lines = plog.strip().splitlines()
        head = [i for i, l in enumerate(lines) if l.startswith("profile:")]
        table = lines[head[0]:head[0] + 14] if head else lines[-14:]
        rec["profile"] = "\n".join(table)
        results["bench"].append(rec)
        run = rec.get("run", {})
        print(f"bench {name}: p50 {run.get('p50_ms')} ms, mean {run.get('mean_ms')} ms, first {run.get('first_run_ms')} ms"
              if run else f"bench {name}: {rec.get('why', '')[:300]}")
        print(rec["profile"], flush=True)

    ok = sum(1 for c in results["cases"] if c["status"] == "ok")
    fails = [c for c in results["cases"] if c["status"] == "FAIL"]
    by_kind = {}
    for c in results["cases"]:
        k = (c.get("kind", "?"), c["variant"])
        by_kind.setdefault(k, [0, 0])
        by_kind[k][1] += 1
        by_kind[k][0] += c["status"] == "ok"
    results["summary"] = {f"{k[0]}/{k[1]}": f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())}
    results["seconds"] = round(time.time() - start, 1)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print("\nsummary:", json.dumps(results["summary"]), f"({ok} ok, {len(fails)} failed, {results['seconds']}s)")
    for c in fails[:40]:
        print(f"  FAIL {c['name']} [{c['variant']}]: {c.get('why', '')[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
