"""Retrying a call whose repeat is harmless, as the TypeScript run handle retries a metric batch
(src/client/handles/metric-buffer.ts): only transient failures (no answer, or a 5xx) are retried, with
backoff from 0.5 s doubling to 10 s, for at most ``retry_for`` seconds; any other error is raised at once."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

from ._errors import APIConnectionError, ServerError

__all__ = ["FIRST_RETRY_S", "MAX_RETRY_S", "is_transient", "retry_transient"]

FIRST_RETRY_S = 0.5
MAX_RETRY_S = 10.0

_T = TypeVar("_T")


def is_transient(error: BaseException) -> bool:
    """Worth sending again: the service did not answer, or answered 5xx."""
    return isinstance(error, (APIConnectionError, ServerError))


def retry_transient(
    call: Callable[[], _T],
    retry_for: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> _T:
    """Calls ``call`` until it succeeds, raises a non-transient error, or the next wait would pass
    ``retry_for`` seconds from the first attempt (then the last error is raised)."""
    deadline = clock() + retry_for
    delay = FIRST_RETRY_S
    while True:
        try:
            return call()
        except Exception as error:
            if not is_transient(error) or clock() + delay > deadline:
                raise
        sleep(delay)
        delay = min(delay * 2, MAX_RETRY_S)
