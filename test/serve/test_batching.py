"""Dynamic batching: concurrent batch-1 (and batch-3) requests are joined
into batches, and every client gets exactly its own rows back; a full queue
answers 503 with Retry-After; a request whose timeout expires in the queue
gets 504 and is not run."""
import concurrent.futures
import json
import threading
import time
import urllib.request

import numpy as np
import tritonclient.http as httpclient

from test_protocol import infer, post


def metric(server, name):
    with urllib.request.urlopen(f"http://localhost:{server.metrics_port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split(" ")[1])
    return 0.0


def test_concurrent_clients_get_their_own_rows(shared_server):
    c0 = httpclient.InferenceServerClient(shared_server.url)
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((1 if i % 4 else 3, 16)).astype(np.float32) for i in range(64)]
    # References one by one (batch of exactly that request).
    refs = [infer(c0, "mlp", {"x": x}, True, version="1").as_numpy("y") for x in xs]
    execs0 = metric(shared_server, 'nv_inference_exec_count{model="mlp",version="1"}')
    rows0 = metric(shared_server, 'nv_inference_count{model="mlp",version="1"}')

    def client(k):
        c = httpclient.InferenceServerClient(shared_server.url)
        bad = 0
        for i in range(k, len(xs), 16):
            r = infer(c, "mlp", {"x": xs[i]}, i % 2 == 0, version="1")
            y = r.as_numpy("y")
            bad += int(y.shape != refs[i].shape or not np.allclose(y, refs[i], rtol=1e-5, atol=1e-5))
        return bad

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert sum(pool.map(client, range(16))) == 0
    execs = metric(shared_server, 'nv_inference_exec_count{model="mlp",version="1"}') - execs0
    rows = metric(shared_server, 'nv_inference_count{model="mlp",version="1"}') - rows0
    assert rows == sum(x.shape[0] for x in xs)
    # 16 clients and a 20 ms window: requests were joined.
    assert execs < len(xs) * 0.75, (execs, len(xs))


def test_queue_full_is_503_with_retry_after(shared_server):
    x = np.zeros((256, 1024), np.float32)
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [256, 1024],
                        "parameters": {"binary_data_size": x.nbytes}}]}
    header = json.dumps(body).encode()
    payload = header + x.tobytes()
    hdrs = {"Inference-Header-Content-Length": str(len(header))}
    results = []
    lock = threading.Lock()

    def send():
        s, h, _ = post(shared_server.url, "/v2/models/slow/infer", payload, hdrs)
        with lock:
            results.append((s, h.get("Retry-After")))

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(s for s, _ in results)
    assert codes.count(200) >= 2 and 503 in codes, codes
    assert all(ra == "1" for s, ra in results if s == 503)


def test_timeout_in_queue_is_504(shared_server):
    x = np.zeros((256, 1024), np.float32)
    results = []

    def send(timeout_us):
        body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [256, 1024],
                            "parameters": {"binary_data_size": x.nbytes}}]}
        if timeout_us:
            body["parameters"] = {"timeout": timeout_us}
        header = json.dumps(body).encode()
        s, _, data = post(shared_server.url, "/v2/models/slow/infer", header + x.tobytes(),
                          {"Inference-Header-Content-Length": str(len(header))})
        results.append((timeout_us, s, data))

    first = threading.Thread(target=send, args=(0,))
    first.start()
    time.sleep(0.02)  # the first request is running; the second waits behind it
    send(1000)
    first.join()
    by = {t: (s, d) for t, s, d in results}
    assert by[0][0] == 200
    assert by[1000][0] == 504 and b"timeout expired" in by[1000][1]
