"""The environment snapshot a standalone run starts with: the same fields as the TypeScript runner's
(src/client/environment.ts), taken from inside the Python process."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from typing import Any, Optional


def _git(*args: str) -> Optional[str]:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def snapshot() -> dict[str, Any]:
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain") if commit else None
    return {
        "command": list(sys.argv),
        "cwd": os.getcwd(),
        "os": sys.platform,
        "os_release": platform.release(),
        "arch": platform.machine(),
        "hostname": socket.gethostname(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "git_commit": commit,
        "git_dirty": None if status is None else status != "",
    }
