"""Fixtures of the v4f-serve tests: the model repository (compiled once per
run) and a server factory that starts v4f-serve on free loopback ports,
waits for its "ready" log line and stops it with SIGTERM (checking that it
drains and exits 0)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("V4F_BUILD_DIR", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bin")


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        pytest.exit(f"{path} is missing: build the tree first (scripts/setup.sh)", returncode=2)
    return path


@pytest.fixture(scope="session")
def repository(tmp_path_factory):
    out = tmp_path_factory.mktemp("repo")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "make_repository.py"),
                    "--v4fc", tool("v4fc"), "--out", str(out)], check=True)
    return str(out)


class Server:
    def __init__(self, args, env=None, prefix=None):
        """`prefix`: run the server under it (e.g. chroot DIR), as /usr/bin/v4f-serve."""
        self.args = args
        self.lines = []
        exe = prefix + ["/usr/bin/v4f-serve"] if prefix else [tool("v4f-serve")]
        self.proc = subprocess.Popen(exe + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready = None
        deadline = time.time() + 60
        while time.time() < deadline and self.ready is None:
            for line in list(self.lines):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "v4f-serve ready":
                    self.ready = rec
            if self.proc.poll() is not None and self.ready is None:
                break
            time.sleep(0.05)
        if self.ready is None:
            self.proc.kill()
            raise RuntimeError("v4f-serve did not start:\n" + "\n".join(self.lines))
        self.port = self.ready["http_port"]
        self.metrics_port = self.ready["metrics_port"]
        self.url = f"localhost:{self.port}"

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def log(self):
        return [json.loads(l) for l in self.lines if l.startswith("{")]

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(timeout=5)
        return rc


@pytest.fixture
def start_server(repository):
    servers = []

    def start(*extra, repo=None):
        s = Server(["--model-repository", repo or repository, "--http-address", "127.0.0.1", "--http-port", "0",
                    "--metrics-port", "0", "--threads", "2", *extra])
        servers.append(s)
        return s

    yield start
    for s in servers:
        rc = s.stop()
        assert rc == 0, "v4f-serve exited with %d:\n%s" % (rc, "\n".join(s.lines[-20:]))


@pytest.fixture(scope="module")
def shared_server(repository):
    """One server for the read-only protocol tests."""
    s = Server(["--model-repository", repository, "--http-address", "127.0.0.1", "--http-port", "0",
                "--metrics-port", "0", "--threads", "2"])
    yield s
    assert s.stop() == 0


def copy_repository(src, dst, models):
    for m in models:
        shutil.copytree(os.path.join(src, m), os.path.join(dst, m))
    return str(dst)
