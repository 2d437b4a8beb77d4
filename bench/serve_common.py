"""Shared helpers of the v4f-serve benchmarks: starting the server, a
keep-alive binary-protocol client with little CPU overhead (the clients
share the machine with the server), metrics and RSS readers."""
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_repository(build, out, resnet18=False):
    """The test model repository (test/serve/make_repository.py) in `out`,
    compiled once: re-used when its models are already there."""
    probe = os.path.join(out, "resnet18" if resnet18 else "mlp", "1", "model.v4f")
    if not os.path.exists(probe):
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "serve", "make_repository.py"), "--v4fc",
                        os.path.join(build, "bin", "v4fc"), "--out", out] + (["--resnet18"] if resnet18 else []),
                       check=True)
    return out


class ServeProcess:
    def __init__(self, build, repo, *extra):
        exe = os.path.join(build, "bin", "v4f-serve")
        self.proc = subprocess.Popen([exe, "--model-repository", repo, "--http-address", "127.0.0.1",
                                      "--http-port", "0", "--metrics-port", "0", *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.ready = None
        for line in self.proc.stderr:
            rec = json.loads(line) if line.startswith("{") else {}
            if rec.get("msg") == "v4f-serve ready":
                self.ready = rec
                break
        if not self.ready:
            raise RuntimeError("v4f-serve did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.port, self.metrics_port = self.ready["http_port"], self.ready["metrics_port"]

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=30)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


class Client:
    """One keep-alive connection sending binary-tensor requests."""

    def __init__(self, port, model, name, array, outputs):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.path = f"/v2/models/{model}/infer"
        self.outputs = outputs
        self.set_input(name, array)

    def set_input(self, name, array):
        dt = {np.float32: "FP32"}[array.dtype.type]
        header = json.dumps({"inputs": [{"name": name, "datatype": dt, "shape": list(array.shape),
                                         "parameters": {"binary_data_size": array.nbytes}}],
                             "outputs": [{"name": o, "parameters": {"binary_data": True}} for o in self.outputs]
                             }).encode()
        self.body = header + array.tobytes()
        self.headers = {"Inference-Header-Content-Length": str(len(header)),
                        "Content-Type": "application/octet-stream"}

    def infer(self):
        """Returns (status, {output: array}) ."""
        self.conn.request("POST", self.path, self.body, self.headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.status != 200:
            return r.status, data
        n = int(r.getheader("Inference-Header-Content-Length"))
        header = json.loads(data[:n])
        out, off = {}, n
        for o in header["outputs"]:
            size = o["parameters"]["binary_data_size"]
            out[o["name"]] = np.frombuffer(data[off:off + size], np.float32).reshape(o["shape"])
            off += size
        return 200, out
