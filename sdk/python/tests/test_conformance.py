"""The language-neutral conformance cases of test/conformance/*.json, which the TypeScript client's suite
runs too (test/client/conformance.test.ts)."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from conftest import CONFORMANCE_DIR, Service
from double import CannedServer

import assay
from assay._config import describe_source, resolve_settings, resolve_settings_from_file

KEY = "sk_user_conformance"


def load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((CONFORMANCE_DIR / name).read_text())["cases"]
    return cases


def ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["name"] for c in cases]


def render(text: str, home: Path) -> str:
    """``{home}`` and ``{name:X}`` (a setting as Python names it: the snake_case name itself)."""
    text = text.replace("{home}", str(home))
    return re.sub(r"\{name:([a-z_]+)\}", lambda m: m.group(1), text)


def assert_error(error: BaseException, expect: dict[str, Any], home: Optional[Path] = None) -> None:
    assert type(error).__name__ == expect["class"], f"{type(error).__name__}: {error}"
    for base in expect.get("is_a", []):
        assert isinstance(error, getattr(assay, base))
    message = str(error)
    if "message" in expect:
        assert message == render(expect["message"], home or Path("/")), message
    for part in expect.get("message_contains", []):
        assert render(part, home or Path("/")) in message, message
    fields = {"status_code": "status_code", "code": "code", "details": "details", "request_id": "request_id"}
    for key, attr in fields.items():
        if key in expect:
            assert getattr(error, attr) == expect[key], f"{key}: {getattr(error, attr)!r}"


# --- configuration ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", load("config.json"), ids=ids(load("config.json")))
def test_config(case: dict[str, Any], tmp_path: Path) -> None:
    home = tmp_path
    for rel, text in case.get("files", {}).items():
        file = home / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    env = {k: render(v, home) for k, v in case.get("env", {}).items()}
    expect = case["expect"]

    def resolve() -> Any:
        if "from_file" in case:
            paths = case["from_file"]
            config = render(paths["config"], home) if "config" in paths else None
            credentials = render(paths["credentials"], home) if "credentials" in paths else None
            return resolve_settings_from_file(config, credentials, case.get("explicit"))
        return resolve_settings(case.get("explicit"), env=env, home_dir=home)

    if "error" in expect:
        with pytest.raises(assay.ServiceError) as raised:
            resolve()
        assert_error(raised.value, expect["error"], home)
        return
    resolved = resolve()
    s = resolved.settings
    got = {
        "server_url": s.server_url,
        "api_key": s.api_key,
        "timeout": s.timeout,
        "max_upload_workers": s.max_upload_workers,
        "organization_id": s.organization_id,
        "organization_slug": s.organization_slug,
    }
    assert got == expect["settings"]
    if "sources" in expect:
        sources = {name: describe_source(src) for name, src in resolved.sources.items()}
        assert sources == {k: render(v, home) for k, v in expect["sources"].items()}
    if "warnings" in expect:
        assert list(resolved.warnings) == [render(w, home) for w in expect["warnings"]]


def test_config_through_the_client_constructor(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The constructor resolves as resolve_settings does, from the real environment and home."""
    (home / ".assay").mkdir()
    (home / ".assay" / "credentials.yaml").write_text("api_key: sk_user_home\n")
    monkeypatch.setenv("SERVICE_TIMEOUT", "4")
    client = assay.Client(server_url="http://127.0.0.1:9")
    assert (client.settings.api_key, client.settings.timeout) == ("sk_user_home", 4)
    assert describe_source(client.sources["api_key"]) == f"file {home}/.assay/credentials.yaml"
    monkeypatch.delenv("SERVICE_TIMEOUT")
    (home / ".assay" / "credentials.yaml").unlink()
    with pytest.raises(assay.ConfigError, match="no API key"):
        assay.Client()


# --- calls, shared by errors, retries and requests ------------------------------------------------------


def personal(value: Any) -> Any:
    return assay.PERSONAL if value == "{PERSONAL}" else value


def call(client: assay.Client, method: str, a: dict[str, Any]) -> Any:
    """A case's neutral call on the Python client."""
    org = personal(a.get("organization_id"))
    calls: dict[str, Callable[[], Any]] = {
        "experiments.create": lambda: client.experiments.create(
            a["name"],
            description=a.get("description"),
            tags=a.get("tags"),
            organization_id=org,
        ),
        "experiments.list": lambda: client.experiments.list(
            state=a.get("state"), tags=a.get("tags"), limit=a.get("limit"), organization_id=org
        ),
        "experiments.get": lambda: client.experiments.get(a["id"]),
        "experiments.delete": lambda: client.experiments.delete(a["id"]),
        "experiments.commit": lambda: client.experiments.commit(a["id"]),
        "variations.create": lambda: client.variations.create(a["experiment_id"], a["config_yaml"]),
        "runs.create": lambda: client.runs.create(a["experiment_id"], a["n"]),
        "runs.provision": lambda: client.runs.provision(a["experiment_id"], a["n"], a["r"]),
        "runs.log_metrics": lambda: client.runs.log_metrics(a["experiment_id"], a["n"], a["r"], a["points"]),
        "search": lambda: client.search(a["q"], organization_id=org),
        "assets.list": lambda: client.assets.list(experiment_id=a.get("experiment_id"), kind=a.get("kind")),
        "api_keys.revoke": lambda: client.api_keys.revoke(a["id"]),
    }
    return calls[method]()


def canned_client(url: str, settings: Optional[dict[str, Any]] = None) -> assay.Client:
    return assay.Client(url, KEY, timeout=10, **(settings or {}))


@pytest.mark.parametrize("case", load("errors.json"), ids=ids(load("errors.json")))
def test_errors(case: dict[str, Any], home: Path) -> None:
    with CannedServer([case]) as server, canned_client(server.url) as client:
        with pytest.raises(assay.APIError) as raised:
            client.experiments.get("e1")
        assert_error(raised.value, case["expect"])
        assert [(r.method, r.path) for r in server.requests] == [("GET", "/experiments/e1")]


@pytest.mark.parametrize("case", load("retries.json"), ids=ids(load("retries.json")))
def test_retries(case: dict[str, Any], home: Path) -> None:
    expect = case["expect"]
    with CannedServer(case["responses"]) as server, canned_client(server.url) as client:
        if "error" in expect:
            with pytest.raises(assay.ServiceError) as raised:
                call(client, case["call"]["method"], case["call"]["args"])
            assert type(raised.value).__name__ == expect["error"], repr(raised.value)
        else:
            assert call(client, case["call"]["method"], case["call"]["args"]) == expect["result"]
        assert len(server.requests) == expect["attempts"]


@pytest.mark.parametrize("case", load("requests.json"), ids=ids(load("requests.json")))
def test_requests(case: dict[str, Any], home: Path) -> None:
    with (
        CannedServer(case.get("responses", [])) as server,
        canned_client(server.url, case.get("client")) as client,
    ):
        for step in case["calls"]:
            if "error" in step:
                with pytest.raises(assay.ServiceError) as raised:
                    call(client, step["method"], step["args"])
                assert_error(raised.value, step["error"])
            else:
                call(client, step["method"], step["args"])
        want = case["expect"]["requests"]
        assert len(server.requests) == len(want), [(r.method, r.path) for r in server.requests]
        for got, exp in zip(server.requests, want):
            assert (got.method, got.path, got.query, got.body) == (
                exp["method"],
                exp["path"],
                exp["query"],
                exp["body"],
            )
            for name, value in exp["headers"].items():
                assert got.headers.get(name) == value, name
            for name in exp.get("absent_headers", []):
                assert name not in got.headers, name


@pytest.mark.parametrize("case", load("metric-delivery.json"), ids=ids(load("metric-delivery.json")))
def test_metric_delivery(
    case: dict[str, Any], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The case's expectation, unless it says this client differs on purpose.
    expect = (case.get("expect_by_client") or {}).get("python") or case["expect"]
    with CannedServer(case["responses"]) as server:
        # A run handle as a script under `assay run` gets it (attached: no request before the first batch),
        # delivering through the same sender as any run.log.
        env = {
            "ASSAY_EXPERIMENT_ID": "e1",
            "ASSAY_VARIATION": "1",
            "ASSAY_RUN": "1",
            "SERVICE_SERVER_URL": server.url,
            "SERVICE_API_KEY": KEY,
            "ASSAY_SPOOL_DIR": str(tmp_path / "spool"),
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        for name in ("ASSAY_CONFIG_FILE", "ASSAY_MODE", "ASSAY_MAX_BUFFERED_POINTS"):
            monkeypatch.delenv(name, raising=False)
        sigterm = signal.getsignal(signal.SIGTERM)
        run = assay.init()
        try:
            run.log({"loss": 0.5}, step=0)
            if expect.get("stored"):
                assert run.flush(timeout=60) is True
            else:
                with pytest.raises(assay.ServiceError) as raised:
                    run.flush(timeout=60)
                assert type(raised.value).__name__ == expect["error"]
                assert isinstance(raised.value, assay.MetricsError)
                assert raised.value.dropped == expect["dropped"]
                assert type(raised.value.__cause__).__name__ == expect["cause"]
        finally:
            run.finish()
            signal.signal(signal.SIGTERM, sigterm)
        assert len(server.requests) == expect["attempts"]
        for request in server.requests:
            assert (request.method, request.path) == ("POST", "/experiments/e1/variations/1/runs/1/metrics")
            assert [(p["key"], p["step"], p["value"]) for p in request.body["metrics"]] == [("loss", 0, 0.5)]
        assert list((tmp_path / "spool").glob("*.db")) == []


# --- against the real service ----------------------------------------------------------------------------


def fill(value: Any, saved: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\.(\w+)\}", lambda m: str(saved[m.group(1)][m.group(2)]), value)
    if isinstance(value, dict):
        return {k: fill(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, saved) for v in value]
    return value


@pytest.mark.parametrize("case", load("service.json"), ids=ids(load("service.json")))
def test_service(case: dict[str, Any], service: Service, home: Path) -> None:
    key = (case.get("client") or {}).get("api_key") or service.create_user()
    saved: dict[str, Any] = {}
    with assay.Client(service.url, key) as client:
        for step in case["steps"]:
            args = fill(step["args"], saved)
            expect = step.get("expect", {})
            if "error" in expect:
                with pytest.raises(assay.ServiceError) as raised:
                    call(client, step["method"], args)
                assert_error(raised.value, expect["error"])
                continue
            result = call(client, step["method"], args)
            for k, v in expect.get("result", {}).items():
                assert result[k] == v, (k, result)
            if "save_as" in step:
                saved[step["save_as"]] = result
