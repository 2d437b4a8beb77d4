#!/usr/bin/env python3
"""Cold-start and memory of v4f against ONNX Runtime, on the same machine and model.

  bench/load_rss.py                         # ResNet-50 (test/e2e/models.py), 1 thread
  bench/load_rss.py --model mlp --rounds 7  # any generator of test/e2e/models.py or an .onnx file

Measures, each in fresh processes, alternating for --rounds rounds:
  * v4f: `v4f-run model.v4f --input ... --threads T` — its "load time" (read,
    verify, map the artifact) + "first run"; and its peak RSS
    (`ru_maxrss` of the child) against the artifact's constants section +
    its arena peak (`v4fc inspect`) + 20 MB;
  * ORT: a Python process that creates an InferenceSession (intra_op_num_threads=T,
    ORT_ENABLE_ALL) and runs it once; the session creation + first run, measured
    inside the process after `import onnxruntime` (the import is reported apart).
Reports medians. Timings are never asserted anywhere.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import bench  # noqa: E402

ORT_CODE = r"""
import sys, time
import numpy as np
t0 = time.perf_counter()
import onnxruntime as ort
t1 = time.perf_counter()
so = ort.SessionOptions()
so.intra_op_num_threads = int(sys.argv[2])
so.inter_op_num_threads = 1
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
t2 = time.perf_counter()
feeds = {}
for i, a in enumerate(sys.argv[3:]):
    name, path = a.split("=", 1)
    feeds[name] = np.load(path)
t3 = time.perf_counter()
s.run(None, feeds)
t4 = time.perf_counter()
print("import_ms %.3f create_ms %.3f first_ms %.3f" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) * 1e3))
"""


# Runs argv[1:] and prints its stdout, then the child's peak RSS (KiB): a
# fresh process, so RUSAGE_CHILDREN covers that one child only.
RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True)\n"
    "print(r.stdout)\n"
    "print('peak_rss_kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build", default=str(ROOT / "build"))
    args = ap.parse_args()
    build = Path(args.build)
    v4fc, v4frun = build / "bin" / "v4fc", build / "bin" / "v4f-run"
    with tempfile.TemporaryDirectory(prefix="v4f-load-") as tmp:
        work = Path(tmp)
        name, onnx_path, inputs = bench.load_model(args.model, {}, work)
        artifact = work / f"{name}.v4f"
        subprocess.run([str(v4fc), "compile", str(onnx_path), "-o", str(artifact)], check=True)
        feeds = []
        for k, v in inputs.items():
            p = work / f"in_{k}.npy"
            np.save(p, v)
            feeds.append(f"{k}={p}")
        inspect = subprocess.run([str(v4fc), "inspect", str(artifact)], capture_output=True, text=True,
                                 check=True).stdout
        constants = int(re.search(r"^\s*constants\s+\d+\s+(\d+)", inspect, re.M).group(1))
        arena_m = re.search(r"arena peak:\s+(\d+) bytes", inspect)
        arena = int(arena_m.group(1)) if arena_m else 0
        v4f_load, v4f_first, v4f_rss = [], [], []
        ort_create, ort_first, ort_import = [], [], []
        for _ in range(args.rounds):
            v4f_cmd = [str(v4frun), str(artifact), "--threads", str(args.threads), "--print", "0"]
            for f in feeds:
                v4f_cmd += ["--input", f]
            out = subprocess.run([sys.executable, "-c", RSS_WRAPPER] + v4f_cmd, capture_output=True, text=True,
                                 check=True).stdout
            v4f_load.append(float(re.search(r"load time:\s+([0-9.]+) ms", out).group(1)))
            v4f_first.append(float(re.search(r"first run:\s+([0-9.]+) ms", out).group(1)))
            v4f_rss.append(int(re.search(r"peak_rss_kib (\d+)", out).group(1)) * 1024)
            o = subprocess.run([sys.executable, "-c", ORT_CODE, str(onnx_path), str(args.threads)] + feeds,
                               capture_output=True, text=True, check=True).stdout
            m = re.search(r"import_ms ([0-9.]+) create_ms ([0-9.]+) first_ms ([0-9.]+)", o)
            ort_import.append(float(m.group(1)))
            ort_create.append(float(m.group(2)))
            ort_first.append(float(m.group(3)))
        med = statistics.median
        v4f_total = med([a + b for a, b in zip(v4f_load, v4f_first)])
        ort_total = med([a + b for a, b in zip(ort_create, ort_first)])
        bound = constants + arena + 20 * 1024 * 1024
        print(f"# cold start and memory: {name}, {args.threads} thread(s), median of {args.rounds} rounds")
        print()
        print("| | v4f | ONNX Runtime | v4f / ORT |")
        print("|---|---:|---:|---:|")
        print(f"| load / session creation (ms) | {med(v4f_load):.1f} | {med(ort_create):.1f} | |")
        print(f"| first run (ms) | {med(v4f_first):.1f} | {med(ort_first):.1f} | |")
        print(f"| load + first result (ms) | {v4f_total:.1f} | {ort_total:.1f} | {v4f_total / ort_total:.3f} |")
        print(f"| (ORT: `import onnxruntime`, not counted) | | {med(ort_import):.1f} | |")
        print()
        print(f"v4f peak RSS {med(v4f_rss) / 2**20:.1f} MiB; constants {constants / 2**20:.1f} MiB + arena peak "
              f"{arena / 2**20:.1f} MiB + 20 MiB = {bound / 2**20:.1f} MiB: "
              f"{'within' if med(v4f_rss) <= bound else 'ABOVE'} the bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
