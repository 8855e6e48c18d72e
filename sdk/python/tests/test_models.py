"""The checked-in wire models are what the generator makes of the service's current /openapi.json: a
contract change without `python sdk/python/scripts/generate_models.py` fails here."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

from conftest import NODE, REPO_ROOT

SDK = REPO_ROOT / "sdk" / "python"


def test_models_match_the_service_spec(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.json"
    with spec.open("w") as out:
        subprocess.run([NODE, "scripts/openapi-spec.ts"], cwd=REPO_ROOT, stdout=out, check=True)
    fresh = tmp_path / "models.py"
    subprocess.run(
        [
            sys.executable,
            str(SDK / "scripts" / "generate_models.py"),
            "--spec",
            str(spec),
            "--output",
            str(fresh),
        ],
        check=True,
        env={**os.environ},
    )
    checked_in = (SDK / "src" / "assay" / "models.py").read_text()
    diff = "".join(
        difflib.unified_diff(
            checked_in.splitlines(keepends=True),
            fresh.read_text().splitlines(keepends=True),
            "src/assay/models.py (checked in)",
            "generated from /openapi.json",
            n=1,
        )
    )
    assert diff == "", (
        "src/assay/models.py differs from the service's /openapi.json; regenerate it with "
        "`npm run sdk:python:models`:\n" + diff[:6000]
    )


def test_models_import_and_name_the_operations() -> None:
    from assay import models

    # A response named after its operation, and a titled schema by its title, are the same kind of TypedDict.
    assert models.GetExperimentResponse.__required_keys__ >= {"id", "name", "state", "variations"}
    assert "state" in models.Run.__required_keys__
    assert models.GetRunResponse is models.Run


def test_the_typescript_names_alias_the_generated_models() -> None:
    from assay import models, types

    assert types.Experiment is models.CreateExperimentResponse
    assert types.ExperimentDetail is models.GetExperimentResponse
    assert types.RunConfig is models.GetRunConfigResponse


def test_assay_models_is_a_module_of_its_own() -> None:
    # A fresh interpreter: `import assay.models` and `from assay.models import …` as a user writes them, not
    # the attribute an earlier `import assay` in this process set.
    code = (
        "import assay.models, sys\n"
        "from assay.models import Run, GetRunResponse, CreateRunRequest\n"
        "print(assay.models.__name__, Run is GetRunResponse,"
        " 'resume_from' in CreateRunRequest.__annotations__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SDK / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["assay.models", "True", "True"]
