"""The KServe v2 protocol through the real tritonclient: metadata, health,
JSON and binary tensors of every datatype, requested outputs, request ids,
and results equal to v4f-run's on the same artifact."""
import json
import os
import subprocess
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient

from conftest import tool


def v4f_run(artifact, inputs, tmp_path):
    """Runs the artifact with v4f-run and returns its outputs."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = [tool("v4f-run"), artifact, "--output-dir", str(tmp_path / "out"), "--print", "0"]
    for name, value in inputs.items():
        path = tmp_path / f"{name}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    subprocess.run(args, check=True, capture_output=True)
    return {f[:-4]: np.load(tmp_path / "out" / f) for f in os.listdir(tmp_path / "out")}


def infer(client, model, arrays, binary, outputs=None, version="", **kw):
    inputs = []
    for name, value in arrays.items():
        dt = {np.float32: "FP32", np.float16: "FP16", np.int32: "INT32", np.uint8: "UINT8",
              np.bool_: "BOOL", np.float64: "FP64", np.int64: "INT64"}[value.dtype.type]
        i = httpclient.InferInput(name, list(value.shape), dt)
        i.set_data_from_numpy(value, binary_data=binary)
        inputs.append(i)
    outs = None
    if outputs:
        outs = [httpclient.InferRequestedOutput(o, binary_data=binary) for o in outputs]
    return client.infer(model, inputs, outputs=outs, model_version=version, **kw)


def test_server_metadata_and_health(shared_server):
    c = httpclient.InferenceServerClient(shared_server.url)
    assert c.is_server_live()
    assert c.is_server_ready()
    meta = c.get_server_metadata()
    assert meta["name"] == "v4f-serve"
    assert "binary_tensor_data" in meta["extensions"]
    assert c.is_model_ready("mlp")
    assert c.is_model_ready("mlp", "1") and c.is_model_ready("mlp", "2")
    assert not c.is_model_ready("mlp", "3")
    assert not c.is_model_ready("nosuchmodel")


def test_model_metadata_and_config(shared_server):
    c = httpclient.InferenceServerClient(shared_server.url)
    m = c.get_model_metadata("mlp")
    assert m["name"] == "mlp" and m["platform"] == "v4f"
    assert m["versions"] == ["1", "2"]
    assert m["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 16]}]
    assert [o["name"] for o in m["outputs"]] == ["y", "s"]
    d = c.get_model_metadata("dtypes")
    assert [i["datatype"] for i in d["inputs"]] == ["INT32", "FP16", "UINT8", "BOOL"]
    assert [o["datatype"] for o in d["outputs"]] == ["INT32", "FP16", "INT64", "BOOL", "FP64"]
    cfg = c.get_model_config("mlp")
    assert cfg["max_batch_size"] == 8 and cfg["instance_count"] == 2
    with pytest.raises(Exception, match="unknown model"):
        c.get_model_metadata("nosuchmodel")


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_mlp_matches_v4f_run(shared_server, repository, tmp_path, binary):
    c = httpclient.InferenceServerClient(shared_server.url)
    x = np.random.default_rng(1).standard_normal((3, 16)).astype(np.float32)
    r = infer(c, "mlp", {"x": x}, binary, request_id="req-17")
    assert r.get_response()["id"] == "req-17"
    assert r.get_response()["model_version"] == "2"  # the highest version by default
    ref = v4f_run(os.path.join(repository, "mlp", "2", "model.v4f"), {"x": x}, tmp_path)
    # Binary is exact; JSON carries floats in decimal, exact for float32 too
    # (shortest round-trip formatting).
    np.testing.assert_array_equal(r.as_numpy("y"), ref["y"])
    np.testing.assert_array_equal(r.as_numpy("s"), ref["s"])
    r1 = infer(c, "mlp", {"x": x}, binary, version="1")
    ref1 = v4f_run(os.path.join(repository, "mlp", "1", "model.v4f"), {"x": x}, tmp_path / "v1")
    np.testing.assert_array_equal(r1.as_numpy("y"), ref1["y"])
    np.testing.assert_allclose(r.as_numpy("y"), 2 * r1.as_numpy("y"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_every_datatype(shared_server, repository, tmp_path, binary):
    c = httpclient.InferenceServerClient(shared_server.url)
    a = np.array([[1, -2, 3], [2**30, -(2**31), 7]], np.int32)
    b = np.array([[0.5, -1.25, 3.0], [65504 / 4, 1e-4, -0.0]], np.float16)
    u = np.array([[0, 1, 255], [7, 128, 9]], np.uint8)
    d = np.array([[True, False, True], [False, False, True]])
    if not binary:
        # tritonclient refuses FP16 as JSON (no JSON number type for it); the
        # server accepts it, tested below with a raw request.
        feed = {"a": a, "c": u, "d": d}
        with pytest.raises(Exception, match="needs input 'b'"):
            infer(c, "dtypes", feed, binary)
        return
    r = infer(c, "dtypes", {"a": a, "b": b, "c": u, "d": d}, binary)
    ref = v4f_run(os.path.join(repository, "dtypes", "1", "model.v4f"), {"a": a, "b": b, "c": u, "d": d}, tmp_path)
    for name in ["a2", "b2", "c64", "nd", "af64"]:
        got = r.as_numpy(name)
        assert got.dtype == ref[name].dtype, name
        np.testing.assert_array_equal(got, ref[name])
    np.testing.assert_array_equal(r.as_numpy("a2"), a + a)  # int32 wraps as the model computes it
    np.testing.assert_array_equal(r.as_numpy("nd"), ~d)


def post(url, path, body, headers=None):
    req = urllib.request.Request(f"http://{url}{path}", data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_json_fp16_nested_data_and_requested_outputs(shared_server):
    body = {"id": "nested", "inputs": [
        {"name": "a", "datatype": "INT32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]},
        {"name": "b", "datatype": "FP16", "shape": [2, 3], "data": [0.5, 1, 2, 4, 8, 16]},
        {"name": "c", "datatype": "UINT8", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 255]},
        {"name": "d", "datatype": "BOOL", "shape": [2, 3], "data": [True, False, True, False, True, False]}],
        "outputs": [{"name": "b2"}, {"name": "nd"}, {"name": "c64", "parameters": {"binary_data": False}}]}
    status, headers, data = post(shared_server.url, "/v2/models/dtypes/infer", json.dumps(body).encode())
    assert status == 200, data
    r = json.loads(data)
    assert r["id"] == "nested"
    assert [o["name"] for o in r["outputs"]] == ["b2", "nd", "c64"]
    assert r["outputs"][0] == {"name": "b2", "datatype": "FP16", "shape": [2, 3], "data": [1, 2, 4, 8, 16, 32]}
    assert r["outputs"][1]["data"] == [False, True, False, True, False, True]
    assert r["outputs"][2]["data"] == [1, 2, 3, 4, 5, 255]


def test_binary_output_with_json_input(shared_server):
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": x.ravel().tolist()}],
            "parameters": {"binary_data_output": True}}
    status, headers, data = post(shared_server.url, "/v2/models/mlp/versions/1/infer", json.dumps(body).encode())
    assert status == 200
    n = int(headers["Inference-Header-Content-Length"])
    header = json.loads(data[:n])
    sizes = [o["parameters"]["binary_data_size"] for o in header["outputs"]]
    assert sizes == [16, 4] and len(data) == n + 20
    y = np.frombuffer(data[n:n + 16], np.float32)
    c = httpclient.InferenceServerClient(shared_server.url)
    ref = infer(c, "mlp", {"x": x}, True, version="1").as_numpy("y")
    np.testing.assert_array_equal(y.reshape(1, 4), ref)


def test_metrics_count_requests(shared_server):
    c = httpclient.InferenceServerClient(shared_server.url)
    x = np.ones((2, 16), np.float32)
    infer(c, "mlp", {"x": x}, True, version="1")
    with urllib.request.urlopen(f"http://localhost:{shared_server.metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    lines = {l.split(" ")[0]: float(l.split(" ")[1]) for l in text.splitlines() if l and not l.startswith("#")}
    assert lines['nv_inference_request_success{model="mlp",version="1"}'] >= 1
    assert lines['nv_inference_count{model="mlp",version="1"}'] >= 2
    assert lines['nv_inference_exec_count{model="mlp",version="1"}'] >= 1
    assert 'nv_inference_queue_duration_us{model="mlp",version="1"}' in lines
    assert 'nv_inference_compute_infer_duration_us{model="mlp",version="1"}' in lines
    assert lines['v4f_inference_batch_size_bucket{model="mlp",version="1",le="+Inf"}'] >= 1
    assert "# TYPE v4f_inference_request_latency_seconds histogram" in text
