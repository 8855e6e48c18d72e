"""examples/train_digits_sdk.py under a real `assay run` and on its own: hyperparameters from the variation's
config, per-epoch metrics, a checkpoint at the end; a cancel mid-training saves the epochs done, and a run
told to resume from it goes on from that epoch."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
from conftest import REPO, Service, node, run_path, series

EXAMPLE = REPO / "examples" / "train_digits_sdk.py"


def assay_run(service: Service, spool: Path, experiment: str, cwd: Path, *extra: str) -> str:
    done = subprocess.run(
        [
            node(),
            str(REPO / "bin" / "assay.js"),
            "run",
            "--experiment",
            experiment,
            "--variation",
            "1",
            *extra,
            "--outputs",
            str(cwd / "outputs"),
            "--",
            sys.executable,
            str(EXAMPLE),
            "--subset",
            "1500",
        ],
        env=service.sdk_env(spool),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_digits_example_under_assay_run(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment("lr: 0.01\nhidden: 32\nepochs: 4\nbatch_size: 32\n")
    assay_run(service, spool, experiment, tmp_path)
    run = service.get(run_path(experiment, 1, 1))
    assert run["state"] == "succeeded"
    acc = series(service, experiment, 1, 1, "val_acc")
    assert [p["step"] for p in acc] == [1, 2, 3, 4]
    assert acc[-1]["value"] > 0.5, "four epochs on the digits learn something"
    assert len(series(service, experiment, 1, 1, "val_loss")) == 4
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]
    assert [(a["name"], a["state"]) for a in assets] == [("epoch-4", "ready")]


def logged_so_far(service: Service, experiment: str) -> list[object]:
    """The run's val_acc points; none while the run or the key does not exist yet."""
    try:
        return series(service, experiment, 1, 1, "val_acc")
    except httpx.HTTPStatusError as error:
        if error.response.status_code == 404:
            return []
        raise


def test_the_digits_example_on_its_own(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment("lr: 0.01\nhidden: 32\nepochs: 3\n")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--experiment", experiment, "--variation", "1", "--subset", "1500"],
        env=service.sdk_env(spool),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resuming" not in done.stdout
    runs = service.get(f"/experiments/{experiment}/variations/1/runs")["items"]
    assert [(r["r"], r["state"], r["managed"]) for r in runs] == [(1, "succeeded", False)]
    assert [p["step"] for p in series(service, experiment, 1, 1, "val_acc")] == [1, 2, 3]
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]
    assert [(a["name"], a["state"], a["run_id"]) for a in assets] == [("epoch-3", "ready", runs[0]["id"])]


def test_a_cancelled_run_saves_its_epochs_and_a_resumed_run_goes_on_from_them(
    service: Service, spool: Path, tmp_path: Path
) -> None:
    # The whole data set and enough epochs that training is still going when the cancel arrives (about a
    # second after it is asked for): some 30 to 90 ms an epoch.
    epochs = 100
    experiment = service.experiment(f"lr: 0.01\nepochs: {epochs}\n")
    runner = subprocess.Popen(
        [
            node(),
            str(REPO / "bin" / "assay.js"),
            "run",
            "--experiment",
            experiment,
            "--variation",
            "1",
            "--outputs",
            str(tmp_path / "outputs"),
            "--",
            sys.executable,
            str(EXAMPLE),
        ],
        env=service.sdk_env(spool),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(logged_so_far(service, experiment)) < 2:
            assert runner.poll() is None, "the run ended before it was cancelled"
            assert time.monotonic() < deadline, "no epoch was logged in 120 s"
            time.sleep(0.2)
        service.post(f"{run_path(experiment, 1, 1)}/cancel")
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode != 0, out + err
    assert "RunCancelled" in err, err
    cancelled = service.get(run_path(experiment, 1, 1))
    assert (cancelled["state"], cancelled["failure_reason"]) == ("failed", "abandoned"), cancelled
    assert cancelled["cancel_requested"] is True
    logged = [p["step"] for p in series(service, experiment, 1, 1, "val_acc")]
    stopped_at = logged[-1]
    assert logged == list(range(1, stopped_at + 1)) and 2 <= stopped_at < epochs, logged
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]
    assert [(a["name"], a["state"]) for a in assets] == [(f"epoch-{stopped_at}", "ready")]

    # A new run on its own, told to resume from the variation's newest checkpoint: epochs after it only.
    resumed = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--experiment",
            experiment,
            "--variation",
            "1",
            "--resume-from",
            "latest",
        ],
        env=service.sdk_env(spool),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming after epoch {stopped_at}" in resumed.stdout
    second = service.get(run_path(experiment, 1, 2))
    assert (second["state"], second["resumes_from_run_id"]) == ("succeeded", cancelled["id"])
    steps = [p["step"] for p in series(service, experiment, 1, 2, "val_acc")]
    assert steps == list(range(stopped_at + 1, epochs + 1))
    newest = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"][0]
    assert (newest["name"], newest["run_id"]) == (f"epoch-{epochs}", second["id"])
