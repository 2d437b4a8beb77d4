#!/usr/bin/env python3
"""Soak test of v4f-serve: C clients (default 8) send requests over loopback
for D seconds (default 60) to the dynamically batched `mlp` test model
(binary tensors, batch 1-3 rows), checking every result against its
one-at-a-time reference; then reports requests sent, lost (no 200) and
wrong, and the server's RSS after warm-up and at the end, sampled every
second. Never asserted in tests.

  bench/serve_soak.py [--build build] [--clients 8] [--seconds 60]
"""
import argparse
import json
import os
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from serve_common import Client, ServeProcess, ensure_repository  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default="/tmp/v4f-serve-soak")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "serve_soak.json"))
    a = ap.parse_args()
    repo = ensure_repository(a.build, os.path.join(a.work_dir, "repo"))
    server = ServeProcess(a.build, repo, "--threads", "2")
    rng = np.random.default_rng(11)
    inputs = [rng.standard_normal((1 + i % 3, 16)).astype(np.float32) for i in range(64)]
    refs = []
    for x in inputs:
        status, out = Client(server.port, "mlp", "x", x, ["y", "s"]).infer()
        assert status == 200
        refs.append({k: v.copy() for k, v in out.items()})
    sent, lost, wrong = [0], [0], [0]
    stop = threading.Event()

    def worker(k):
        # One keep-alive connection per client, cycling through its inputs.
        idx = list(range(k, len(inputs), a.clients))
        c = Client(server.port, "mlp", "x", inputs[idx[0]], ["y", "s"])
        j = 0
        while not stop.is_set():
            i = idx[j % len(idx)]
            j += 1
            c.set_input("x", inputs[i])
            try:
                status, out = c.infer()
            except Exception:  # noqa: BLE001 - a dropped connection is a lost request
                status, out = 0, None
            sent[0] += 1
            if status != 200:
                lost[0] += 1
                continue
            if not all(np.allclose(out[n], refs[i][n], rtol=1e-5, atol=1e-5) for n in ("y", "s")):
                wrong[0] += 1

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(a.clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    rss = []
    while time.time() - t0 < a.seconds:
        time.sleep(1)
        rss.append((round(time.time() - t0, 1), server.rss_kib()))
    stop.set()
    for t in threads:
        t.join()
    m = server.metrics()
    rc = server.stop()
    after_warmup = [r for t, r in rss if t >= a.warmup]
    report = {"clients": a.clients, "seconds": a.seconds, "requests": sent[0], "lost": lost[0], "wrong": wrong[0],
              "rss_kib_after_warmup": after_warmup[0], "rss_kib_end": rss[-1][1],
              "rss_kib_max_after_warmup": max(after_warmup), "rss_samples": rss,
              "executions": m.get('nv_inference_exec_count{model="mlp",version="2"}', 0),
              "server_exit_code": rc}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    json.dump(report, open(a.out, "w"), indent=2)
    print(f"{sent[0]} requests in {a.seconds:.0f} s from {a.clients} clients: {lost[0]} lost, {wrong[0]} wrong; "
          f"{report['executions']:.0f} batches; RSS {report['rss_kib_after_warmup']} KiB after {a.warmup:.0f} s "
          f"warm-up, {report['rss_kib_end']} KiB at the end (max {report['rss_kib_max_after_warmup']}); "
          f"server exit {rc}")
    return 0 if lost[0] == 0 and wrong[0] == 0 and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
