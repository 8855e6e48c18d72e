"""assay.init(experiment=…, variation=…) outside `assay run`: the README's snippet end to end, an exception
failing the run, and a cancel reaching the script."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import Service, run_path, run_script, series

SNIPPET = """
import json, math, os, sys
import assay
experiment = sys.argv[1]
with assay.init(experiment=experiment, variation=1) as run:
    lr = run.config["optimizer"]["lr"]
    for step in range(300):
        run.log({"loss": lr / (step + 1), "acc": step / 300, "odd": math.nan if step % 2 else math.inf,
                 "neg": -math.inf}, step=step)
    os.makedirs("ckpt/sub")
    with open("ckpt/weights.bin", "wb") as f:
        f.write(bytes(range(256)) * 40)
    with open("ckpt/sub/state.json", "w") as f:
        json.dump({"step": 299, "lr": lr}, f)
    asset = run.save_checkpoint("ckpt/")
    state = run.load_checkpoint()
    print(json.dumps({"r": run.r, "lr": lr, "asset": asset["state"], "kind": asset["kind"],
                      "state": str(state)}))
"""


def test_the_snippet_end_to_end(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    done = run_script(SNIPPET, service.sdk_env(spool), tmp_path, experiment)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["lr"] == 0.1
    assert (out["asset"], out["kind"]) == ("ready", "checkpoint")
    r = out["r"]
    run = service.get(run_path(experiment, 1, r))
    assert run["state"] == "succeeded"
    assert run["environment"]["python"]
    loss = series(service, experiment, 1, r, "loss")
    assert [p["step"] for p in loss] == list(range(300))
    assert loss[9]["value"] == 0.01
    odd = series(service, experiment, 1, r, "odd")
    assert [p["value"] for p in odd[:4]] == ["Infinity", "NaN", "Infinity", "NaN"]
    assert {p["value"] for p in series(service, experiment, 1, r, "neg")} == {"-Infinity"}
    # The checkpoint came back as the directory it was, byte for byte.
    restored = Path(out["state"])
    assert (restored / "weights.bin").read_bytes() == bytes(range(256)) * 40
    assert json.loads((restored / "sub" / "state.json").read_text()) == {"step": 299, "lr": 0.1}
    # Everything reached the service: nothing is left in the spool.
    assert list(spool.glob("*.db")) == []


def test_load_checkpoint_answers_none_before_a_save_and_the_file_after(
    service: Service, spool: Path, tmp_path: Path
) -> None:
    experiment = service.experiment()
    script = """
import sys, assay
with assay.init(experiment=sys.argv[1], variation=1) as run:
    print(run.load_checkpoint())
    with open("model.txt", "w") as f:
        f.write("weights of run %d" % run.r)
    run.save_checkpoint("model.txt")
    print(open(run.load_checkpoint()).read())
"""
    first = run_script(script, service.sdk_env(spool), tmp_path, experiment).stdout.splitlines()
    assert first == ["None", "weights of run 1"]


def test_init_names_and_tags_the_run_it_creates(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = """
import sys, assay
with assay.init(experiment=sys.argv[1], variation=1, name="lr probe", tags=["sdk", "probe"]) as run:
    print(run.r)
"""
    r = int(run_script(script, service.sdk_env(spool), tmp_path, experiment).stdout.split()[-1])
    run = service.get(run_path(experiment, 1, r))
    assert (run["name"], run["tags"], run["state"]) == ("lr probe", ["sdk", "probe"], "succeeded")


def test_an_exception_fails_the_run_crash(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = """
import sys, assay
with assay.init(experiment=sys.argv[1], variation=1) as run:
    print(run.r, flush=True)
    run.log({"loss": 1.0}, step=0)
    raise RuntimeError("diverged at step 0")
"""
    done = run_script(script, service.sdk_env(spool), tmp_path, experiment, check=False)
    assert done.returncode == 1
    assert "diverged at step 0" in done.stderr
    r = int(done.stdout.split()[0])
    run = service.get(run_path(experiment, 1, r))
    assert (run["state"], run["failure_reason"]) == ("failed", "crash")
    assert "RuntimeError: diverged at step 0" in run["failure_message"]
    assert [p["value"] for p in series(service, experiment, 1, r, "loss")] == [1.0]


def test_an_uncaught_exception_without_with_fails_the_run_at_exit(
    service: Service, spool: Path, tmp_path: Path
) -> None:
    experiment = service.experiment()
    script = """
import sys, assay
run = assay.init(experiment=sys.argv[1], variation=1)
print(run.r, flush=True)
1 / 0
"""
    done = run_script(script, service.sdk_env(spool), tmp_path, experiment, check=False)
    r = int(done.stdout.split()[0])
    run = service.get(run_path(experiment, 1, r))
    assert (run["state"], run["failure_reason"]) == ("failed", "crash")
    assert "ZeroDivisionError" in run["failure_message"]


CANCELLABLE = """
import sys, time, assay
run = assay.init(experiment=sys.argv[1], variation=1)
print(run.r, flush=True)
step = 0
try:
    while True:
        run.log({"loss": 1.0 / (step + 1)}, step=step)
        step += 1
        time.sleep(0.01)
except assay.RunCancelled as stop:
    print("cancelled", stop.reason, step, flush=True)
    run.save_checkpoint(__file__)
    raise
"""


def _wait_for_first_line(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    return int(process.stdout.readline())


def test_a_cancel_reaches_the_script_as_run_cancelled(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = tmp_path / "loop.py"
    script.write_text(CANCELLABLE)
    process = subprocess.Popen(
        [sys.executable, str(script), experiment],
        env=service.sdk_env(spool),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    r = _wait_for_first_line(process)
    time.sleep(1)  # let it log a while
    service.post(f"{run_path(experiment, 1, r)}/cancel")
    out, err = process.communicate(timeout=120)
    assert process.returncode != 0, "a cancelled run's script does not exit 0"
    assert out.startswith("cancelled cancelled"), out + err
    stopped_at = int(out.split()[2])
    run = service.get(run_path(experiment, 1, r))
    assert (run["state"], run["failure_reason"]) == ("failed", "abandoned")
    # Every point logged before the cancel is stored, and the checkpoint taken after it is there.
    assert len(series(service, experiment, 1, r, "loss")) == stopped_at
    assets = service.get("/assets", experiment_id=experiment, kind="checkpoint")
    assert [a["state"] for a in assets["items"]] == ["ready"]


def test_on_cancel_callbacks_instead_of_the_exception(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    script = tmp_path / "loop.py"
    script.write_text(
        """
import sys, time, assay
run = assay.init(experiment=sys.argv[1], variation=1)
heard = []
run.on_cancel(heard.append)
print(run.r, flush=True)
step = 0
while not run.cancelled:
    run.log({"loss": 1.0}, step=step)
    step += 1
    time.sleep(0.01)
print("heard", heard, flush=True)
run.finish()
"""
    )
    process = subprocess.Popen(
        [sys.executable, str(script), experiment],
        env=service.sdk_env(spool),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    r = _wait_for_first_line(process)
    service.post(f"{run_path(experiment, 1, r)}/cancel")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out.strip() == "heard ['cancelled']"
    run = service.get(run_path(experiment, 1, r))
    assert (run["state"], run["failure_reason"]) == ("failed", "abandoned")
