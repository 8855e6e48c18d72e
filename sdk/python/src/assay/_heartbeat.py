"""What keeps a standalone run alive and hears a cancel: a heartbeat thread (``POST …/heartbeat`` every
interval) and a control long-poll thread (``GET …/control?wait_s=25``, as ``assay run`` keeps one open, so a
cancel arrives within a round trip). Either one, hearing ``cancel_requested`` or that the run ended elsewhere,
calls ``on_stop`` once. Attached runs have neither: ``assay run`` does this and sends SIGTERM instead."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Optional

from ._errors import APIConnectionError, ConflictError, ServerError

log = logging.getLogger("assay")

Request = Callable[..., Any]
OnStop = Callable[[Optional[str]], None]
"""Called with the cancel reason ("cancelled", "stopped_early"), or "ended" when the run ended elsewhere."""

WAIT_S = 25


class Liveness:
    def __init__(self, request: Request, run_path: str, interval_s: float, on_stop: OnStop) -> None:
        self._request = request
        self._path = run_path
        self._interval_s = interval_s
        self._on_stop = on_stop
        self._stopped = threading.Event()
        self._fired = threading.Lock()
        self._done = False
        self._threads = [
            threading.Thread(target=self._beat_loop, name="assay-heartbeat", daemon=True),
            threading.Thread(target=self._poll_loop, name="assay-control", daemon=True),
        ]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def stop(self, timeout: float = 10.0) -> None:
        """No further beats; the poll in flight is abandoned (its thread is a daemon), and so is a beat still
        in flight after ``timeout`` (an answer after this changes nothing: ``_fire`` checks ``_stopped``)."""
        self._stopped.set()
        self._threads[0].join(timeout=timeout)

    def _fire(self, reason: Optional[str]) -> None:
        with self._fired:
            if self._done or self._stopped.is_set():
                return
            self._done = True
        self._on_stop(reason)

    def _answer(self, answer: Any) -> bool:
        if not isinstance(answer, dict):
            return False
        if answer.get("cancel_requested"):
            self._fire(answer.get("cancel_reason") or "cancelled")
            return True
        if answer.get("state") not in (None, "running"):
            self._fire("ended")
            return True
        return False

    def _beat_loop(self) -> None:
        while not self._stopped.wait(self._interval_s):
            try:
                if self._answer(self._request("POST", f"{self._path}/heartbeat", timeout=30)):
                    return
            except ConflictError:  # heartbeats apply to running runs only: it ended under us
                self._fire("ended")
                return
            except Exception as error:  # the next beat tries again
                log.warning("assay: heartbeat failed (the next one tries again): %s", error)

    def _poll_loop(self) -> None:
        delay = 0.5
        while not self._stopped.is_set():
            try:
                answer = self._request(
                    "GET", f"{self._path}/control", params={"wait_s": WAIT_S}, timeout=WAIT_S + 15
                )
                if self._answer(answer):
                    return
                delay = 0.5
            except (APIConnectionError, ServerError):
                if self._stopped.wait(delay):
                    return
                delay = min(delay * 2, 5.0)
            except Exception as error:  # refused: the heartbeat still hears cancels
                log.warning("assay: control poll refused (cancels arrive with the heartbeat): %s", error)
                return
