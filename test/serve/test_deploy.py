"""deploy/: the Kubernetes manifests validate against the Kubernetes schemas
(kubernetes-validate, strict, offline), the KServe ones against
deploy/schemas/ (with the Kubernetes Container schema inside), the probes
and ports agree with v4f-serve's options, and the container root filesystem
is self-contained: v4f-serve runs chrooted into it (needs root; skipped
otherwise, saying why)."""
import json
import os
import shutil
import subprocess

import jsonschema
import numpy as np
import tritonclient.http as httpclient
import kubernetes_validate
import pytest
import referencing
import yaml

from conftest import BUILD, ROOT, Server

DEPLOY = os.path.join(ROOT, "deploy")
K8S_VERSION = "1.33.0"


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def test_kubernetes_manifests_validate():
    docs = load_all(os.path.join(DEPLOY, "kubernetes", "v4f-serve.yaml"))
    assert [d["kind"] for d in docs] == ["Deployment", "Service", "HorizontalPodAutoscaler"]
    for d in docs:
        kubernetes_validate.validate(d, K8S_VERSION, strict=True)
    dep = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert dep["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert dep["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert dep["resources"]["limits"]["cpu"] == "2" and "--threads=2" in dep["args"]
    # A broken manifest is caught (the validation can fail).
    bad = json.loads(json.dumps(docs[0]))
    bad["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"] = {"x": 1}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


def kserve_validator(schema_file):
    k8s_dir = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema",
                           f"v{K8S_VERSION}-local-strict")
    with open(os.path.join(k8s_dir, "_definitions.json")) as f:
        defs = json.load(f)
    registry = referencing.Registry().with_resource(
        "/api/_definitions.json", referencing.Resource.from_contents(defs, referencing.jsonschema.DRAFT202012))
    with open(os.path.join(DEPLOY, "schemas", schema_file)) as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def test_kserve_manifests_validate():
    docs = load_all(os.path.join(DEPLOY, "kserve", "v4f-serve-runtime.yaml"))
    runtime, isvc = docs
    kserve_validator("servingruntime-v1alpha1.json").validate(runtime)
    kserve_validator("inferenceservice-v1beta1.json").validate(isvc)
    assert isvc["spec"]["predictor"]["model"]["runtime"] == runtime["metadata"]["name"]
    assert runtime["spec"]["supportedModelFormats"][0]["name"] == isvc["spec"]["predictor"]["model"]["modelFormat"]["name"]
    assert "v2" in runtime["spec"]["protocolVersions"]
    # Typos and wrong container fields are refused.
    bad = json.loads(json.dumps(runtime))
    bad["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    with pytest.raises(jsonschema.ValidationError):
        kserve_validator("servingruntime-v1alpha1.json").validate(bad)
    bad = json.loads(json.dumps(isvc))
    bad["spec"]["predictor"]["model"]["storageUri"] = "ftp://x"
    with pytest.raises(jsonschema.ValidationError):
        kserve_validator("inferenceservice-v1beta1.json").validate(bad)


def test_container_rootfs_is_self_contained(tmp_path, repository):
    """The image's root filesystem serves a model with nothing from the host
    but /proc (which every container runtime mounts), as the image's
    unprivileged user."""
    if os.geteuid() != 0:
        pytest.skip("chroot into the image's root filesystem needs root")
    out = tmp_path / "rootfs"
    subprocess.run(["bash", os.path.join(DEPLOY, "container", "build-rootfs.sh"), BUILD, str(out)], check=True,
                   capture_output=True)
    assert "FROM scratch" in (out / "Containerfile").read_text()
    r = subprocess.run(["chroot", str(out), "/usr/bin/v4f-serve", "--version"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("v4f-serve ")
    shutil.copytree(os.path.join(repository, "mlp"), out / "models" / "mlp")
    if subprocess.run(["mount", "-t", "proc", "proc", str(out / "proc")], capture_output=True).returncode != 0:
        pytest.skip("cannot mount /proc in the image's root filesystem here (the runtime maps kernels through it)")
    try:
        s = Server(["--model-repository", "/models", "--http-address", "127.0.0.1", "--http-port", "0",
                    "--metrics-port", "-1"], prefix=["chroot", "--userspec=10001:10001", str(out)])
        try:
            c = httpclient.InferenceServerClient(s.url)
            x = np.ones((1, 16), np.float32)
            assert c.infer("mlp", [httpclient.InferInput("x", [1, 16], "FP32").set_data_from_numpy(x)]
                           ).as_numpy("y").shape == (1, 4)
        finally:
            assert s.stop() == 0
    finally:
        subprocess.run(["umount", str(out / "proc")], check=True)
