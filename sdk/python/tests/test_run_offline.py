"""ASSAY_MODE=offline: nothing goes over the network, the run lives in the spool; `assay-sync` creates it,
sends its points and checkpoint, ends it, and a second `assay-sync` stores nothing twice."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from conftest import Service, run_script, series

SCRIPT = """
import math, sys, assay
with assay.init(experiment=sys.argv[1], variation=1, config={"optimizer": {"lr": 0.5}}) as run:
    assert run.mode == "offline" and run.r is None
    for step in range(2500):
        run.log({"loss": run.config["optimizer"]["lr"] / (step + 1), "inf": math.inf}, step=step)
    with open("ckpt.txt", "w") as f:
        f.write("offline weights")
    run.save_checkpoint("ckpt.txt")
    print(run.load_checkpoint())
"""


def assay_sync(service: Service, spool: Path) -> subprocess.CompletedProcess[str]:
    # The console script the package installs, from the interpreter running the tests.
    return subprocess.run(
        [str(Path(sys.executable).parent / "assay-sync")],
        env=service.sdk_env(spool),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_offline_then_assay_sync_twice(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    # No service at all while the script runs: the URL points nowhere.
    offline_env = {
        **service.sdk_env(spool),
        "ASSAY_MODE": "offline",
        "SERVICE_SERVER_URL": "http://127.0.0.1:9",
    }
    done = run_script(SCRIPT, offline_env, tmp_path, experiment)
    assert done.stdout.strip() == "None"
    assert service.get(f"/experiments/{experiment}/variations/1/runs")["items"] == []
    assert len(list(spool.glob("offline-*.db"))) == 1

    first = assay_sync(service, spool)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "5000 point(s) sent to run 1" in first.stdout
    runs = service.get(f"/experiments/{experiment}/variations/1/runs")["items"]
    assert [(r["r"], r["state"]) for r in runs] == [(1, "succeeded")]
    loss = series(service, experiment, 1, 1, "loss")
    assert [p["step"] for p in loss] == list(range(2500))
    assert math.isclose(loss[4]["value"], 0.1)
    assert {p["value"] for p in series(service, experiment, 1, 1, "inf")} == {"Infinity"}
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]
    assert [(a["state"], list(a["components"])) for a in assets] == [("ready", ["ckpt.txt"])]

    second = assay_sync(service, spool)
    assert second.returncode == 0, second.stderr
    assert "nothing to send" in second.stdout
    assert len(service.get(f"/experiments/{experiment}/variations/1/runs")["items"]) == 1
    assert len(series(service, experiment, 1, 1, "loss")) == 2500
    assert len(service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]) == 1


def test_a_spool_in_use_is_left_alone(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = tmp_path / "hold.py"
    script.write_text(
        """
import sys, assay
run = assay.init(experiment=sys.argv[1], variation=1, config={})
run.log({"loss": 1.0}, step=0)
run.flush()
print("holding", flush=True)
sys.stdin.readline()
run.finish()
"""
    )
    env = {**service.sdk_env(spool), "ASSAY_MODE": "offline"}
    holder = subprocess.Popen(
        [sys.executable, str(script), experiment],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "holding"
    busy = assay_sync(service, spool)
    assert "in use by a running process; skipped" in busy.stdout
    assert service.get(f"/experiments/{experiment}/variations/1/runs")["items"] == []
    holder.stdin.write("\n")
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0
    sent = assay_sync(service, spool)
    assert sent.returncode == 0, sent.stderr
    assert [r["state"] for r in service.get(f"/experiments/{experiment}/variations/1/runs")["items"]] == [
        "succeeded"
    ]
