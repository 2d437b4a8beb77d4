"""Repository control: index, unload, load (replacing versions) under
traffic with no failed request, version policies."""
import json
import os
import shutil
import threading
import time
import urllib.request

import numpy as np
import tritonclient.http as httpclient

from conftest import copy_repository
from test_protocol import infer, post


def test_index_load_unload(start_server, repository, tmp_path):
    repo = copy_repository(repository, tmp_path / "repo", ["mlp", "dtypes"])
    s = start_server(repo=repo)
    status, _, data = post(s.url, "/v2/repository/index", b"{}")
    assert status == 200
    index = json.loads(data)
    assert {"name": "mlp", "version": "2", "state": "READY"} in index
    assert {"name": "dtypes", "version": "1", "state": "READY"} in index
    assert post(s.url, "/v2/repository/models/dtypes/unload", b"")[0] == 200
    c = httpclient.InferenceServerClient(s.url)
    assert not c.is_model_ready("dtypes")
    index = json.loads(post(s.url, "/v2/repository/index", b"{}")[2])
    assert {"name": "dtypes", "state": "UNAVAILABLE", "reason": "unloaded"} in index
    assert post(s.url, "/v2/repository/models/dtypes/unload", b"")[0] == 404
    assert post(s.url, "/v2/repository/models/dtypes/load", b"")[0] == 200
    assert c.is_model_ready("dtypes")
    assert post(s.url, "/v2/repository/models/nosuch/load", b"")[0] == 404
    assert post(s.url, "/v2/repository/models/..%2f..%2fetc/load", b"")[0] in (400, 404)
    # A broken config: the load fails clearly and the index says why.
    with open(os.path.join(repo, "dtypes", "config.json"), "w") as f:
        f.write('{"max_batch_size": -1}')
    status, _, data = post(s.url, "/v2/repository/models/dtypes/load", b"")
    assert status == 400 and b"max_batch_size" in data
    # The loaded version keeps serving after a failed reload.
    assert c.is_model_ready("dtypes")


def test_reload_under_traffic_loses_nothing(start_server, repository, tmp_path):
    repo = copy_repository(repository, tmp_path / "repo", ["mlp"])
    s = start_server(repo=repo)
    stop = threading.Event()
    failures, done = [], [0]
    x = np.random.default_rng(2).standard_normal((1, 16)).astype(np.float32)

    def client():
        c = httpclient.InferenceServerClient(s.url)
        while not stop.is_set():
            try:
                r = infer(c, "mlp", {"x": x}, True)
                assert r.as_numpy("y").shape == (1, 4)
                done[0] += 1
            except Exception as e:  # noqa: BLE001 - every failure counts
                failures.append(repr(e))

    threads = [threading.Thread(target=client) for _ in range(6)]
    for t in threads:
        t.start()
    # Reload four times; the last switches the policy to version 1 only.
    for i in range(4):
        time.sleep(0.3)
        if i == 3:
            cfg = json.load(open(os.path.join(repo, "mlp", "config.json")))
            cfg["version_policy"] = {"specific": {"versions": [1]}}
            json.dump(cfg, open(os.path.join(repo, "mlp", "config.json"), "w"))
        status, _, data = post(s.url, "/v2/repository/models/mlp/load", b"")
        assert status == 200, data
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join()
    assert failures == []
    assert done[0] > 20
    c = httpclient.InferenceServerClient(s.url)
    assert httpclient.InferenceServerClient(s.url).get_model_metadata("mlp")["versions"] == ["1"]
    assert not c.is_model_ready("mlp", "2")
