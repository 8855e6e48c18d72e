"""The service stopped mid-run and started again on the same port and data: the training loop keeps going
while it is down (points go to the spool), and every point is stored once it is back."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import Service, run_path, series

SCRIPT = """
import os, sys, time, assay
run = assay.init(experiment=sys.argv[1], variation=1, heartbeat_interval=1)
print(run.r, flush=True)
step = 0
while not os.path.exists("stop"):
    run.log({f"k{i}": step * i for i in range(10)}, step=step)
    step += 1
    if step % 50 == 0:
        with open("progress.tmp", "w") as f:
            f.write(str(step))
        os.replace("progress.tmp", "progress")
    time.sleep(0.002)
run.finish()
print(step, flush=True)
"""


def progress(tmp: Path) -> int:
    try:
        return int((tmp / "progress").read_text())
    except (FileNotFoundError, ValueError):
        return 0


def wait_for(condition: object, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_service_down_mid_run_no_point_lost(own_service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = own_service.experiment()
    script = tmp_path / "loop.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), experiment],
        env={**own_service.sdk_env(spool), "ASSAY_FLUSH_TIMEOUT_S": "180"},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    r = int(process.stdout.readline())
    wait_for(lambda: progress(tmp_path) >= 200, "the loop to get going")
    own_service.stop()
    down_at = progress(tmp_path)
    # The loop goes on while nothing answers: its points go to the spool.
    wait_for(lambda: progress(tmp_path) >= down_at + 1000, "the loop to go on while the service is down")
    wait_for(lambda: any(spool.glob("*.db")), "the spool to be written")
    own_service.start()
    (tmp_path / "stop").touch()
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    steps = int(out.split()[-1])
    run = own_service.get(run_path(experiment, 1, r))
    assert run["state"] == "succeeded"
    for key in ("k0", "k9"):
        points = series(own_service, experiment, 1, r, key)
        assert [p["step"] for p in points] == list(range(steps)), key
    assert [p["value"] for p in series(own_service, experiment, 1, r, "k9")][:3] == [0, 9, 18]
    assert list(spool.glob("*.db")) == []
