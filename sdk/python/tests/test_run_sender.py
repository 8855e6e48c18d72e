"""The metric sender when things go wrong, through a proxy in front of a real service (tests/double.py): a
service that accepts requests and never answers, a process killed mid-run, the end of a script while the
service hangs, an ``assay-sync`` that loses the answer to its run's creation."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Service, run_path, run_script, series
from double import Proxy


@pytest.fixture
def proxy(service: Service) -> Iterator[Proxy]:
    with Proxy(service.url) as p:
        yield p


def start(code: str, env: dict[str, str], tmp: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp / "script.py"
    script.write_text(code)
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        env=env,
        cwd=tmp,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def say(process: subprocess.Popen[str], line: str = "") -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


def hear(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        _, err = process.communicate(timeout=60)
        raise AssertionError(f"the script ended early ({process.returncode}): {err}")
    return line.strip()


def assay_sync(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The console script the package installs, from the interpreter running the tests.
    return subprocess.run(
        [str(Path(sys.executable).parent / "assay-sync")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def runs_of(service: Service, experiment: str) -> list[dict[str, object]]:
    items: list[dict[str, object]] = service.get(f"/experiments/{experiment}/variations/1/runs")["items"]
    return items


BOUNDED = """
import sys, assay
run = assay.init(experiment=sys.argv[1], variation=1)
print(run.r, flush=True)
sys.stdin.readline()  # the service hangs from now on
most = 0
for step in range(int(sys.argv[2])):
    run.log({f"k{i}": float(step * i) for i in range(10)}, step=step)
    most = max(most, run.buffered_points)
print(most, flush=True)
sys.stdin.readline()  # the service answers again
run.finish()
"""


def test_a_hung_service_keeps_memory_bounded_and_every_point_arrives_once(
    service: Service, proxy: Proxy, spool: Path, tmp_path: Path
) -> None:
    """The audit's case: the service accepts connections and never answers, and a tight 10-key loop logs.
    The points in memory stay within ASSAY_MAX_BUFFERED_POINTS (the rest goes to the spool), and once the
    service answers every point is stored, once."""
    experiment = service.experiment()
    steps, bound = 20_000, 5_000
    env = {**service.sdk_env(spool), "SERVICE_SERVER_URL": proxy.url, "ASSAY_MAX_BUFFERED_POINTS": str(bound)}
    process = start(BOUNDED, env, tmp_path, experiment, str(steps))
    try:
        r = int(hear(process))
        proxy.hold()
        say(process)
        most = int(hear(process))
        # 200,000 points were logged while nothing was answered; at most the bound (and one call) waited.
        assert 0 < most <= bound + 10
        assert proxy.held >= 1  # requests did reach the hung service
        assert any(spool.glob("*.db"))
        proxy.release()
        say(process)
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
    finally:
        process.kill()
    assert service.get(run_path(experiment, 1, r))["state"] == "succeeded"
    for i in (0, 9):
        points = series(service, experiment, 1, r, f"k{i}")
        assert [p["step"] for p in points] == list(range(steps))
        assert all(p["value"] == p["step"] * i for p in points)
    assert list(spool.glob("*.db")) == []


AT_EXIT = """
import sys, assay
run = assay.init(experiment=sys.argv[1], variation=1, heartbeat_interval=1)
for step in range(1500):
    run.log({"loss": 1.0 / (step + 1), "acc": step / 3000}, step=step)
assert run.flush()
print(run.r, flush=True)
sys.stdin.readline()  # the service hangs from now on
for step in range(1500, 1500 + int(sys.argv[2])):
    run.log({"loss": 1.0 / (step + 1), "acc": step / 3000}, step=step)
# The script ends: atexit flushes and ends the run, within ASSAY_FLUSH_TIMEOUT_S.
"""


@pytest.mark.parametrize("unsent", [1500, 0], ids=["points-and-the-end-unsent", "only-the-end-unsent"])
def test_exit_while_the_service_hangs_keeps_the_deadline_and_assay_sync_delivers_once(
    service: Service, proxy: Proxy, spool: Path, tmp_path: Path, unsent: int
) -> None:
    experiment = service.experiment()
    env = {**service.sdk_env(spool), "SERVICE_SERVER_URL": proxy.url, "ASSAY_FLUSH_TIMEOUT_S": "2"}
    process = start(AT_EXIT, env, tmp_path, experiment, str(unsent))
    try:
        r = int(hear(process))
        proxy.hold()
        say(process)
        began = time.monotonic()
        _, err = process.communicate(timeout=120)
        took = time.monotonic() - began
    finally:
        process.kill()
    assert process.returncode == 0, err
    # A gross bound: the deadline is 2 s for the whole end (it was 2 s for the flush, then up to 30 s for
    # the end's request, 10 s for a heartbeat in flight and 5 s more).
    assert took < 15, f"the exit took {took:.1f} s"
    assert "assay-sync" in err
    proxy.release(forward=False)  # what the hung service held is lost
    assert service.get(run_path(experiment, 1, r))["state"] == "running"

    first = assay_sync(env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"{2 * unsent} point(s) sent to run {r}" in first.stdout
    assert service.get(run_path(experiment, 1, r))["state"] == "succeeded"
    second = assay_sync(env)
    assert second.returncode == 0 and "nothing to send" in second.stdout, second.stdout
    loss = series(service, experiment, 1, r, "loss")
    assert [p["step"] for p in loss] == list(range(1500 + unsent))
    assert all(p["value"] == 1.0 / (p["step"] + 1) for p in loss)
    assert len(runs_of(service, experiment)) == 1


KILLED = """
import sys, time, assay
run = assay.init(experiment=sys.argv[1], variation=1)
print(run.r, flush=True)
sys.stdin.readline()  # the service hangs from now on
for step in range(4000):
    run.log({"loss": 1.0 / (step + 1), "acc": step / 4000}, step=step)
print(run.flush(timeout=1), flush=True)  # False: what is not stored is in the spool now
step = 4000
while True:  # mid-run when it is killed
    run.log({"loss": 1.0 / (step + 1), "acc": step / 4000}, step=step)
    step += 1
    time.sleep(0.001)
"""


def test_killed_mid_run_then_assay_sync_twice_stores_each_point_once(
    service: Service, proxy: Proxy, spool: Path, tmp_path: Path
) -> None:
    experiment = service.experiment()
    env = {**service.sdk_env(spool), "SERVICE_SERVER_URL": proxy.url}
    process = start(KILLED, env, tmp_path, experiment)
    try:
        r = int(hear(process))
        proxy.hold()
        say(process)
        assert hear(process) == "False"
        # The held batches reach the service late while their copies are in the spool, and the process
        # starts sending the spool: it is killed while points are both stored and spooled.
        proxy.release()
        deadline = time.monotonic() + 120
        while len(series(service, experiment, 1, r, "loss")) < 1000:
            assert time.monotonic() < deadline, "no point stored after the service came back"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        process.kill()
    assert any(spool.glob("*.db"))
    for _ in range(2):
        synced = assay_sync(env)
        assert synced.returncode == 0, synced.stdout + synced.stderr
    assert list(spool.glob("*.db")) == []
    loss = series(service, experiment, 1, r, "loss")
    steps = [p["step"] for p in loss]
    # Every point logged before the flush is stored (those after it were in the killed process's memory),
    # each step once, with its value.
    assert steps[:4000] == list(range(4000))
    assert len(steps) == len(set(steps))
    assert all(p["value"] == 1.0 / (p["step"] + 1) for p in loss)
    assert len(runs_of(service, experiment)) == 1
    assert service.get(run_path(experiment, 1, r))["state"] == "running"  # its end was never reported


OFFLINE = """
import sys, assay
with assay.init(experiment=sys.argv[1], variation=1, tags=["offline"], config={}) as run:
    for step in range(100):
        run.log({"loss": 1.0 / (step + 1)}, step=step)
"""


def test_assay_sync_that_lost_the_answer_to_the_run_creation_creates_no_second_run(
    service: Service, proxy: Proxy, spool: Path, tmp_path: Path
) -> None:
    experiment = service.experiment()
    env = {**service.sdk_env(spool), "ASSAY_MODE": "offline"}
    run_script(OFFLINE, env, tmp_path, experiment)
    sync_env = {**service.sdk_env(spool), "SERVICE_SERVER_URL": proxy.url}
    # The service creates the run, and the answer never reaches assay-sync.
    proxy.drop_answer("POST", r"/variations/1/runs$")
    lost = assay_sync(sync_env)
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert [run["state"] for run in runs_of(service, experiment)] == ["pending"]

    again = assay_sync(sync_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "100 point(s) sent to run 1" in again.stdout
    runs = runs_of(service, experiment)
    assert [(run["r"], run["state"]) for run in runs] == [(1, "succeeded")]
    assert "offline" in runs[0]["tags"]  # type: ignore[operator]
    assert [p["step"] for p in series(service, experiment, 1, 1, "loss")] == list(range(100))
    assert "nothing to send" in assay_sync(sync_env).stdout
    assert len(runs_of(service, experiment)) == 1


AFTER_FINISH = """
import assay
run = assay.init(experiment="e1", variation=1, mode="offline", config={})
run.log({"loss": 1.0}, step=0)
run.finish()
try:
    run.log({"loss": 0.5}, step=1)
except RuntimeError as error:
    print(error)
"""


def test_log_after_finish_raises(spool: Path, tmp_path: Path) -> None:
    env = {**Service(data_dir=tmp_path).sdk_env(spool)}
    done = run_script(AFTER_FINISH, env, tmp_path)
    assert "run.log() after the run ended" in done.stdout, done.stdout + done.stderr
