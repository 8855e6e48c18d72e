"""assay._retry: the transient-failure retry the run's metric sender uses, as the TypeScript metric buffer."""

from __future__ import annotations

from typing import Callable

import pytest

from assay import APIConnectionError, ConflictError, ServerError
from assay._retry import retry_transient


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def failing(errors: list[Exception], result: str = "ok") -> tuple[list[int], Callable[[], str]]:
    calls = [0]

    def call() -> str:
        calls[0] += 1
        if errors:
            raise errors.pop(0)
        return result

    return calls, call


def test_transient_failures_are_retried_with_doubling_backoff() -> None:
    t = FakeTime()
    errors: list[Exception] = [
        APIConnectionError("down"),
        ServerError(503, "x", "busy"),
        ServerError(502, "x", "bad"),
    ]
    calls, call = failing(errors)
    assert retry_transient(call, 60, sleep=t.sleep, clock=t.clock) == "ok"
    assert calls[0] == 4
    assert t.sleeps == [0.5, 1.0, 2.0]


def test_a_4xx_is_raised_at_once() -> None:
    t = FakeTime()
    calls, call = failing([ConflictError(409, "run_ended", "the run ended")])
    with pytest.raises(ConflictError):
        retry_transient(call, 60, sleep=t.sleep, clock=t.clock)
    assert calls[0] == 1 and t.sleeps == []


def test_retrying_stops_when_the_next_wait_would_pass_the_deadline() -> None:
    t = FakeTime()
    calls, call = failing([APIConnectionError("down")] * 20)
    with pytest.raises(APIConnectionError):
        retry_transient(call, 30, sleep=t.sleep, clock=t.clock)
    # 0.5 + 1 + 2 + 4 + 8 + 10 = 25.5 s waited; another 10 s would pass 30 s.
    assert t.sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0]
    assert calls[0] == 7
