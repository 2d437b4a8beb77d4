"""Operations: TLS, graceful shutdown (SIGTERM drains requests in flight,
then exits 0), start-up failures with clear messages, --help."""
import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
import tritonclient.http as httpclient

from conftest import Server, copy_repository, tool
from test_protocol import infer, post


def test_tls(repository, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    s = Server(["--model-repository", repository, "--http-address", "127.0.0.1", "--http-port", "0",
                "--metrics-port", "-1", "--tls-cert", str(cert), "--tls-key", str(key)])
    try:
        assert s.ready["tls"] is True
        # Verified against the test's own certificate (not `insecure`).
        c = httpclient.InferenceServerClient(s.url, ssl=True, ssl_options={"ca_certs": str(cert)})
        x = np.ones((1, 16), np.float32)
        assert infer(c, "mlp", {"x": x}, True).as_numpy("y").shape == (1, 4)
        # Plain HTTP to the TLS port gets no answer.
        with pytest.raises(Exception):
            httpclient.InferenceServerClient(s.url, connection_timeout=3, network_timeout=3).is_server_live()
    finally:
        assert s.stop() == 0
    r = subprocess.run([tool("v4f-serve"), "--model-repository", repository, "--http-port", "0", "--metrics-port",
                        "-1", "--tls-cert", str(cert), "--tls-key", str(cert)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "cannot use the TLS certificate" in r.stderr


def test_sigterm_drains_requests_in_flight(repository, tmp_path):
    s = Server(["--model-repository", repository, "--http-address", "127.0.0.1", "--http-port", "0",
                "--metrics-port", "-1"])
    x = np.zeros((256, 1024), np.float32)
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [256, 1024],
                        "parameters": {"binary_data_size": x.nbytes}}]}
    header = json.dumps(body).encode()
    results = []

    def send():
        results.append(post(s.url, "/v2/models/slow/infer", header + x.tobytes(),
                            {"Inference-Header-Content-Length": str(len(header))})[0])

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    s.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join()
    assert s.proc.wait(timeout=60) == 0
    s.stop()
    assert results == [200, 200]
    msgs = [r["msg"] for r in s.log()]
    assert "shutting down: draining requests in flight" in msgs and msgs[-1] == "v4f-serve stopped"


def test_startup_failures_are_clear(repository, tmp_path):
    repo = copy_repository(repository, tmp_path / "repo", ["mlp"])
    with open(os.path.join(repo, "mlp", "config.json"), "w") as f:
        json.dump({"max_batch_size": 4, "instance_count": 2, "colour": "blue"}, f)
    args = [tool("v4f-serve"), "--model-repository", repo, "--http-port", "0", "--metrics-port", "-1"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and 'unknown field \\"colour\\"' in r.stderr
    # Serving the others instead of exiting.
    os.makedirs(os.path.join(repo, "broken", "1"))
    with open(os.path.join(repo, "broken", "1", "model.v4f"), "wb") as f:
        f.write(b"not an artifact")
    os.remove(os.path.join(repo, "mlp", "config.json"))
    s = Server(["--model-repository", repo, "--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "-1",
                "--exit-on-error=false"])
    try:
        errors = [r for r in s.log() if r["msg"] == "model failed to load"]
        assert len(errors) == 1 and "broken" in errors[0]["error"]
        index = json.loads(post(s.url, "/v2/repository/index", b"")[2])
        assert {"name": "mlp", "version": "2", "state": "READY"} in index
        assert [e for e in index if e["name"] == "broken"][0]["state"] == "UNAVAILABLE"
    finally:
        assert s.stop() == 0
    # A model that is not batchable but configured so.
    repo2 = copy_repository(repository, tmp_path / "repo2", ["dtypes"])
    with open(os.path.join(repo2, "dtypes", "config.json"), "w") as f:
        json.dump({"max_batch_size": 4}, f)
    r = subprocess.run([tool("v4f-serve"), "--model-repository", repo2, "--http-port", "0", "--metrics-port", "-1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "has no symbolic first (batch) dim" in r.stderr
    r = subprocess.run([tool("v4f-serve"), "--http-port", "0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--model-repository is required" in r.stderr
    r = subprocess.run([tool("v4f-serve"), "--model-repository", str(tmp_path / "missing")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and "missing" in r.stderr


def test_help_lists_the_options():
    r = subprocess.run([tool("v4f-serve"), "--help"], capture_output=True, text=True, check=True)
    for opt in ["--model-repository", "--http-port", "--metrics-port", "--tls-cert", "--token-file", "--audit-log",
                "--threads", "--exit-timeout-secs"]:
        assert opt in r.stdout


def test_require_signed(repository, tmp_path):
    """--require-signed: only artifacts signed by a --trusted-key load; the
    index says why the others did not."""
    repo = copy_repository(repository, tmp_path / "repo", ["mlp", "dtypes"])
    key = tmp_path / "key"
    subprocess.run([tool("v4fc"), "keygen", "--out", str(key)], check=True, capture_output=True)
    for v in ("1", "2"):
        subprocess.run([tool("v4fc"), "sign", os.path.join(repo, "mlp", v, "model.v4f"), "--key", str(key)],
                       check=True, capture_output=True)
    r = subprocess.run([tool("v4f-serve"), "--model-repository", repo, "--http-port", "0", "--metrics-port", "-1",
                        "--require-signed", "--trusted-key", f"{key}.pub"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "the artifact is not signed" in r.stderr and "dtypes" in r.stderr
    s = Server(["--model-repository", repo, "--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "-1",
                "--require-signed", "--trusted-key", f"{key}.pub", "--exit-on-error=false"])
    try:
        assert s.ready["require_signed"] is True
        index = json.loads(post(s.url, "/v2/repository/index", b"")[2])
        assert {"name": "mlp", "version": "2", "state": "READY"} in index
        dtypes = [e for e in index if e["name"] == "dtypes"][0]
        assert dtypes["state"] == "UNAVAILABLE" and "not signed" in dtypes["reason"]
        c = httpclient.InferenceServerClient(s.url)
        assert infer(c, "mlp", {"x": np.ones((1, 16), np.float32)}, True).as_numpy("y").shape == (1, 4)
    finally:
        assert s.stop() == 0
    r = subprocess.run([tool("v4f-serve"), "--model-repository", repo, "--require-signed"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "--require-signed needs at least one --trusted-key" in r.stderr


def test_encrypted_artifacts(repository, tmp_path):
    """--decrypt-key serves encrypted artifacts; without it they do not load."""
    repo = tmp_path / "repo"
    os.makedirs(repo / "enc" / "1")
    key = tmp_path / "enc.key"
    subprocess.run([tool("v4fc"), "keygen", "--type", "encryption", "--out", str(key)], check=True, capture_output=True)
    import onnx
    from make_repository import mlp_model
    onnx.save(mlp_model(1.0), str(tmp_path / "mlp.onnx"))
    subprocess.run([tool("v4fc"), "compile", str(tmp_path / "mlp.onnx"), "-o", str(repo / "enc" / "1" / "model.v4f"),
                    "--encrypt-key", str(key)], check=True, capture_output=True)
    r = subprocess.run([tool("v4f-serve"), "--model-repository", str(repo), "--http-port", "0", "--metrics-port", "-1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "no decryption key was given" in r.stderr
    s = Server(["--model-repository", str(repo), "--http-address", "127.0.0.1", "--http-port", "0",
                "--metrics-port", "-1", "--decrypt-key", str(key)])
    try:
        c = httpclient.InferenceServerClient(s.url)
        x = np.ones((2, 16), np.float32)
        y = infer(c, "enc", {"x": x}, True).as_numpy("y")
        ref = infer(c, "enc", {"x": x}, False).as_numpy("y")
        assert y.shape == (2, 4)
        np.testing.assert_array_equal(y, ref)
    finally:
        assert s.stop() == 0
