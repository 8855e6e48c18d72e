"""Resuming from another run is a choice: a new run's load_checkpoint() follows its own chain only (so a
deliberate new run never trains from someone else's weights by surprise), and assay.init(resume_from=…)
puts a run of the caller's choosing, or the variation's newest checkpointed run ("latest"), on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest
from conftest import Service, run_path, run_script

# argv: experiment, variation, resume_from as JSON (null: not given), the text to save as a checkpoint
# ("": none)
SCRIPT = """
import json, sys
import assay
resume_from = json.loads(sys.argv[3])
with assay.init(experiment=sys.argv[1], variation=int(sys.argv[2]), resume_from=resume_from) as run:
    loaded = run.load_checkpoint()
    if sys.argv[4]:
        with open("state.txt", "w") as f:
            f.write(sys.argv[4])
        run.save_checkpoint("state.txt")
    print(json.dumps({"r": run.r, "loaded": None if loaded is None else loaded.read_text()}))
"""


def start(
    service: Service, spool: Path, tmp: Path, experiment: str, resume_from: Any, save: str = "", n: int = 1
) -> tuple[int, Optional[str]]:
    done = run_script(SCRIPT, service.sdk_env(spool), tmp, experiment, str(n), json.dumps(resume_from), save)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return int(out["r"]), out["loaded"]


def test_a_new_run_starts_from_scratch_unless_told_where_to_resume(
    service: Service, spool: Path, tmp_path: Path
) -> None:
    with service.client() as c:
        experiment = c.post("/experiments", json={"name": "resume-from"}).json()["id"]
        for x in (1, 2):
            c.post(
                f"/experiments/{experiment}/variations", json={"config_yaml": f"x: {x}\n"}
            ).raise_for_status()
        c.post(f"/experiments/{experiment}/commit").raise_for_status()
    first, _ = start(service, spool, tmp_path, experiment, None, save="first")
    second, _ = start(service, spool, tmp_path, experiment, None, save="second")
    ids = {r: service.get(run_path(experiment, 1, r))["id"] for r in (first, second)}

    # The default: the run's own chain, which holds nothing yet, though the variation has two checkpoints.
    fresh, loaded = start(service, spool, tmp_path, experiment, None)
    assert loaded is None
    assert service.get(run_path(experiment, 1, fresh))["resumes_from_run_id"] is None

    # A run number, "N.R" (as `assay run --resume-from` takes it) and the API's own body.
    for given, expected in ((first, first), (f"1.{second}", second), ({"r": first}, first)):
        r, loaded = start(service, spool, tmp_path, experiment, given)
        assert loaded == ("first" if expected == first else "second"), given
        assert service.get(run_path(experiment, 1, r))["resumes_from_run_id"] == ids[expected]

    # "latest": the run holding the variation's newest ready checkpoint; then that run's own save is newer.
    r, loaded = start(service, spool, tmp_path, experiment, "latest", save="third")
    assert loaded == "second"
    assert service.get(run_path(experiment, 1, r))["resumes_from_run_id"] == ids[second]
    after, loaded = start(service, spool, tmp_path, experiment, "latest")
    assert loaded == "third"
    assert (
        service.get(run_path(experiment, 1, after))["resumes_from_run_id"]
        == (service.get(run_path(experiment, 1, r))["id"])
    )

    # Another variation's run, by N.R from variation 2; and "latest" where no run saved one starts afresh.
    r2, loaded = start(service, spool, tmp_path, experiment, f"1.{first}", n=2)
    assert loaded == "first"
    assert service.get(run_path(experiment, 2, r2))["resumes_from_run_id"] == ids[first]
    r2, loaded = start(service, spool, tmp_path, experiment, "latest", n=2)
    assert loaded is None
    assert service.get(run_path(experiment, 2, r2))["resumes_from_run_id"] is None


def test_resume_from_that_cannot_be_is_refused(
    service: Service, spool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay

    experiment = service.experiment()
    for name, value in service.sdk_env(spool).items():
        monkeypatch.setenv(name, value)
    for bad in ("soon", "0", {"n": 1}, {"r": 1, "x": 2}, 1.5, True):
        with pytest.raises(assay.ConfigError, match="resume_from"):
            assay.init(experiment=experiment, variation=1, resume_from=bad)  # type: ignore[arg-type]
    with pytest.raises(assay.ConfigError, match="new standalone run"):
        assay.init(experiment=experiment, variation=1, run=1, resume_from=1)
    with pytest.raises(assay.ConfigError, match="new standalone run"):
        assay.init(experiment=experiment, variation=1, mode="offline", resume_from="latest")
    # A run that is not there: the service's 422, before any run is created.
    with pytest.raises(assay.BadRequestError) as refused:
        assay.init(experiment=experiment, variation=1, resume_from=7)
    assert refused.value.code == "resume_from_not_found"
    assert service.get(f"/experiments/{experiment}/variations/1/runs")["items"] == []
