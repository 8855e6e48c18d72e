"""assay.init() under a real `assay run`: attached to the runner's run, config from ASSAY_CONFIG_FILE, metrics
sent by the SDK (once: it does not write ASSAY_METRICS_FILE), the runner ending the run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO, Service, node, run_path, series

SCRIPT = """
import math, os, assay
run = assay.init()
print("mode", run.mode, run.r, run.config["optimizer"]["lr"], flush=True)
for step in range(500):
    run.log({"loss": 1.0 / (step + 1), "nan": math.nan}, step=step)
run.save_checkpoint(__file__)
run.finish()
print("metrics file", os.path.getsize(os.environ["ASSAY_METRICS_FILE"]))
"""


def assay_run(service: Service, spool: Path, experiment: str, script: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            node(),
            str(REPO / "bin" / "assay.js"),
            "run",
            "--experiment",
            experiment,
            "--variation",
            "1",
            "--outputs",
            str(script.parent / "outputs"),
            "--grace",
            "20",
            "--",
            sys.executable,
            str(script),
        ],
        env=service.sdk_env(spool),
        cwd=script.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_attached_under_assay_run(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    process = assay_run(service, spool, experiment, script)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, out + err
    assert "mode attached 1 0.1" in out
    assert "metrics file 0" in out, "the SDK sends metrics itself, never through the runner's file"
    run = service.get(run_path(experiment, 1, 1))
    assert run["state"] == "succeeded"
    loss = series(service, experiment, 1, 1, "loss")
    assert [p["step"] for p in loss] == list(range(500))
    assert {p["value"] for p in series(service, experiment, 1, 1, "nan")} == {"NaN"}
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")
    assert [(a["name"], a["state"]) for a in assets["items"]] == [("checkpoint-step-499", "ready")]


def test_a_cancel_under_assay_run_raises_run_cancelled(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = tmp_path / "loop.py"
    script.write_text(
        """
import time, assay
run = assay.init()
print("started", flush=True)
step = 0
try:
    while True:
        run.log({"loss": 1.0}, step=step)
        step += 1
        time.sleep(0.01)
except assay.RunCancelled as stop:
    print("cancelled", stop.reason, step, flush=True)
    raise
"""
    )
    process = assay_run(service, spool, experiment, script)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "started"
    time.sleep(1)
    service.post(f"{run_path(experiment, 1, 1)}/cancel")
    out, err = process.communicate(timeout=120)
    assert process.returncode != 0
    assert out.startswith("cancelled signal"), out + err
    run = service.get(run_path(experiment, 1, 1))
    assert (run["state"], run["failure_reason"]) == ("failed", "abandoned")
    assert len(series(service, experiment, 1, 1, "loss")) == int(out.split()[2])
