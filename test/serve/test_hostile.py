"""Hostile requests: each gets a clear 4xx (or, for a client that never
finishes its request, a closed connection), and the server stays up and
keeps serving correct results."""
import asyncio
import json
import resource
import socket
import time

import numpy as np
import pytest
import tritonclient.http as httpclient

from test_protocol import infer, post


@pytest.fixture(scope="module")
def server(repository):
    from conftest import Server
    s = Server(["--model-repository", repository, "--http-address", "127.0.0.1", "--http-port", "0",
                "--metrics-port", "-1", "--threads", "2", "--max-request-bytes", "65536",
                "--read-timeout-secs", "1"])
    yield s
    assert s.stop() == 0


def x_input(shape=(1, 16), datatype="FP32", data=None):
    n = int(np.prod(shape))
    return {"name": "x", "datatype": datatype, "shape": list(shape), "data": data if data is not None else [0.5] * n}


BINARY_HEADER = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                       "parameters": {"binary_data_size": 60}}]}).encode()

CASES = [
    # (name, path, body bytes, extra headers, status, message fragment)
    ("malformed json", "/v2/models/mlp/infer", b'{"inputs": [', {}, 400, "not valid JSON"),
    ("not an object", "/v2/models/mlp/infer", b"[1, 2]", {}, 400, "not a JSON object"),
    ("no inputs", "/v2/models/mlp/infer", b"{}", {}, 400, "no \\\"inputs\\\" array"),
    ("wrong dtype", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(datatype="FP64")]}).encode(), {}, 400,
     "datatype FP64, the model takes FP32"),
    ("unknown dtype", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(datatype="FP128")]}).encode(), {}, 400,
     "unknown datatype"),
    ("bytes dtype", "/v2/models/mlp/infer",
     json.dumps({"inputs": [{"name": "x", "datatype": "BYTES", "shape": [1], "data": ["a"]}]}).encode(), {}, 400,
     "BYTES is not supported"),
    ("wrong rank", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(16,))]}).encode(), {}, 400,
     "has rank 1"),
    ("wrong static dim", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(1, 15))]}).encode(), {}, 400,
     "the model takes [-1,16]"),
    ("too few elements", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(data=[1.0] * 15)]}).encode(), {},
     400, "data has 15 elements"),
    ("too many elements", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(data=[1.0] * 17)]}).encode(), {},
     400, "more elements than shape"),
    ("string element", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(data=["a"] * 16)]}).encode(), {}, 400,
     "is not a valid FP32"),
    ("int out of range", "/v2/models/dtypes/infer",
     json.dumps({"inputs": [{"name": "a", "datatype": "INT32", "shape": [2, 3], "data": [2**40] * 6}]}).encode(), {},
     400, "is not a valid INT32"),
    ("nested too deep", "/v2/models/mlp/infer", (b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], '
                                                b'"data": ' + b"[" * 100 + b"1" + b"]" * 100 + b"}]}"), {}, 400,
     "nested too deeply"),
    ("huge shape", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(2**31, 2**31), data=[])]}).encode(),
     {}, 400, "too large"),
    ("negative dim", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(-1, 16), data=[])]}).encode(), {},
     400, "negative dim"),
    ("batch above max", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(9, 16))]}).encode(), {}, 400,
     "batch size 9 is not in [1, max_batch_size 8]"),
    ("zero batch", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(shape=(0, 16), data=[])]}).encode(), {},
     400, "batch size 0"),
    ("unknown input", "/v2/models/mlp/infer",
     json.dumps({"inputs": [x_input(), dict(x_input(), name="z")]}).encode(), {}, 400, "has no input 'z'"),
    ("duplicate input", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input(), x_input()]}).encode(), {}, 400,
     "given twice"),
    ("unknown output", "/v2/models/mlp/infer",
     json.dumps({"inputs": [x_input()], "outputs": [{"name": "nope"}]}).encode(), {}, 400, "has no output 'nope'"),
    ("binary size wrong", "/v2/models/mlp/infer", BINARY_HEADER + b"\0" * 60,
     {"Inference-Header-Content-Length": str(len(BINARY_HEADER))}, 400, "binary_data_size 60 != 64"),
    ("header length past body", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input()]}).encode(),
     {"Inference-Header-Content-Length": "999999"}, 400, "is not a length within"),
    ("header length not a number", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input()]}).encode(),
     {"Inference-Header-Content-Length": "12abc"}, 400, "is not a length within"),
    ("header length cuts json", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input()]}).encode(),
     {"Inference-Header-Content-Length": "20"}, 400, "not valid JSON"),
    ("leftover binary", "/v2/models/mlp/infer", json.dumps({"inputs": [x_input()]}).encode() + b"junk",
     {"Inference-Header-Content-Length": str(len(json.dumps({"inputs": [x_input()]})))}, 400,
     "no input claims"),
    ("compressed body", "/v2/models/mlp/infer", b"\x1f\x8b", {"Content-Encoding": "gzip"}, 415, "not supported"),
    ("body over the limit", "/v2/models/mlp/infer", b"{" + b" " * 70000 + b"}", {}, 413, "exceeds"),
    ("unknown model", "/v2/models/nosuch/infer", json.dumps({"inputs": [x_input()]}).encode(), {}, 404,
     "unknown model 'nosuch'"),
    ("unknown version", "/v2/models/mlp/versions/9/infer", json.dumps({"inputs": [x_input()]}).encode(), {}, 404,
     "no loaded version 9"),
    ("bad version", "/v2/models/mlp/versions/abc/infer", json.dumps({"inputs": [x_input()]}).encode(), {}, 400,
     "not a positive integer"),
    ("unknown endpoint", "/v2/models/mlp/explode", b"{}", {}, 404, "no endpoint"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_request_gets_clear_4xx(server, case):
    _, path, body, headers, want, fragment = case
    status, _, data = post(server.url, path, body, dict(headers))
    assert status == want, data
    assert fragment in data.decode(), data
    assert "error" in json.loads(data)


def raw(port, payload, read_timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    s.sendall(payload)
    chunks = []
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            chunks.append(c)
    except socket.timeout:
        pass
    s.close()
    return b"".join(chunks)


def test_garbage_request_line(server):
    assert raw(server.port, b"HELLO\r\n\r\n").startswith(b"HTTP/1.1 400")


def test_slow_client_is_cut_off_and_others_are_served(server):
    slow = socket.create_connection(("127.0.0.1", server.port))
    slow.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
    c = httpclient.InferenceServerClient(server.url)
    x = np.ones((1, 16), np.float32)
    t0 = time.time()
    assert infer(c, "mlp", {"x": x}, True).as_numpy("y").shape == (1, 4)
    assert time.time() - t0 < 1.0
    slow.settimeout(10)
    t0 = time.time()
    rest = slow.recv(65536)  # closed (or answered 4xx) after --read-timeout-secs 1
    assert rest == b"" or rest.startswith(b"HTTP/1.1 4"), rest[:80]
    assert time.time() - t0 < 5
    slow.close()


def test_thousand_concurrent_connections(server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))

    async def one(i):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        await barrier.wait()
        path = "/v2/health/ready" if i % 2 else "/v2/models/mlp"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 60)
        writer.close()
        return data.split(b"\r\n", 1)[0]

    async def main():
        global barrier
        barrier = asyncio.Barrier(1000)
        return await asyncio.gather(*[one(i) for i in range(1000)])

    lines = asyncio.run(main())
    assert lines.count(b"HTTP/1.1 200 OK") == 1000, set(lines)


def test_still_serving_after_everything(server):
    c = httpclient.InferenceServerClient(server.url)
    assert c.is_server_live() and c.is_server_ready()
    x = np.random.default_rng(9).standard_normal((2, 16)).astype(np.float32)
    a = infer(c, "mlp", {"x": x}, True).as_numpy("y")
    b = infer(c, "mlp", {"x": x}, False).as_numpy("y")
    np.testing.assert_array_equal(a, b)
    assert server.proc.poll() is None
