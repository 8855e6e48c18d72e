"""assay.Client against a real service: each namespace's calls, their answers as the service sends them,
and the errors it raises."""

from __future__ import annotations

import math
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import Service

import assay

CONFIG = "optimizer:\n  lr: 0.01\nepochs: 3\n"


@pytest.fixture
def client(service: Service, user_key: str, home: Path) -> Iterator[assay.Client]:
    with assay.Client(service.url, user_key) as c:
        yield c


def committed(client: assay.Client, name: str = "committed") -> str:
    experiment = client.experiments.create(name)
    client.variations.create(experiment["id"], CONFIG, name="base")
    client.experiments.commit(experiment["id"])
    return experiment["id"]


def started_run(client: assay.Client) -> tuple[str, int, int]:
    """A running run (start is the run handle's move; here through the transport)."""
    eid = committed(client, "with a run")
    run = client.runs.create(eid, 1)
    client.runs.config(eid, 1, run["r"])
    client.transport.post(f"/experiments/{eid}/variations/1/runs/{run['r']}/start", {})
    return eid, 1, run["r"]


def test_experiment_lifecycle(client: assay.Client) -> None:
    created = client.experiments.create("lr sweep", description="d", hypothesis="h")
    assert (created["name"], created["state"], created["hypothesis"]) == ("lr sweep", "draft", "h")
    eid = created["id"]
    assert client.experiments.update(eid, name="lr sweep 2")["name"] == "lr sweep 2"
    variation = client.variations.create(eid, CONFIG, name="base")
    assert (variation["n"], variation["name"]) == (1, "base")
    assert client.variations.update(eid, 1, name="baseline")["name"] == "baseline"
    assert [v["n"] for v in client.variations.list(eid)] == [1]
    assert client.variations.get(eid, 1)["name"] == "baseline"
    assert client.experiments.commit(eid)["state"] == "committed"
    detail = client.experiments.get(eid)
    assert [v["n"] for v in detail["variations"]] == [1]
    with pytest.raises(assay.ConflictError) as raised:
        client.experiments.update(eid, name="frozen")
    assert raised.value.status_code == 409
    assert client.experiments.conclude(eid)["state"] == "concluded"
    retracted = client.experiments.retract(eid, "a bug in the data loader")
    assert (retracted["state"], retracted["retraction_reason"]) == ("retracted", "a bug in the data loader")


def test_list_and_iterate_page_by_page(client: assay.Client) -> None:
    names = {f"paged {i}" for i in range(5)}
    for name in sorted(names):
        client.experiments.create(name)
    page = client.experiments.list(limit=2)
    assert len(page["items"]) == 2 and page["next_cursor"]
    assert {e["name"] for e in client.experiments.iterate(limit=2)} == names
    assert client.experiments.list(state="committed")["items"] == []


def test_runs_and_metrics(client: assay.Client) -> None:
    eid, n, r = started_run(client)
    assert client.runs.get(eid, n, r)["state"] == "running"
    assert [run["r"] for run in client.runs.list(eid, n)] == [r]
    config = client.runs.config(eid, n, r)
    assert config["config_json"] == {"optimizer": {"lr": 0.01}, "epochs": 3}
    points = [
        {"key": "loss", "step": 0, "value": 1.5},
        {"key": "loss", "step": 1, "value": math.nan},
        {"key": "loss", "step": 2, "value": math.inf},
        {"key": "acc", "step": 0, "value": 0.5},
    ]
    assert client.runs.log_metrics(eid, n, r, points)["stored"] == 4
    # A resend stores nothing twice: the service keeps one point per (run, key, step).
    client.runs.log_metrics(eid, n, r, points)
    keys = {m["key"]: m for m in client.runs.metrics(eid, n, r)}
    assert set(keys) == {"acc", "loss"} and keys["loss"]["count"] == 3
    series = client.runs.metric_series(eid, n, r, "loss")
    assert [p["value"] for p in series["points"]] == [1.5, "NaN", "Infinity"]
    assert [p["step"] for p in client.runs.iterate_metric_points(eid, n, r, "loss", limit=1)] == [0, 1, 2]
    assert client.experiments.metric_keys(eid)["items"][0]["key"] == "acc"
    compared = client.experiments.metrics(eid, ["acc"])
    assert len(compared["items"]) == 1
    with pytest.raises(assay.NotFoundError):
        client.runs.checkpoint(eid, n, r)
    cancelled = client.runs.cancel(eid, n, r)
    assert cancelled["cancel_requested"] is True


def test_labels_archive_tags_and_deleting_a_draft(client: assay.Client) -> None:
    eid = committed(client, "labelled")
    run = client.runs.create(eid, 1, name="baseline", tags=["lr", "seed-1"], notes="*first* try")
    assert (run["name"], run["tags"], run["notes"]) == ("baseline", ["lr", "seed-1"], "*first* try")
    other = client.runs.create(eid, 1)
    assert [x["r"] for x in client.runs.list(eid, 1, tags=["seed-1"])] == [run["r"]]
    relabelled = client.runs.update(eid, 1, other["r"], name="second", tags=["lr"], archived=True)
    assert (relabelled["name"], relabelled["archived_at"] is not None) == ("second", True)
    assert [x["r"] for x in client.runs.list(eid, 1)] == [run["r"]]
    assert {x["r"] for x in client.runs.list(eid, 1, archived=True)} == {run["r"], other["r"]}
    assert client.runs.update(eid, 1, other["r"], name=None)["name"] is None
    page = client.runs.list_for_experiment(eid, tags=["lr"], archived=True, limit=1)
    assert len(page["items"]) == 1 and page["next_cursor"]
    with pytest.raises(assay.BadRequestError):
        client.runs.create(eid, 1, tags=["a,b"])
    # Experiment tags change in any state; the list filters by them.
    assert client.experiments.update(eid, tags=["vision"])["tags"] == ["vision"]
    assert [e["id"] for e in client.experiments.list(tags=["vision"])["items"]] == [eid]
    # A draft can be deleted; a committed experiment cannot.
    draft = client.experiments.create("scratch", tags=["tmp"])["id"]
    client.experiments.delete(draft)
    with pytest.raises(assay.NotFoundError):
        client.experiments.get(draft)
    with pytest.raises(assay.ConflictError):
        client.experiments.delete(eid)


def test_console_log_append_and_read(client: assay.Client) -> None:
    eid, n, r = started_run(client)
    lines = [
        {"stream": "stdout", "time": "2026-11-27T10:00:00.000Z", "text": f"epoch {i}"} for i in range(1, 4)
    ]
    assert client.runs.append_logs(eid, n, r, 1, lines)["last_seq"] == 3
    # A resend stores nothing twice.
    client.runs.append_logs(eid, n, r, 1, lines)
    client.runs.append_logs(
        eid, n, r, 4, [{"stream": "stderr", "time": "2026-11-27T10:00:01.000Z", "text": "warn"}]
    )
    page = client.runs.logs(eid, n, r)
    assert [(x["seq"], x["stream"], x["text"]) for x in page["lines"]] == [
        (1, "stdout", "epoch 1"),
        (2, "stdout", "epoch 2"),
        (3, "stdout", "epoch 3"),
        (4, "stderr", "warn"),
    ]
    assert (page["next_after"], page["complete"]) == (4, False)
    assert [x["seq"] for x in client.runs.logs(eid, n, r, after=2, stream="stderr")["lines"]] == [4]


def test_a_pending_run_cancelled_is_abandoned(client: assay.Client) -> None:
    eid = committed(client)
    run = client.runs.create(eid, 1)
    assert run["state"] == "pending"
    assert client.runs.cancel(eid, 1, run["r"])["state"] == "failed"


def test_assets_inline_and_uploaded(client: assay.Client, tmp_path: Path) -> None:
    eid = committed(client)
    inline = client.assets.create_inline("report", "notes.md", content="# hi\n", experiment_id=eid)
    assert inline["state"] == "ready"
    weights = tmp_path / "weights.bin"
    weights.write_bytes(bytes(range(256)) * 64)
    asset = client.assets.upload_files("output", "model", {"weights.bin": weights}, experiment_id=eid)
    assert asset["state"] == "ready" and asset["components"]["weights.bin"]["size"] == 256 * 64
    assert client.assets.get(asset["id"])["name"] == "model"
    url = client.assets.download(asset["id"])["components"]["weights.bin"]["url"]
    assert httpx.get(url).content == weights.read_bytes()
    listed = client.assets.list(experiment_id=eid, kind="output")
    assert [a["id"] for a in listed["items"]] == [asset["id"]]


def test_api_keys_minted_listed_and_revoked(client: assay.Client, service: Service) -> None:
    minted = client.api_keys.create("read only", ["experiments:read"], kind="agent")
    assert minted["key"].startswith("sk_agent_")
    assert minted["id"] in {k["id"] for k in client.api_keys.list()}
    with assay.Client(service.url, minted["key"]) as limited:
        limited.experiments.list()
        with pytest.raises(assay.PermissionDeniedError):
            limited.experiments.create("not allowed")
        client.api_keys.revoke(minted["id"])
        with pytest.raises(assay.AuthenticationError) as raised:
            limited.experiments.list()
        assert raised.value.status_code == 401 and raised.value.request_id


def test_organization_scope(service: Service, user_key: str, home: Path) -> None:
    with assay.Client(service.url, user_key) as owner:
        org = owner.organizations.create(f"lab-{user_key[-8:].lower().replace('_', '-')}", "Lab")
        assert owner.organizations.get(org["id"])["role"] == "owner"
        assert [m["role"] for m in owner.organizations.members(org["id"])] == ["owner"]
        assert org["id"] in {o["id"] for o in owner.me.scopes()["organizations"]}
    # A client whose default organization is a slug: resolved on first use, sent with calls that take one.
    with assay.Client(service.url, user_key, organization_slug=org["slug"]) as scoped:
        in_org = scoped.experiments.create("in the lab")
        personal = scoped.experiments.create("mine", organization_id=assay.PERSONAL)
        assert (in_org["organization_id"], personal["organization_id"]) == (org["id"], None)
        assert [e["name"] for e in scoped.experiments.iterate()] == ["in the lab"]
        assert [e["name"] for e in scoped.experiments.iterate(organization_id=assay.PERSONAL)] == ["mine"]


def test_server_features_that_are_off_answer_503(client: assay.Client) -> None:
    eid = committed(client)
    with pytest.raises(assay.ServerError) as raised:
        client.sweeps.create(eid, {"base_yaml": CONFIG, "grid": {"optimizer.lr": [0.1, 0.01]}})
    assert raised.value.status_code == 503


def test_timeout_and_refused_connection(home: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts, never answers
    stop = threading.Event()
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with (
            assay.Client(url, "sk_user_x", timeout=0.3) as client,
            pytest.raises(assay.APITimeoutError) as raised,
        ):
            client.experiments.get("e1")
        assert str(raised.value) == "GET /experiments/e1: no answer within 0.3 s"
        assert isinstance(raised.value, assay.APIConnectionError)
    finally:
        stop.set()
        silent.close()
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with (
        assay.Client(f"http://127.0.0.1:{port}", "sk_user_x") as client,
        pytest.raises(assay.APIConnectionError) as err,
    ):
        client.experiments.list()
    assert str(err.value).startswith(f"GET /experiments: cannot reach http://127.0.0.1:{port} (")
