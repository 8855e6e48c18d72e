"""``assay.init()`` and the run handle a training script holds: config, ``log``, checkpoints, the end.

Three modes:

- **attached**: under ``assay run`` (or a managed instance, which runs ``assay run``), which exports
  ``ASSAY_EXPERIMENT_ID``, ``ASSAY_VARIATION``, ``ASSAY_RUN`` and ``ASSAY_CONFIG_FILE``. The runner owns the
  run's life (start, heartbeats, succeed or fail, cancels); the handle reads the config from the file and
  sends metrics itself, straight to ``POST …/metrics`` (it never writes ``ASSAY_METRICS_FILE``, so nothing is
  sent twice). A cancel reaches the script as the runner's SIGTERM.
- **standalone**: anywhere else, ``init(experiment=…, variation=…)`` creates a run of the variation (or takes
  ``run=`` R, a pending one), reads its config, starts it with an environment snapshot, heartbeats and keeps
  a control long-poll open in background threads, and ``finish()`` succeeds it.
- **offline** (``ASSAY_MODE=offline`` or ``mode="offline"``): nothing goes over the network; the run and its
  points are kept in the spool, and ``assay-sync`` creates the run and sends them later.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Callable, Optional, Union

import httpx

from . import _checkpoint
from ._config import Settings, inspect_settings, resolve_settings
from ._environment import snapshot
from ._errors import ConfigError, ConflictError
from ._metric_logger import MetricSender, MetricsPoster, max_buffered_points
from ._paths import path as url_path
from ._spool import Spool, spool_dir
from ._transport import Transport

__all__ = ["LATEST", "ResumeFrom", "Run", "RunCancelled", "init"]

log = logging.getLogger("assay")

MODE_VARIABLE = "ASSAY_MODE"
FLUSH_TIMEOUT_VARIABLE = "ASSAY_FLUSH_TIMEOUT_S"
DEFAULT_FLUSH_TIMEOUT_S = 60.0
DEFAULT_HEARTBEAT_S = 30.0
_KEY = re.compile(r"^[A-Za-z0-9_./:-]([A-Za-z0-9_./: -]*[A-Za-z0-9_./:-])?$")
_MAX_KEY_LENGTH = 250
_MAX_STEP = 2**53 - 1
_SEND_TIMEOUT_S = 15.0
_RUN_REFERENCE = re.compile(r"^\s*(?:(\d+)\.)?(\d+)\s*$")

LATEST = "latest"
"""``init(resume_from=LATEST)``: the run of the variation that holds its newest ready checkpoint."""
ResumeFrom = Union[int, str, Mapping[str, int]]
"""What ``init(resume_from=…)`` takes: a run number R of the same variation, ``"N.R"`` (run R of variation N,
as ``assay run --resume-from`` takes it), ``{"r": R}`` or ``{"n": N, "r": R}`` (the API's body), or
``"latest"``."""


class RunCancelled(BaseException):
    """Raised in the main thread when the run is asked to stop (a person's cancel, a sweep's early stop, or
    ``assay run``'s SIGTERM), unless callbacks were registered with ``Run.on_cancel``. A BaseException, as
    KeyboardInterrupt is, so ``except Exception`` in a training loop does not swallow it; catch it to save a
    checkpoint before exiting. ``reason``: "cancelled", "stopped_early", "ended" (ended on the service) or
    "signal" (a SIGTERM: under ``assay run`` the runner does not say why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the run was asked to stop ({reason})")
        self.reason = reason


class Run:
    """A run as a training script sees it. Use ``assay.init()`` to get one."""

    experiment_id: str
    variation: int
    """The variation number (``n``)."""
    r: Optional[int]
    """The run number; None for an offline run not yet synced."""
    mode: str
    """"attached", "standalone" or "offline"."""
    config: dict[str, Any]
    """The variation's config (``config_json``): what its config YAML holds."""

    def __init__(
        self,
        *,
        mode: str,
        experiment_id: str,
        variation: int,
        r: Optional[int],
        config: dict[str, Any],
        transport: Optional[Transport],
        api_key: str,
        spool_path: Path,
        spool_meta: dict[str, Any],
        heartbeat_s: float,
        flush_timeout_s: float,
        run_config: Optional[dict[str, Any]] = None,
        max_points: Optional[int] = None,
        upload_workers: int = 1,
        part_bytes: int = _checkpoint.PART_BYTES,
    ) -> None:
        self.mode = mode
        self.experiment_id = experiment_id
        self.variation = variation
        self.r = r
        self.config = config
        self.run_config = run_config or {}
        self._transport = transport
        self._flush_timeout_s = flush_timeout_s
        self._upload_workers = upload_workers
        self._part_bytes = part_bytes
        self._spool_path = spool_path
        self._spool_meta = spool_meta
        self._finished = False
        self._finish_lock = threading.Lock()
        self._cancel_callbacks: list[Callable[[str], None]] = []
        self.cancelled = False
        """True once the run was asked to stop."""
        self.cancel_reason: Optional[str] = None
        self._next_step = 0
        self._known_keys: set[str] = set()
        self._last_step: Optional[int] = None
        self._poster = (
            MetricsPoster(transport.server_url, api_key, f"{self._path}/metrics", _SEND_TIMEOUT_S)
            if transport is not None
            else None
        )
        self._sender = MetricSender(
            self._poster, self._open_spool, max_points=max_points or max_buffered_points()
        )
        self._buffer = self._sender.buffer
        self._http: Optional[httpx.Client] = None
        self._liveness: Optional[Any] = None
        if mode == "offline":
            self._sender.spool()  # the spool is the offline run: it exists from the start
        self._sigterm_installed = _install_sigterm(self)
        if mode == "standalone" and transport is not None:
            from ._heartbeat import Liveness

            self._liveness = Liveness(transport.request, self._path, heartbeat_s, self._stop_requested)
            self._liveness.start()
        _live_runs.add(self)

    # --- what a script uses ---
    def log(self, values: Mapping[str, Any], step: Optional[int] = None) -> None:
        """Records scalar metrics at a step, e.g. ``run.log({"loss": 0.31, "acc": 0.9}, step=10)``; returns
        at once (a background thread sends them). Values are numbers (anything ``float()`` takes: numpy and
        0-d tensors too), NaN and ±Infinity included; one that is not is dropped with a warning. Without
        ``step`` a call takes the step after the previous call's (0 for the first). A key and step logged
        again replaces the earlier value. Raises ValueError for a bad key or step (nothing is kept then), and
        RuntimeError once the run has ended (``finish()``, ``fail()``): the points could not be stored.

        At most ASSAY_MAX_BUFFERED_POINTS points wait in memory: past half of it the sender thread moves them
        to the spool, and a loop that outruns it writes them there itself, in this call, at the bound."""
        if self._finished:
            raise RuntimeError(
                f"run.log() after the run ended (finish() or fail() was called): run {self.r} takes no more"
                " points; log before ending it"
            )
        if step is None:
            step = self._next_step
        elif step.__class__ is not int or step < 0 or step > _MAX_STEP:
            step = _check_step(step)
        if not self._known_keys.issuperset(values):
            self._check_keys(values)
        self._next_step = step + 1
        sender = self._sender
        self._buffer.append((step, time.time(), dict(values)))
        sender.appended += len(values)
        if sender.appended - sender._out > sender.wake_at:
            sender.pressure()

    @property
    def buffered_points(self) -> int:
        """Metric points held in memory: logged, not yet sent nor written to the spool. At most
        ASSAY_MAX_BUFFERED_POINTS (plus one call's values); the batches in flight (up to two of 1,000)
        are apart."""
        return max(self._sender.waiting, 0)

    def on_cancel(self, callback: Callable[[str], None]) -> None:
        """Calls ``callback(reason)`` when the run is asked to stop, instead of raising RunCancelled: the
        script then checks ``run.cancelled`` and stops on its own. It runs in the main thread (from a signal
        handler) when the handle could install its SIGTERM handler, else in a background thread."""
        self._cancel_callbacks.append(callback)

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Waits until every point logged so far is stored; False when the deadline passed first (then every
        point not yet stored is in the spool, and is sent later). Raises ``assay.MetricsError`` for points the
        service refused since the previous flush (a 4xx such as 409 ``run_ended``: they were dropped); points
        it could not reach it with are never dropped."""
        done = self._sender.flush(self._flush_timeout_s if timeout is None else timeout)
        refused = self._sender.take_refused()
        if refused is not None:
            raise refused
        return done

    def save_checkpoint(
        self, path: Union[str, os.PathLike[str]], name: Optional[str] = None
    ) -> dict[str, Any]:
        """Uploads a file or a directory as a checkpoint asset of this run and answers the asset. A save that
        failed can be called again: it resumes the same asset and sends only what is missing. Offline, the
        files are copied into the spool and uploaded by ``assay-sync``."""
        source = Path(path)
        name = name or (f"checkpoint-step-{self._last_logged_step()}" if self._next_step else "checkpoint")
        metadata = {"layout": "file" if source.is_file() else "directory", "step": self._last_logged_step()}
        if self.mode == "offline":
            return self._spool_checkpoint(source, name, metadata)
        assert self._transport is not None
        return _checkpoint.save(
            self._transport.request,
            self._http_client(),
            {"experiment_id": self.experiment_id, "n": self.variation, "r": self.r},
            source,
            name,
            metadata,
            spool_dir() / "checkpoints",
            part_bytes=self._part_bytes,
            workers=self._upload_workers,
        )

    def load_checkpoint(self, dest: Union[str, os.PathLike[str], None] = None) -> Optional[Path]:
        """Downloads the newest ready checkpoint of the run's chain (this run, the run it was created to
        resume from, the run it recovers or retries, and theirs) and answers its local path: the file for a
        file checkpoint, else the directory. None when there is none (and always offline). Another run's
        checkpoint is on the chain only when asked for: ``assay.init(..., resume_from=…)``. Default
        ``dest``: ``~/.assay/checkpoints/<asset id>/`` (kept: a second load of the same checkpoint downloads
        nothing)."""
        if self.mode == "offline" or self._transport is None:
            return None
        return _checkpoint.load(
            self._transport.request,
            self._http_client(),
            self._path,
            Path(dest) if dest is not None else None,
            Path.home() / ".assay" / "checkpoints",
        )

    def finish(self) -> None:
        """Sends the last points and, standalone, ends the run: succeeded, or failed when it was asked to stop
        ("abandoned"; the service records "stopped_early" for a sweep's early stop). The whole of it takes at
        most ASSAY_FLUSH_TIMEOUT_S (default 60 s): what is not delivered by then (points, the end) is in the
        spool for ``assay-sync``. Attached, the runner ends the run when the script exits. Calling it again
        does nothing; so does calling ``log`` after it (RuntimeError)."""
        self._end(None)

    def fail(self, message: Optional[str] = None, reason: str = "crash") -> None:
        """Ends a standalone run as failed ("crash" or "abandoned"); attached, only flushes (a non-zero exit
        makes the runner fail it)."""
        self._end({"move": "fail", "reason": reason, "message": message})

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc is None or isinstance(exc, RunCancelled):
            self.finish()
        elif isinstance(exc, KeyboardInterrupt):
            self.fail("interrupted (KeyboardInterrupt)", reason="abandoned")
        else:
            self.fail(_describe(exc_type, exc, tb))

    @property
    def _path(self) -> str:
        return url_path(
            "/experiments/{}/variations/{}/runs/{}", self.experiment_id, self.variation, self.r or 0
        )

    # --- internals ---
    def _last_logged_step(self) -> int:
        return max(self._next_step - 1, 0)

    def _check_keys(self, values: Mapping[str, Any]) -> None:
        if not isinstance(values, Mapping):
            raise TypeError(f"log takes a mapping of metric names to numbers, got {type(values).__name__}")
        for key in values:
            if key in self._known_keys:
                continue
            if not isinstance(key, str) or len(key) > _MAX_KEY_LENGTH or not _KEY.match(key):
                raise ValueError(
                    f"metric key {key!r}: letters, digits, `_ - . / :` and inner spaces, up to 250 characters"
                )
        self._known_keys.update(values)

    def _open_spool(self) -> Spool:
        spool = Spool(self._spool_path)
        spool.set_meta(**self._spool_meta)
        return spool

    def _spool_checkpoint(self, source: Path, name: str, metadata: dict[str, Any]) -> dict[str, Any]:
        target = self._spool_path.with_suffix(".checkpoints") / uuid.uuid4().hex
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.mkdir(parents=True)
            shutil.copy2(source, target / source.name)
        spool = self._sender.spool()
        saved = list(spool.get_meta().get("checkpoints", []))
        saved.append({"path": str(target), "name": name, "metadata": metadata})
        spool.set_meta(checkpoints=saved)
        return {"id": None, "kind": "checkpoint", "name": name, "state": "spooled", "path": str(target)}

    def _http_client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(timeout=httpx.Timeout(300.0, connect=30.0))
        return self._http

    def _stop_requested(self, reason: Optional[str]) -> None:
        """From the liveness threads: deliver the stop to the main thread."""
        self.cancelled = True
        self.cancel_reason = reason or "cancelled"
        if self._sigterm_installed and hasattr(signal, "pthread_kill"):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
        elif self._cancel_callbacks:
            self._run_callbacks(self.cancel_reason)
        else:
            import _thread

            _thread.interrupt_main()

    def _deliver_cancel(self) -> None:
        """In the main thread (the SIGTERM handler)."""
        self.cancelled = True
        reason = self.cancel_reason or "signal"
        self.cancel_reason = reason
        if self._cancel_callbacks:
            self._run_callbacks(reason)
            return
        raise RunCancelled(reason)

    def _run_callbacks(self, reason: str) -> None:
        for callback in self._cancel_callbacks:
            try:
                callback(reason)
            except Exception:
                log.exception("assay: an on_cancel callback failed")

    def _end(self, move: Optional[dict[str, Any]]) -> None:
        with self._finish_lock:
            if self._finished:
                return
            self._finished = True
        _live_runs.discard(self)
        # One deadline for the whole end: the flush, the end move, closing the sender.
        deadline = time.monotonic() + self._flush_timeout_s
        if self._liveness is not None:
            self._liveness.stop(timeout=min(1.0, self._flush_timeout_s))
        if self.mode == "standalone":
            if move is None:
                move = (
                    {"move": "fail", "reason": "abandoned", "message": f"stopped: {self.cancel_reason}"}
                    if self.cancelled
                    else {"move": "succeed"}
                )
        elif self.mode == "offline":
            move = move or {"move": "succeed"}
            self._sender.spool().set_meta(end=move)
        delivered = self._sender.flush(max(deadline - time.monotonic(), 0.0))
        if self.mode == "standalone" and move is not None:
            if delivered:
                delivered = self._move(move, deadline)
            if not delivered:
                self._sender.spool().set_meta(end=move, keep=True)
                log.warning(
                    "assay: the service did not take the run's last points or its end in time; they are in %s"
                    " and `assay-sync` sends them",
                    self._spool_path,
                )
        elif not delivered:
            log.warning(
                "assay: metric points not yet stored are kept in %s; `assay-sync` sends them",
                self._spool_path,
            )
        self._sender.close(max(deadline - time.monotonic(), 0.0) if delivered else 0.0)
        if self._poster is not None:
            self._poster.close()
        if self._http is not None:
            self._http.close()
        if self.mode == "offline":
            log.info("assay: offline run kept in %s; send it with `assay-sync`", self._spool_path)

    def _move(self, move: dict[str, Any], deadline: float) -> bool:
        assert self._transport is not None
        body = None
        if move["move"] == "fail":
            body = {"reason": move["reason"]}
            if move.get("message"):
                body["message"] = str(move["message"])[:10_000]
        delay = 0.5
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("assay: no time left to %s the run", move["move"])
                return False
            try:
                # The request's own timeout is what is left of the deadline, not the client's 30 s.
                self._transport.request("POST", f"{self._path}/{move['move']}", json=body, timeout=left)
                return True
            except ConflictError:  # ended already (by the watchdog, a cancel of a pending run…)
                return True
            except Exception as error:
                if time.monotonic() + delay > deadline:
                    log.warning("assay: could not %s the run: %s", move["move"], error)
                    return False
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def _check_step(step: Any) -> int:
    try:
        as_int = int(step)
    except (TypeError, ValueError):
        raise ValueError(f"step must be a whole number ≥ 0, got {step!r}") from None
    if as_int != step or isinstance(step, bool) or not 0 <= as_int <= _MAX_STEP:
        raise ValueError(f"step must be a whole number from 0 to 2**53 - 1, got {step!r}")
    return as_int


def _describe(
    exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
) -> str:
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    return text[-10_000:]


# --- the process's runs: ended at exit; an uncaught exception fails them "crash" ---
# Strong references: a run the script no longer holds still has points to send and an end to report.
_live_runs: set[Run] = set()
_uncaught: list[tuple[type[BaseException], BaseException, Optional[TracebackType]]] = []
_previous_excepthook = sys.excepthook


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: Optional[TracebackType]) -> None:
    _uncaught.append((exc_type, exc, tb))
    _previous_excepthook(exc_type, exc, tb)


def _at_exit() -> None:
    for run in list(_live_runs):
        if _uncaught:
            exc_type, exc, tb = _uncaught[-1]
            if isinstance(exc, RunCancelled):
                run.finish()
            elif isinstance(exc, KeyboardInterrupt):
                run.fail("interrupted (KeyboardInterrupt)", reason="abandoned")
            else:
                run.fail(_describe(exc_type, exc, tb))
        else:
            run.finish()


sys.excepthook = _excepthook
atexit.register(_at_exit)


def _install_sigterm(run: Run) -> bool:
    """SIGTERM → ``run._deliver_cancel`` in the main thread, once; only when nobody else handles SIGTERM."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False

    def handler(signum: int, frame: Optional[FrameType]) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process as usual
        run._deliver_cancel()

    signal.signal(signal.SIGTERM, handler)
    return True


# --- init ---
def init(
    experiment: Optional[str] = None,
    variation: Optional[int] = None,
    run: Optional[int] = None,
    *,
    name: Optional[str] = None,
    tags: Optional[Sequence[str]] = None,
    config: Optional[Mapping[str, Any]] = None,
    mode: Optional[str] = None,
    server_url: Optional[str] = None,
    api_key: Optional[str] = None,
    heartbeat_interval: float = DEFAULT_HEARTBEAT_S,
    flush_timeout: Optional[float] = None,
    resume_from: Optional[ResumeFrom] = None,
) -> Run:
    """The run this script is. Under ``assay run`` (``ASSAY_RUN`` set) with no ``experiment`` or the same
    one: attached to that run. Else standalone: a new run of ``variation`` of ``experiment`` (``name`` and
    ``tags`` label it), or the pending run ``run``. ``ASSAY_MODE=offline`` (or ``mode="offline"``): recorded
    in the spool only, for ``assay-sync``; ``config`` is then the run's config (no service to read it from).
    Connection settings resolve as the client's (``server_url``/``api_key`` > ``SERVICE_*`` >
    ``~/.assay/credentials.yaml`` > ``~/.assay/config.yaml``).

    ``resume_from`` (a new standalone run only) makes the new run resume from another run's checkpoints, as
    ``assay run --resume-from`` does: ``load_checkpoint()`` then finds that run's newest ready checkpoint.
    Without it a new run starts from scratch, whatever other runs of the variation saved. It takes a run
    number R of this variation, ``"N.R"``, ``{"n": N, "r": R}``, or ``"latest"``: the run of this variation
    holding its newest ready checkpoint (none: the run starts from scratch)."""
    env = os.environ
    chosen = (mode or env.get(MODE_VARIABLE, "") or "online").strip().lower()
    if chosen not in ("online", "offline"):
        raise ConfigError(f"ASSAY_MODE must be online or offline, got {chosen!r}")
    flush_s = float(
        flush_timeout
        if flush_timeout is not None
        else env.get(FLUSH_TIMEOUT_VARIABLE) or DEFAULT_FLUSH_TIMEOUT_S
    )
    max_buffered_points()  # an invalid ASSAY_MAX_BUFFERED_POINTS fails here, before a run is created
    attached_ids = _attached_ids(env)
    part_bytes = _checkpoint.part_bytes_from_env(env)  # a bad value is refused before anything is sent
    attached = attached_ids is not None and (experiment is None or experiment == attached_ids[0])
    if resume_from is not None and (chosen == "offline" or run is not None or attached):
        raise ConfigError(
            "assay.init(resume_from=…) is for a new standalone run: not with run=, offline, or under"
            " `assay run` (use its --resume-from)"
        )
    if chosen == "offline":
        return _offline(experiment, variation, name, tags, config, server_url, flush_s, attached_ids)
    options = {"server_url": server_url, "api_key": api_key}
    if attached and attached_ids is not None:
        e, n, r = attached_ids
        if variation is not None and variation != n:
            raise ConfigError(f"under `assay run` this is variation {n}, not {variation}")
        settings = resolve_settings(options).settings
        transport = Transport(settings.server_url, settings.api_key or "", settings.timeout)
        run_config = _read_config_file(env.get("ASSAY_CONFIG_FILE"))
        return _online_run(
            "attached", settings, transport, e, n, r, run_config, heartbeat_interval, flush_s, part_bytes
        )
    if experiment is None or variation is None:
        raise ConfigError(
            "assay.init(): outside `assay run`, give experiment= and variation= (or set ASSAY_MODE=offline)"
        )
    settings = resolve_settings(options).settings
    transport = Transport(settings.server_url, settings.api_key or "", settings.timeout)
    variation_path = url_path("/experiments/{}/variations/{}", experiment, variation)
    if run is None:
        body: dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if tags is not None:
            body["tags"] = list(tags)
        if resume_from is not None:
            reference = _resume_reference(transport, experiment, variation, resume_from)
            if reference is not None:
                body["resume_from"] = reference
        created = transport.request("POST", f"{variation_path}/runs", json=body or None)
        run = int(created["r"])
    run_path = f"{variation_path}/runs/{run}"
    run_config = transport.request("GET", f"{run_path}/config")
    transport.request("POST", f"{run_path}/start", json={"environment": snapshot()})
    return _online_run(
        "standalone",
        settings,
        transport,
        experiment,
        variation,
        run,
        run_config,
        heartbeat_interval,
        flush_s,
        part_bytes,
    )


def _online_run(
    mode: str,
    settings: Settings,
    transport: Transport,
    e: str,
    n: int,
    r: int,
    run_config: dict[str, Any],
    heartbeat_s: float,
    flush_s: float,
    part_bytes: int,
) -> Run:
    """A Run talking to the service (attached or standalone), spooling to a file of its own process."""
    return Run(
        mode=mode,
        experiment_id=e,
        variation=n,
        r=r,
        config=dict(run_config.get("config_json", {})),
        run_config=run_config,
        transport=transport,
        api_key=settings.api_key or "",
        spool_path=spool_dir() / f"{e}-{n}-{r}-{os.getpid()}.db",
        spool_meta=_online_meta(settings.server_url, e, n, r),
        heartbeat_s=heartbeat_s,
        flush_timeout_s=flush_s,
        upload_workers=settings.max_upload_workers,
        part_bytes=part_bytes,
    )


def _resume_reference(
    transport: Transport, experiment: str, variation: int, given: ResumeFrom
) -> Optional[dict[str, int]]:
    """The body's ``resume_from`` for what ``init(resume_from=…)`` was given; None for "latest" when no run
    of the variation has a ready checkpoint."""
    if isinstance(given, Mapping):
        if set(given) - {"n", "r"} or "r" not in given:
            raise ConfigError(
                f"resume_from: a mapping is {{'r': R}} or {{'n': N, 'r': R}}, got {dict(given)!r}"
            )
        return {k: _run_number(v, f"resume_from[{k!r}]") for k, v in given.items()}
    if isinstance(given, str) and given.strip().lower() == LATEST:
        return _latest_checkpointed_run(transport, experiment, variation)
    if isinstance(given, str):
        match = _RUN_REFERENCE.match(given)
        if match is None:
            raise ConfigError(f"resume_from: a run number R, N.R, or {LATEST!r}; got {given!r}")
        n, r = match.groups()
        reference = {"r": _run_number(int(r), "resume_from")}
        if n is not None:
            reference["n"] = _run_number(int(n), "resume_from")
        return reference
    return {"r": _run_number(given, "resume_from")}


def _run_number(value: Any, what: str) -> int:
    if value.__class__ is not int or value < 1:
        raise ConfigError(f"{what} must be a run or variation number ≥ 1, got {value!r}")
    return int(value)


def _latest_checkpointed_run(
    transport: Transport, experiment: str, variation: int
) -> Optional[dict[str, int]]:
    """The run of the variation (archived ones left out, as the runs list does) that holds the variation's
    newest ready checkpoint, newest by when it became ready as the service's chain orders them; from the
    runs list and the experiment's checkpoint assets, since no endpoint answers it in one call."""
    runs = transport.get(url_path("/experiments/{}/variations/{}/runs", experiment, variation))["items"]
    number_of = {run["id"]: int(run["r"]) for run in runs}
    newest: Optional[tuple[str, str, int]] = None
    cursor: Optional[str] = None
    while True:
        page = transport.get(
            "/assets",
            params={
                "experiment_id": experiment,
                "kind": "checkpoint",
                "state": "ready",
                "limit": 200,
                "cursor": cursor,
            },
        )
        for asset in page["items"]:
            r = number_of.get(asset.get("run_id") or "")
            key = (asset.get("finalized_at") or "", asset["id"], r or 0)
            if r is not None and (newest is None or key > newest):
                newest = key
        cursor = page.get("next_cursor")
        if not cursor:
            break
    return None if newest is None else {"r": newest[2]}


def _offline(
    experiment: Optional[str],
    variation: Optional[int],
    name: Optional[str],
    tags: Optional[Sequence[str]],
    config: Optional[Mapping[str, Any]],
    server_url: Optional[str],
    flush_s: float,
    attached_ids: Optional[tuple[str, int, int]],
) -> Run:
    if experiment is None and attached_ids is not None:
        experiment, variation = attached_ids[0], attached_ids[1]
    if experiment is None or variation is None:
        raise ConfigError(
            "an offline run needs experiment= and variation= (the run is created by assay-sync)"
        )
    if config is None:
        config = _read_config_file(os.environ.get("ASSAY_CONFIG_FILE")).get("config_json", {})
    try:
        url: Optional[str] = inspect_settings({"server_url": server_url}).settings.server_url
    except ConfigError:
        url = server_url
    local_id = f"offline-{uuid.uuid4().hex}"
    meta = {
        "mode": "offline",
        "local_id": local_id,
        "server_url": url,
        "experiment_id": experiment,
        "n": variation,
        "r": None,
        "name": name,
        "tags": list(tags) if tags is not None else None,
        "config": dict(config),
        "environment": snapshot(),
        "created_at": time.time(),
        "keep": True,
    }
    return Run(
        mode="offline",
        experiment_id=experiment,
        variation=variation,
        r=None,
        config=dict(config),
        transport=None,
        api_key="",
        spool_path=spool_dir() / f"{local_id}.db",
        spool_meta=meta,
        heartbeat_s=DEFAULT_HEARTBEAT_S,
        flush_timeout_s=flush_s,
    )


def _online_meta(server_url: str, experiment: str, n: int, r: int) -> dict[str, Any]:
    return {"mode": "online", "server_url": server_url, "experiment_id": experiment, "n": n, "r": r}


def _attached_ids(env: Mapping[str, str]) -> Optional[tuple[str, int, int]]:
    e, n, r = (env.get(k, "").strip() for k in ("ASSAY_EXPERIMENT_ID", "ASSAY_VARIATION", "ASSAY_RUN"))
    if not (e and n and r):
        return None
    try:
        return e, int(n), int(r)
    except ValueError:
        raise ConfigError(f"ASSAY_VARIATION and ASSAY_RUN must be numbers, got {n!r} and {r!r}") from None


def _read_config_file(file: Optional[str]) -> dict[str, Any]:
    if not file:
        return {}
    try:
        with open(file, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        raise ConfigError(f"ASSAY_CONFIG_FILE {file}: {error}") from error
    return data if isinstance(data, dict) else {}
