"""client.sweeps against a service with its orchestrator on, as `npm start` runs it (an embedded Temporal
dev server and worker): a list and a grid sweep created, listed, iterated, read and cancelled, its runs
ending abandoned. client.search: a report found in its organization's scope, and pointed at from the
personal one."""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Service

import assay


@pytest.fixture(scope="module")
def orchestrated() -> Iterator[Service]:
    root = Path(tempfile.mkdtemp(prefix="assay-sdk-orch-"))
    service = Service(data_dir=root / "data", extra_env={"ASSAY_ORCHESTRATOR": "on"})
    service.start()
    try:
        yield service
    finally:
        service.stop()
        shutil.rmtree(root, ignore_errors=True)


def wait_until_done(client: assay.Client, experiment: str, sweep_id: str) -> Any:
    deadline = time.monotonic() + 180
    while True:
        sweep = client.sweeps.get(experiment, sweep_id)
        if sweep["progress"]["done"]:
            return sweep
        assert time.monotonic() < deadline, f"the sweep did not end in 180 s: {sweep['progress']}"
        time.sleep(0.5)


def test_a_list_sweep_listed_read_and_cancelled(orchestrated: Service, home: Path) -> None:
    with assay.Client(orchestrated.url, orchestrated.create_user()) as client:
        experiment = client.experiments.create("lr sweep")["id"]
        # Trials that would run a minute: the cancel, not their end, finishes the sweep.
        base = "optimizer:\n  lr: 0.1\nlaunch:\n  command: sleep 60\n"
        first = client.sweeps.create(
            experiment,
            {"base_yaml": base, "list": [{"optimizer.lr": v} for v in (0.1, 0.01, 0.001)], "concurrency": 1},
        )
        assert first["declaration"]["strategy"] == "list"  # the strategy a spec with "list" gets
        assert [r["params"] for r in first["runs"]] == [
            {"optimizer.lr": 0.1},
            {"optimizer.lr": 0.01},
            {"optimizer.lr": 0.001},
        ]
        # A sweep commits its experiment, so another sweep goes in another (draft) experiment.
        other = client.experiments.create("another sweep")["id"]
        second = client.sweeps.create(other, {"base_yaml": base, "grid": {"optimizer.lr": [0.5]}})
        assert (second["declaration"]["strategy"], len(second["runs"])) == ("grid", 1)
        assert client.experiments.get(experiment)["state"] == "committed"

        page = client.sweeps.list(experiment)
        assert ([s["id"] for s in page["items"]], page["next_cursor"]) == ([first["id"]], None)
        assert page["items"][0]["progress"]["total"] == 3
        assert [s["id"] for s in client.sweeps.iterate(other, limit=1)] == [second["id"]]

        got = client.sweeps.get(experiment, first["id"])
        assert (got["id"], got["concurrency"], got["progress"]["total"]) == (first["id"], 1, 3)
        assert [(r["n"], r["r"]) for r in got["runs"]] == [(r["n"], r["r"]) for r in first["runs"]]

        for eid, sweep in ((experiment, first), (other, second)):
            assert client.sweeps.cancel(eid, sweep["id"])["id"] == sweep["id"]
        for eid, sweep in ((experiment, first), (other, second)):
            ended = wait_until_done(client, eid, sweep["id"])
            total = len(sweep["runs"])
            assert (ended["progress"]["failed"], ended["progress"]["failed_by_reason"]) == (
                total,
                {"abandoned": total},
            )
            for run in sweep["runs"]:
                state = client.runs.get(eid, run["n"], run["r"])
                assert (state["state"], state["failure_reason"]) == ("failed", "abandoned")
        with pytest.raises(assay.NotFoundError):
            client.sweeps.get(experiment, str(uuid.uuid4()))


def test_a_report_found_in_its_scope(service: Service, user_key: str, home: Path) -> None:
    word = f"zyx{uuid.uuid4().hex[:10]}"  # in this report only
    with assay.Client(service.url, user_key) as client:
        org = client.organizations.create(f"lab-{uuid.uuid4().hex[:8]}", "Lab")
        experiment = client.experiments.create("with a report", organization_id=org["id"])["id"]
        report = client.assets.create_inline(
            "report",
            "findings.md",
            content=f"# Findings\n\nThe {word} heads attend to the previous token.\n",
            content_type="text/markdown",
            experiment_id=experiment,
        )
        deadline = time.monotonic() + 60
        while True:
            found = client.search(word, organization_id=org["id"])
            if found["items"] or time.monotonic() > deadline:
                break
            time.sleep(0.3)  # the text is indexed after the asset is stored
        assert found["scope"]["id"] == org["id"]
        assert [(h["asset_id"], h["kind"], h["experiment_id"]) for h in found["items"]] == [
            (report["id"], "report", experiment)
        ]
        assert f"<mark>{word}</mark>" in found["items"][0]["snippet"]
        assert client.search.query(word, kind="paper", organization_id=org["id"])["items"] == []
        # From the personal scope: no hit there, and the scope that has one.
        personal = client.search(word, organization_id=assay.PERSONAL)
        assert personal["items"] == []
        assert [(s["scope"]["id"], s["hits"]) for s in personal["other_scopes"]] == [(org["id"], 1)]
