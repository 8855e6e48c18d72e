"""examples/train_digits_sdk.py under a real `assay run`: hyperparameters from the variation's config,
per-epoch metrics, a checkpoint at the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
