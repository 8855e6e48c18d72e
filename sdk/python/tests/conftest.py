"""Fixtures: a real Assay service (``node bin/assay.js server`` on a free port, embedded PGlite in a temp data
dir, no orchestrator, as ``npm start`` runs it) shared by the session (``service``; its bootstrap admin key is
``admin_key``), a test's own service to stop and start again (``own_service``), a fresh user's key per test
(``user_key``), an empty home (``home``) and a spool directory (``spool``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = REPO_ROOT = Path(__file__).resolve().parents[3]
CONFORMANCE_DIR = REPO_ROOT / "test" / "conformance"

# The service, shared with bench/python-sdk.py (which must not import test code): bench/python_sdk_service.py.
sys.path.insert(0, str(REPO / "bench"))
from python_sdk_service import Service, free_port, node  # noqa: E402

__all__ = ["CONFORMANCE_DIR", "NODE", "REPO", "REPO_ROOT", "Service", "free_port", "node"]

NODE = node()


def _service() -> Iterator[Service]:
    root = Path(tempfile.mkdtemp(prefix="assay-sdk-"))
    service = Service(data_dir=root / "data")
    service.start()
    try:
        yield service
    finally:
        service.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    yield from _service()


@pytest.fixture
def own_service() -> Iterator[Service]:
    yield from _service()


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


@pytest.fixture
def spool(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "spool"
    path.mkdir(parents=True)
    return path


def run_script(
    code: str, env: dict[str, str], tmp: Path, *args: str, timeout: float = 300, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` as a Python script in its own process (signals and atexit as in a real one)."""
    script = tmp / f"script-{uuid.uuid4().hex[:6]}.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"script exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def run_path(experiment: str, n: int, r: int) -> str:
    return f"/experiments/{experiment}/variations/{n}/runs/{r}"


def series(service: Service, experiment: str, n: int, r: int, key: str) -> list[Any]:
    """Every point of a key, in step order."""
    points: list[Any] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 10000}
        if cursor:
            params["cursor"] = cursor
        page = service.get(f"{run_path(experiment, n, r)}/metrics/{key}", **params)
        points.extend(page["points"])
        cursor = page.get("next_cursor")
        if not cursor:
            return points
