"""Access control and audit: the matrix of no token / wrong token / wrong
role / wrong model / right token on every protected endpoint kind, 401/403
with a JSON error, public health, the token file holding no token, and the
audit log checked line by line (every request, token id never the token)."""
import json
import os
import stat
import subprocess
import urllib.request

import numpy as np
import pytest

from conftest import tool


def add_token(path, ident, roles, models):
    r = subprocess.run([tool("v4f-serve"), "token", "add", "--token-file", str(path), "--id", ident,
                        "--roles", roles, "--models", models], capture_output=True, text=True, check=True)
    return r.stdout.strip()


def call(url, method, path, token=None, body=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"http://{url}{path}", data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture
def secured(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    t = {
        "infer": add_token(tokens, "alice", "infer", "mlp"),
        "meta": add_token(tokens, "bob", "metadata", "*"),
        "admin": add_token(tokens, "root", "admin,infer,metadata", "*"),
    }
    audit = tmp_path / "audit.log"
    s = start_server("--token-file", str(tokens), "--audit-log", str(audit))
    return s, t, tokens, audit


def test_token_file_holds_only_salted_hashes(secured):
    _, t, tokens, _ = secured
    text = tokens.read_text()
    for tok in t.values():
        assert tok.split(".")[1] not in text
    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600
    entries = json.loads(text)["tokens"]
    assert [e["id"] for e in entries] == ["alice", "bob", "root"]
    assert len({e["salt"] for e in entries}) == 3
    r = subprocess.run([tool("v4f-serve"), "token", "add", "--token-file", str(tokens), "--id", "alice",
                        "--roles", "infer", "--models", "*"], capture_output=True, text=True)
    assert r.returncode == 1 and "already exists" in r.stderr
    r = subprocess.run([tool("v4f-serve"), "token", "add", "--token-file", str(tokens), "--id", "x",
                        "--roles", "superuser", "--models", "*"], capture_output=True, text=True)
    assert r.returncode == 1 and "unknown role 'superuser'" in r.stderr


def test_auth_matrix_and_audit(secured):
    s, t, _, audit = secured
    x = np.ones((1, 16), np.float32)
    infer_body = json.dumps({"id": "r1", "inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                                     "data": x.ravel().tolist()}]}).encode()
    wrong = t["infer"].split(".")[0] + "." + "0" * 64
    cases = [
        # (method, path, token, body, expected status, expected token_id in audit)
        ("GET", "/v2/health/live", None, None, 200, None),
        ("GET", "/v2/health/ready", None, None, 200, None),
        ("POST", "/v2/models/mlp/infer", None, infer_body, 401, None),
        ("POST", "/v2/models/mlp/infer", wrong, infer_body, 401, None),
        ("POST", "/v2/models/mlp/infer", "garbage", infer_body, 401, None),
        ("POST", "/v2/models/mlp/infer", t["meta"], infer_body, 403, "bob"),        # wrong role
        ("POST", "/v2/models/dtypes/infer", t["infer"], infer_body, 403, "alice"),  # wrong model
        ("POST", "/v2/models/mlp/infer", t["infer"], infer_body, 200, "alice"),
        ("GET", "/v2/models/mlp", t["infer"], None, 403, "alice"),                  # infer only
        ("GET", "/v2/models/mlp", t["meta"], None, 200, "bob"),
        ("POST", "/v2/repository/index", t["meta"], b"{}", 403, "bob"),
        ("POST", "/v2/repository/models/dtypes/unload", t["infer"], b"", 403, "alice"),
        ("POST", "/v2/repository/index", t["admin"], b"{}", 200, "root"),
        ("GET", "/v2/nosuch", None, None, 401, None),
        ("GET", "/v2/nosuch", t["meta"], None, 404, "bob"),
    ]
    for method, path, token, body, want, _ in cases:
        status, data = call(s.url, method, path, token, body)
        assert status == want, (method, path, token and token[:8], status, data)
        if status >= 400:
            assert "error" in json.loads(data), data
    # The audit log: one line per request, in order, with the token id and
    # never the token.
    s.stop()
    lines = [json.loads(l) for l in audit.read_text().splitlines()]
    assert len(lines) == len(cases), [l["path"] for l in lines]
    text = audit.read_text()
    for tok in t.values():
        assert tok.split(".")[1] not in text
    for (method, path, token, body, want, who), rec in zip(cases, lines):
        assert rec["method"] == method and rec["path"] == path and rec["status"] == want, rec
        assert rec["token_id"] == who, rec
        assert rec["client"].startswith("127.0.0.1:")
        assert set(rec) >= {"time", "token_id", "client", "model", "version", "action", "status", "bytes_in",
                            "bytes_out", "request_id"}
    ok = lines[7]
    assert ok["action"] == "infer" and ok["model"] == "mlp" and ok["version"] == "2"
    assert ok["request_id"] == "r1" and ok["bytes_in"] == len(infer_body) and ok["bytes_out"] > 0
    # A refused request never reached the model: its body was not even read.
    assert lines[2]["bytes_in"] == 0 and lines[2]["action"] == "infer"


def test_audit_log_rotates(start_server, tmp_path):
    audit = tmp_path / "audit.log"
    s = start_server("--audit-log", str(audit), "--audit-log-max-bytes", "4096", "--audit-log-keep", "2")
    for _ in range(60):
        assert call(s.url, "GET", "/v2/health/live")[0] == 200
    s.stop()
    files = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("audit.log"))
    assert files == ["audit.log", "audit.log.1", "audit.log.2"]
    for f in files:
        assert (tmp_path / f).stat().st_size <= 4096
        for line in (tmp_path / f).read_text().splitlines():
            assert json.loads(line)["action"] == "health_live"


def test_bad_token_file_is_refused_at_start(repository, tmp_path):
    bad = tmp_path / "tokens.json"
    bad.write_text('{"tokens": [{"id": "a", "salt": "00", "sha256": "00", "roles": ["infer"], "models": ["*"]}]}')
    r = subprocess.run([tool("v4f-serve"), "--model-repository", repository, "--token-file", str(bad),
                        "--http-port", "0", "--metrics-port", "-1"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "salt" in r.stderr and str(bad) in r.stderr
