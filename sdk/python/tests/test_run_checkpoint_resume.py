"""A checkpoint save cut off by the service going away resumes: the next save_checkpoint of the same files
re-uses the asset created the first time and sends what is missing, so the run ends with one ready
checkpoint holding every file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import Service, run_path

FILES = 300

SCRIPT = f"""
import json, os, sys, assay
run = assay.init(experiment=sys.argv[1], variation=1)
os.makedirs("ckpt")
for i in range({FILES}):
    with open(f"ckpt/part-{{i:03d}}.bin", "wb") as f:
        f.write(os.urandom(4096))
print(run.r, flush=True)
try:
    run.save_checkpoint("ckpt/")
    print("first save done", flush=True)
except Exception as error:
    print("first save failed", type(error).__name__, flush=True)
sys.stdin.readline()  # the service is back
asset = run.save_checkpoint("ckpt/")
answer = {{"id": asset["id"], "state": asset["state"], "files": len(asset["components"])}}
print(json.dumps(answer), flush=True)
run.finish()
"""


def test_a_cut_off_save_resumes_the_same_asset(own_service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = own_service.experiment()
    script = tmp_path / "save.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), experiment],
        env=own_service.sdk_env(spool),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    r = int(process.stdout.readline())
    # The save records its asset and each piece sent; stop the service once some, not all, are sent.
    deadline = time.monotonic() + 120
    state: dict[str, object] = {}
    while time.monotonic() < deadline:
        for file in (spool / "checkpoints").glob("checkpoint-*.json"):
            try:
                state = json.loads(file.read_text())
            except ValueError:
                continue
        if len(state.get("done", [])) >= 5:  # type: ignore[arg-type]
            break
        time.sleep(0.01)
    own_service.stop()
    assert process.stdout.readline().split()[:3] == ["first", "save", "failed"]
    own_service.start()
    process.stdin.write("\n")
    process.stdin.flush()
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    second = json.loads(out.strip().splitlines()[-1])
    assert second == {"id": state["asset_id"], "state": "ready", "files": FILES}
    assets = own_service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"]
    assert [(a["id"], a["state"]) for a in assets] == [(state["asset_id"], "ready")]
    assert own_service.get(run_path(experiment, 1, r))["state"] == "succeeded"
    assert list((spool / "checkpoints").glob("*.json")) == []
