"""A real `assay server` for the Python SDK's tests (sdk/python/tests/conftest.py) and bench/python-sdk.py:
`node bin/assay.js server` on a free port with a data directory of its own (embedded PGlite unless
DATABASE_URL is given through ``extra_env``), no orchestrator, as ``npm start`` runs it; its bootstrap admin
key, and the calls both make. It lives beside the benchmark, which must not import test code; the tests'
conftest imports it from here."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import httpx

REPO = Path(__file__).resolve().parents[1]


def node() -> str:
    """The project's Node (24): ASSAY_NODE (the node test runner passes its own), else node_modules' one, else
    the PATH's."""
    given = os.environ.get("ASSAY_NODE")
    if given:
        return given
    local = REPO / "node_modules" / ".bin" / "node"
    return str(local) if local.exists() else shutil.which("node") or "node"


NODE = node()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Service:
    data_dir: Path
    port: int = field(default_factory=free_port)
    key: str = ""
    process: Optional[subprocess.Popen[bytes]] = None
    log_path: Optional[Path] = None
    extra_env: dict[str, str] = field(default_factory=dict)
    """More of the server's environment (bench/python-sdk.py: DATABASE_URL for PostgreSQL)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", ""),
            "ASSAY_DATA_DIR": str(self.data_dir),
            "ASSAY_ORCHESTRATOR": "off",
            "ASSAY_LOG_LEVEL": "warn",
            "ASSAY_TEMPORAL_PORT": str(free_port()),
            "ASSAY_TEMPORAL_UI_PORT": str(free_port()),
            "PORT": str(self.port),
            "ASSAY_PUBLIC_URL": self.url,
            **self.extra_env,
        }

    def start(self) -> None:
        self.log_path = self.data_dir.with_suffix(".log")
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child writes to it until stopped
        self.process = subprocess.Popen(
            [node(), str(REPO / "bin" / "assay.js"), "server"],
            cwd=REPO,
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 180
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"assay server exited: {self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"assay server not ready: {self.log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        if not self.key:
            taken = subprocess.run(
                [node(), str(REPO / "bin" / "assay.js"), "admin", "bootstrap-key"],
                cwd=REPO,
                env=self.env(),
                capture_output=True,
                text=True,
                check=True,
            )
            self.key = taken.stdout.strip()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    @property
    def admin_key(self) -> str:
        return self.key

    def create_user(self) -> str:
        """A new user; answers their API key."""
        email = f"py-{uuid.uuid4().hex[:12]}@example.test"
        res = httpx.post(
            f"{self.url}/admin/users",
            json={"email": email},
            headers={"authorization": f"Bearer {self.key}"},
            timeout=30,
        )
        assert res.status_code == 201, res.text
        key: str = res.json()["api_key"]["key"]
        return key

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"authorization": f"Bearer {self.key}"}, timeout=30)

    def experiment(self, config_yaml: str = "optimizer:\n  lr: 0.1\n") -> str:
        """A committed experiment with variation 1 of this config; answers its id."""
        with self.client() as c:
            created = c.post("/experiments", json={"name": f"sdk-{uuid.uuid4().hex[:8]}"})
            created.raise_for_status()
            eid = str(created.json()["id"])
            c.post(f"/experiments/{eid}/variations", json={"config_yaml": config_yaml}).raise_for_status()
            c.post(f"/experiments/{eid}/commit").raise_for_status()
        return eid

    def get(self, path: str, **params: Any) -> Any:
        with self.client() as c:
            answer = c.get(path, params=params)
            answer.raise_for_status()
            return answer.json()

    def post(self, path: str, body: Any = None) -> Any:
        with self.client() as c:
            answer = c.post(path, json=body)
            answer.raise_for_status()
            return answer.json()

    def sdk_env(self, spool: Path) -> dict[str, str]:
        """The environment a script using the SDK runs with: this service, its key, a spool of its own."""
        return {
            **os.environ,
            "SERVICE_SERVER_URL": self.url,
            "SERVICE_API_KEY": self.key,
            "ASSAY_SPOOL_DIR": str(spool),
            "HOME": str(spool.parent),
            # The package as the tests import it, whether or not it is installed in this interpreter.
            "PYTHONPATH": os.pathsep.join(
                [str(REPO / "sdk" / "python" / "src"), os.environ.get("PYTHONPATH", "")]
            ),
        }
