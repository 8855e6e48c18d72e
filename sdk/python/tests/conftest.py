"""Fixtures: a real Assay service (``node bin/assay.js server`` on a free port, embedded PGlite in a temp data
dir, no orchestrator) shared by the session, and a fresh user's key per test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
CONFORMANCE_DIR = REPO_ROOT / "test" / "conformance"
# The project's Node (24); the node test runner passes its own path.
NODE = os.environ.get("ASSAY_NODE", "node")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Service:
    url: str
    admin_key: str

    def create_user(self) -> str:
        """A new user; answers their API key."""
        email = f"py-{uuid.uuid4().hex[:12]}@example.test"
        res = httpx.post(
            f"{self.url}/admin/users",
            json={"email": email},
            headers={"authorization": f"Bearer {self.admin_key}"},
            timeout=30,
        )
        assert res.status_code == 201, res.text
        key: str = res.json()["api_key"]["key"]
        return key


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    data_dir = tempfile.mkdtemp(prefix="assay-py-sdk-")
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", data_dir),
        "ASSAY_DATA_DIR": data_dir,
        "PORT": str(port),
        "ASSAY_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "ASSAY_ORCHESTRATOR": "off",
        "ASSAY_LOG_LEVEL": "warn",
    }
    log = open(os.path.join(data_dir, "server.log"), "w+b")  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(
        [NODE, str(REPO_ROOT / "bin" / "assay.js"), "server"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"assay server exited {proc.returncode}:\n{log.read().decode()[-4000:]}")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"assay server not ready in 120 s:\n{log.read().decode()[-4000:]}")
            time.sleep(0.2)
        taken = subprocess.run(
            [NODE, str(REPO_ROOT / "bin" / "assay.js"), "admin", "bootstrap-key"],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        yield Service(url=url, admin_key=taken.stdout.strip())
    finally:
        # The server runs in its own process group (start_new_session), so its children stop with it.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass  # already gone
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def user_key(service: Service) -> str:
    return service.create_user()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory and an environment without SERVICE_* variables, so no test reads the
    developer's own ~/.assay or settings."""
    for name in list(os.environ):
        if name.startswith("SERVICE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path
