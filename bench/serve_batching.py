#!/usr/bin/env python3
"""Dynamic batching benchmark of v4f-serve (issue: serving): C concurrent
clients send batch-1 requests to a ResNet-18-sized model (random weights,
3x224x224, symbolic batch) over loopback with binary tensors, first to the
model served without dynamic batching (each request runs alone), then with
it. Prints throughput, p50/p99 latency, the mean batch size and the mean
batch compute time (from the server's metrics), and checks every response
against the batch-1 reference of its input. Never asserted in tests.

  bench/serve_batching.py [--build build] [--clients 16] [--seconds 20]
                          [--delay-us 8000] [--max-batch 16]
"""
import argparse
import json
import os
import platform
import shutil
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from serve_common import Client, ServeProcess, ensure_repository  # noqa: E402


def run_mode(server, model, clients, seconds, inputs, refs):
    lat, wrong, failed = [], [0], [0]
    stop = threading.Event()
    measuring = threading.Event()

    def worker(k):
        c = Client(server.port, model, "input", inputs[k], ["logits"])
        while not stop.is_set():
            t0 = time.perf_counter()
            status, out = c.infer()
            dt = time.perf_counter() - t0
            if status != 200:
                failed[0] += 1
                continue
            if not np.allclose(out["logits"], refs[k], rtol=1e-4, atol=1e-4):
                wrong[0] += 1
            if measuring.is_set():
                lat.append(dt)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    time.sleep(3)  # warm-up
    m0 = server.metrics()
    lat.clear()
    measuring.set()
    t0 = time.perf_counter()
    time.sleep(seconds)
    measuring.clear()
    elapsed = time.perf_counter() - t0
    m1 = server.metrics()
    n = len(lat)
    stop.set()
    for t in threads:
        t.join()
    key = f'{{model="{model}",version="1"}}'
    d = {k: m1.get(name + key, 0) - m0.get(name + key, 0) for k, name in
         [("req", "nv_inference_request_success"), ("rows", "nv_inference_count"),
          ("execs", "nv_inference_exec_count"), ("infer_us", "nv_inference_compute_infer_duration_us")]}
    lat.sort()
    return {"model": model, "requests": n, "throughput_rps": n / elapsed,
            "p50_ms": 1e3 * lat[n // 2], "p99_ms": 1e3 * lat[min(n - 1, int(n * 0.99))],
            "mean_batch": d["rows"] / max(d["execs"], 1),
            "batch_compute_ms": d["infer_us"] / max(d["req"], 1) / 1e3,
            "wrong": wrong[0], "failed": failed[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default="/tmp/v4f-serve-bench")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--delay-us", type=int, default=8000)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "serve_batching.json"))
    a = ap.parse_args()
    repo = os.path.join(a.work_dir, "repo")
    src = ensure_repository(a.build, os.path.join(a.work_dir, "src"), resnet18=True)
    shutil.rmtree(repo, ignore_errors=True)
    configs = {
        "resnet18_single": {"max_batch_size": a.max_batch},
        "resnet18_batched": {"max_batch_size": a.max_batch,
                             "dynamic_batching": {"max_queue_delay_microseconds": a.delay_us,
                                                  "preferred_batch_size": [a.max_batch]}},
    }
    for name, cfg in configs.items():
        os.makedirs(os.path.join(repo, name, "1"))
        shutil.copy(os.path.join(src, "resnet18", "1", "model.v4f"), os.path.join(repo, name, "1", "model.v4f"))
        json.dump(cfg, open(os.path.join(repo, name, "config.json"), "w"))
    server = ServeProcess(a.build, repo, "--threads", str(a.threads), "--http-thread-count", str(a.clients + 8))
    try:
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(a.clients)]
        refs = []
        for x in inputs:  # batch-1 references, one request at a time
            status, out = Client(server.port, "resnet18_single", "input", x, ["logits"]).infer()
            assert status == 200
            refs.append(out["logits"].copy())
        results = [run_mode(server, m, a.clients, a.seconds, inputs, refs)
                   for m in ("resnet18_single", "resnet18_batched")]
    finally:
        server.stop()
    single, batched = results
    report = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
              "clients": a.clients, "delay_us": a.delay_us, "max_batch": a.max_batch, "results": results,
              "throughput_ratio": batched["throughput_rps"] / single["throughput_rps"],
              "p99_bound_ms": a.delay_us / 1e3 + 2 * batched["batch_compute_ms"]}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    json.dump(report, open(a.out, "w"), indent=2)
    print(f"| mode | req/s | p50 ms | p99 ms | mean batch | batch compute ms | wrong | failed |")
    print(f"|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['model']} | {r['throughput_rps']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
              f"{r['mean_batch']:.2f} | {r['batch_compute_ms']:.1f} | {r['wrong']} | {r['failed']} |")
    print(f"throughput with / without batching: {report['throughput_ratio']:.2f}x; p99 {batched['p99_ms']:.1f} ms "
          f"vs bound (delay + 2 x batch compute) {report['p99_bound_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
