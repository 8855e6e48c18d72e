"""The metric sender behind ``Run.log``: the caller appends one tuple to a deque and returns; a background
thread turns the calls into points and sends them in batches of up to 1,000 (the service's limit per
request), a few requests in flight. When the service cannot be reached (no answer, a 5xx, 408, 429) the
points go to the run's SQLite spool (``_spool.py``) and are sent from there once it answers again, never
dropped; a batch the service refuses (another 4xx) is dropped and reported by ``Run.flush`` as a
MetricsError. The service stores a point once per (run, key, step), so a batch sent twice stores nothing
twice.

Memory is bounded: at most ``max_points`` points wait in memory (``ASSAY_MAX_BUFFERED_POINTS``). Past half of
it the sender thread moves the waiting points to the spool; a loop that outruns even that and reaches the
bound writes them to the spool itself, in ``log`` (back-pressure)."""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import httpx

from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    ConfigError,
    MetricsError,
    ServerError,
    error_from_response,
)
from ._spool import Point, Spool, WireValue

log = logging.getLogger("assay")

MAX_POINTS_PER_REQUEST = 1000
"""The service's limit per ``POST …/metrics`` (MAX_METRIC_POINTS_PER_REQUEST in src/contract)."""

MAX_BUFFERED_VARIABLE = "ASSAY_MAX_BUFFERED_POINTS"
DEFAULT_MAX_BUFFERED_POINTS = 100_000
"""Points that may wait in memory (about 100 bytes each): a few seconds of a fast loop's logging."""
FIRST_RETRY_S = 0.5
MAX_RETRY_S = 10.0
"""The wait before trying again an unreachable service, doubling from the first: as the TypeScript client."""
TRANSIENT_STATUSES = (408, 429)
"""Answers that say "not now" rather than "never" (besides 5xx): a request timeout, rate limiting."""


def max_buffered_points(env: Optional[Mapping[str, str]] = None) -> int:
    """``$ASSAY_MAX_BUFFERED_POINTS``, at least one batch (1,000); else the default."""
    raw = (os.environ if env is None else env).get(MAX_BUFFERED_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_BUFFERED_POINTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < MAX_POINTS_PER_REQUEST:
        raise ConfigError(
            f"{MAX_BUFFERED_VARIABLE} must be a whole number ≥ {MAX_POINTS_PER_REQUEST}, got {raw!r}"
        )
    return value


Entry = tuple[int, float, Mapping[str, Any]]
"""One ``log`` call as the caller left it: (step, time.time(), values)."""

SendBatch = Callable[[list[Point]], None]
OpenSpool = Callable[[], Spool]


def wire_value(value: Any) -> WireValue:
    """A number as it travels: JSON has no NaN or ±Infinity, so those go as strings."""
    number = float(value)
    if math.isfinite(number):
        return number
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


_KEY_JSON: dict[str, str] = {}


def encode_batch(batch: list[Point]) -> bytes:
    """The body of ``POST …/metrics``, written directly: a dict per point and json.dumps cost about three
    times as much CPU, taken from the training loop's process."""
    key_json = _KEY_JSON
    parts = []
    for key, step, value, ts in batch:
        k = key_json.get(key)
        if k is None:
            k = key_json[key] = json.dumps(key)
        v = repr(value) if value.__class__ is float else f'"{value}"'
        if ts is None:
            parts.append(f'{{"key":{k},"step":{step},"value":{v}}}')
        else:
            parts.append(f'{{"key":{k},"step":{step},"value":{v},"timestamp":"{ts}"}}')
    return ('{"metrics":[' + ",".join(parts) + "]}").encode()


class MetricsPoster:
    """Sends one batch: a connection pool of its own (the sender's threads, apart from the script's calls),
    the same bearer key and the same error classes as the transport."""

    def __init__(self, server_url: str, api_key: str, path: str, timeout_s: float) -> None:
        self._url = server_url.rstrip("/") + path
        self._headers = {
            "authorization": f"Bearer {api_key}",
            "content-type": "application/json",
            "accept": "application/json",
        }
        self._timeout_s = timeout_s
        self._http = httpx.Client(timeout=timeout_s, limits=httpx.Limits(max_connections=8))

    def __call__(self, batch: list[Point]) -> None:
        try:
            response = self._http.post(self._url, content=encode_batch(batch), headers=self._headers)
        except httpx.TimeoutException as error:
            raise APITimeoutError(f"POST metrics: no answer within {self._timeout_s} s") from error
        except httpx.TransportError as error:
            raise APIConnectionError(
                f"POST metrics: cannot reach the service ({error or type(error).__name__})"
            ) from error
        if not response.is_success:
            raise error_from_response(response.status_code, response.text, response.headers)

    def close(self) -> None:
        self._http.close()


def is_transient(error: BaseException) -> bool:
    """Worth sending again later: no answer, a 5xx, a 408 or a 429."""
    if isinstance(error, (APIConnectionError, ServerError)):
        return True
    return isinstance(error, APIError) and error.status_code in TRANSIENT_STATUSES


class MetricSender:
    """Drains the caller's deque on a background thread. ``send`` None (offline): every point goes to the
    spool.

    The caller's side (``Run.log``) appends to ``buffer`` and adds the values' count to ``appended``, and
    calls ``pressure()`` when ``waiting`` passes ``wake_at``. Everything else runs here."""

    def __init__(
        self,
        send: Optional[SendBatch],
        open_spool: OpenSpool,
        *,
        interval_s: float = 1.0,
        max_in_flight: int = 2,
        max_points: int = DEFAULT_MAX_BUFFERED_POINTS,
    ) -> None:
        self.buffer: deque[Entry] = deque()
        self.appended = 0
        """Points appended by the caller (written by the caller's thread only)."""
        self._out = (
            0  # points that left the waiting area: dispatched, spooled, dropped or merged (under _lock)
        )
        self.max_points = max_points
        self.wake_at = max(max_points // 4, 1)
        self._spill_at = max_points // 2
        self._send = send
        self._open_spool = open_spool
        self._spool: Optional[Spool] = None
        self._interval_s = interval_s
        self._wake = threading.Event()
        self._stopping = False
        self._closed = False
        self._pending: list[Point] = []
        self._lock = threading.Lock()
        # One drainer at a time (the sender thread, or the caller under back-pressure), so the points of a
        # key and step keep their order on their way to the spool.
        self._drain_lock = threading.Lock()
        self._in_flight = 0
        self._fresh: dict[int, list[Point]] = {}  # fresh batches in flight, by id: not in the spool
        self._fresh_spooled: set[int] = set()
        self._next_batch_id = 0
        self._slots = threading.Semaphore(max_in_flight)
        # Plain daemon threads, not a ThreadPoolExecutor: an executor takes no work once the interpreter
        # begins to shut down, and the flush at exit (atexit) runs after that.
        self._jobs: queue.SimpleQueue[Optional[tuple[Callable[..., None], tuple[Any, ...]]]] = (
            queue.SimpleQueue()
        )
        self._workers = [
            threading.Thread(target=self._work, name=f"assay-metrics-send-{i}", daemon=True)
            for i in range(max_in_flight)
        ]
        for worker in self._workers:
            worker.start()
        self._reachable = send is not None
        self._probing = False
        self._next_probe = 0.0
        self._backoff_s = FIRST_RETRY_S
        self._spool_cursor = 0
        self._spool_batches_in_flight = 0
        self._idle = threading.Event()
        self._warned: set[str] = set()
        self._refused: Optional[MetricsError] = None
        self.dropped = 0
        self.stored = 0
        self._thread = threading.Thread(target=self._loop, name="assay-metrics", daemon=True)
        self._thread.start()

    # --- the caller's side ---
    @property
    def waiting(self) -> int:
        """Points in memory neither sent (nor in flight) nor spooled."""
        return self.appended - self._out

    def wake(self) -> None:
        self._wake.set()

    def pressure(self) -> None:
        """From ``log``, past a quarter of the bound: wake the sender; at the bound, spill here."""
        self._wake.set()
        if self.appended - self._out > self.max_points:
            with self._drain_lock:
                # The sender thread may have made room while this call waited for the lock.
                if self.appended - self._out > self.max_points:
                    self._take_buffer()
                    self._spill_pending()

    def take_refused(self) -> Optional[MetricsError]:
        """The points the service refused since the last call, as one error (None: none were)."""
        with self._lock:
            error, self._refused = self._refused, None
        return error

    def flush(self, timeout_s: float) -> bool:
        """Waits until every point logged so far is stored (True), or until the deadline (False: every point
        not yet stored is then in the spool, for a later flush or ``assay-sync``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._idle.clear()
            self._wake.set()
            if self._settled():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                self._spill_all()
                return False
            self._idle.wait(min(left, 0.05))

    def close(self, timeout_s: float) -> bool:
        """Flushes within ``timeout_s``, then stops; what is not stored by then is in the spool."""
        deadline = time.monotonic() + timeout_s
        done = self.flush(timeout_s)
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout=max(deadline - time.monotonic(), 0.5))
        for _ in self._workers:
            self._jobs.put(None)
        if not done:
            self._spill_all()
        with self._lock:
            self._closed = True  # a request still in flight changes nothing from now on
        if self._spool is not None:
            if done and self._spool.count() == 0 and not self._spool.get_meta().get("keep"):
                self._spool.remove()
            else:
                self._spool.close()
            self._spool = None
        return done

    def spool(self) -> Spool:
        with self._lock:
            if self._spool is None:
                self._spool = self._open_spool()
            return self._spool

    @property
    def has_spool(self) -> bool:
        return self._spool is not None

    def _settled(self) -> bool:
        with self._lock:
            busy = bool(self.buffer) or bool(self._pending) or self._in_flight > 0
        if busy:
            return False
        # Offline, the spool is where points belong: they are settled once written there.
        return self._send is None or self._spool is None or self._spool.count() == 0

    # --- the background threads ---
    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job[0](*job[1])

    def _loop(self) -> None:
        while not self._stopping:
            self._wake.wait(self._interval_s)
            self._wake.clear()
            try:
                with self._drain_lock:
                    self._step()
            except Exception:  # never let the sender die: the points stay where they are
                log.exception("assay: the metric sender failed; retrying")
                time.sleep(self._interval_s)
            if self._settled():
                self._idle.set()

    def _step(self) -> None:
        self._take_buffer()
        if not self._reachable:
            self._spill_pending()
            due = self._send is not None and not self._probing and time.monotonic() >= self._next_probe
            if due and self._slots.acquire(blocking=False):
                self._probing = True
                with self._lock:
                    self._in_flight += 1
                self._jobs.put((self._probe, ()))
            return
        while True:
            with self._lock:
                if not self._pending:
                    break
            if not self._slots.acquire(blocking=False):
                break
            with self._lock:
                batch = self._pending[:MAX_POINTS_PER_REQUEST]
                del self._pending[:MAX_POINTS_PER_REQUEST]
                self._out += len(batch)
                self._in_flight += 1
                batch_id = self._next_batch_id
                self._next_batch_id += 1
                self._fresh[batch_id] = batch
            self._jobs.put((self._send_fresh, (batch_id, batch)))
        with self._lock:
            too_many = len(self._pending) > self._spill_at
        if too_many:
            self._spill_pending()
        if self._spool is not None and self._reachable:
            self._send_from_spool()

    def _take_buffer(self) -> None:
        """Moves what the caller appended into ``_pending`` as points (holding ``_drain_lock``)."""
        points, consumed = self._drain()
        with self._lock:
            self._pending.extend(points)
            # Values that became no point (not a number, or a repeat replaced within the drain).
            self._out += consumed - len(points)

    def _drain(self) -> tuple[list[Point], int]:
        points: list[Point] = []
        consumed = 0
        latest: dict[tuple[str, int], int] = {}
        buffer = self.buffer
        top = -1  # the highest step of this drain: a call at or below it may repeat a (key, step)
        while buffer:
            step, ts, values = buffer.popleft()
            consumed += len(values)
            stamp = iso(ts)
            repeat = step <= top
            if not repeat:
                top = step
            for key, value in values.items():
                # x - x is 0.0 for a finite float only (NaN and ±Infinity give NaN): the common case, cheaply.
                if value.__class__ is float and value - value == 0.0:
                    wire: WireValue = value
                else:
                    try:
                        wire = wire_value(value)
                    except (TypeError, ValueError):
                        self._warn_once(key, f"assay: metric {key!r}: {value!r} is not a number; dropped")
                        self.dropped += 1
                        continue
                if repeat:
                    # The last of repeats wins, as on the service: one point per (key, step) of a drain.
                    where = latest.get((key, step))
                    if where is not None:
                        points[where] = (key, step, wire, stamp)
                        continue
                    for i in range(len(points) - 1, -1, -1):
                        if points[i][0] == key and points[i][1] == step:
                            points[i] = (key, step, wire, stamp)
                            latest[(key, step)] = i
                            break
                    else:
                        latest[(key, step)] = len(points)
                        points.append((key, step, wire, stamp))
                    continue
                points.append((key, step, wire, stamp))
        return points, consumed

    def _send_fresh(self, batch_id: int, batch: list[Point]) -> None:
        try:
            assert self._send is not None
            self._send(batch)
            self.stored += len(batch)
        except BaseException as error:
            with self._lock:
                spooled = batch_id in self._fresh_spooled
            self._failed(batch, error, spooled=spooled)
        finally:
            with self._lock:
                self._fresh.pop(batch_id, None)
                self._fresh_spooled.discard(batch_id)
                self._in_flight -= 1
            self._slots.release()
            self._wake.set()

    def _send_from_spool(self) -> None:
        spool = self.spool()
        while self._reachable and self._slots.acquire(blocking=False):
            rowids, batch = spool.take(self._spool_cursor, MAX_POINTS_PER_REQUEST)
            if not batch:
                self._slots.release()
                if self._spool_batches_in_flight == 0:
                    self._spool_cursor = 0
                return
            self._spool_cursor = rowids[-1]
            with self._lock:
                self._in_flight += 1
                self._spool_batches_in_flight += 1
            self._jobs.put((self._send_spooled, (rowids, batch)))

    def _send_spooled(self, rowids: list[int], batch: list[Point]) -> None:
        try:
            assert self._send is not None
            self._send(batch)
            self.stored += len(batch)
            with self._lock:
                closed = self._closed
            if not closed:
                self.spool().delete(rowids)
        except BaseException as error:
            self._failed(batch, error, spooled=True, rowids=rowids)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._spool_batches_in_flight -= 1
                if self._spool_batches_in_flight == 0 and not self._reachable:
                    self._spool_cursor = 0
            self._slots.release()
            self._wake.set()

    def _probe(self) -> None:
        """One spooled batch, on a worker (the sender thread goes on moving points out of memory meanwhile):
        it answers whether the service is back."""
        try:
            with self._lock:
                if self._closed:
                    return
            spool = self.spool()
            rowids, batch = spool.take(0, MAX_POINTS_PER_REQUEST)
            if not batch:
                self._back()
                return
            try:
                assert self._send is not None
                self._send(batch)
            except BaseException as error:
                self._failed(batch, error, spooled=True, rowids=rowids)
                return
            self.stored += len(batch)
            with self._lock:
                if self._closed:
                    return
            spool.delete(rowids)
            log.warning("assay: the service answers again; sending the spooled metric points")
            self._back()
        finally:
            with self._lock:
                self._in_flight -= 1
            self._probing = False
            self._slots.release()
            self._wake.set()

    def _back(self) -> None:
        self._reachable = True
        self._backoff_s = FIRST_RETRY_S
        self._spool_cursor = 0

    def _failed(
        self, batch: list[Point], error: BaseException, *, spooled: bool, rowids: Optional[list[int]] = None
    ) -> None:
        with self._lock:
            if self._closed:  # close() spooled this batch already
                return
        if isinstance(error, Exception) and is_transient(error):
            if not spooled:
                self.spool().add(batch)
            if self._reachable:
                log.warning("assay: metrics not sent (%s); keeping them in %s", error, self.spool().path)
            self._reachable = False
            self._next_probe = time.monotonic() + self._backoff_s
            self._backoff_s = min(self._backoff_s * 2, MAX_RETRY_S)
            return
        # Refused (any other 4xx): sending it again would be refused again.
        self.dropped += len(batch)
        if spooled and rowids is not None:
            self.spool().delete(rowids)
        with self._lock:
            earlier = self._refused.dropped if self._refused is not None else 0
            self._refused = MetricsError(earlier + len(batch), error)
        self._warn_once(
            f"refused:{type(error).__name__}", f"assay: {len(batch)} metric points refused: {error}"
        )

    def _spill_pending(self) -> None:
        """Moves the waiting points to the spool (holding ``_drain_lock``)."""
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self.spool().add(pending)
            with self._lock:
                self._out += len(pending)

    def _spill_all(self) -> None:
        """At a flush's deadline: every point in memory goes to the spool, the batches in flight too (a copy:
        one stored meanwhile is sent again later, which stores nothing twice)."""
        with self._drain_lock:
            self._take_buffer()
            self._spill_pending()
        with self._lock:
            unspooled = [(i, b) for i, b in self._fresh.items() if i not in self._fresh_spooled]
            self._fresh_spooled.update(i for i, _ in unspooled)
        for _, batch in unspooled:
            self.spool().add(batch)

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message)
