from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Optional

from .. import models as m
from .._paths import path
from ._base import Namespace


class Sweeps(Namespace):
    """Sweeps that enumerate (grid, list), search (random, sobol, tpe) or repeat; needs a server with an
    orchestrator (ServerError 503 otherwise)."""

    def create(self, experiment_id: str, spec: Mapping[str, Any]) -> m.CreateSweepResponse:
        """Declares the sweep and starts its workflow. ``spec`` is the request body as the API names it,
        e.g. ``{"strategy": "grid", "base_yaml": "...", "grid": {"optimizer.lr": [0.1, 0.01]}}``; the
        strategy may be left out for a grid or a list."""
        data = {k: v for k, v in spec.items() if v is not None}
        if "strategy" not in data:
            data["strategy"] = "grid" if "grid" in data else "list"
        result: m.CreateSweepResponse = self._t.post(path("/experiments/{}/sweeps", experiment_id), data)
        return result

    def list(
        self, experiment_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> m.ListSweepsResponse:
        """One page of the experiment's sweeps, newest first."""
        result: m.ListSweepsResponse = self._t.get(
            path("/experiments/{}/sweeps", experiment_id), params={"limit": limit, "cursor": cursor}
        )
        return result

    def iterate(self, experiment_id: str, *, limit: Optional[int] = None) -> Iterator[m.SweepSummary]:
        cursor: Optional[str] = None
        while True:
            page = self.list(experiment_id, limit=limit, cursor=cursor)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def get(self, experiment_id: str, sweep_id: str) -> m.GetSweepResponse:
        result: m.GetSweepResponse = self._t.get(path("/experiments/{}/sweeps/{}", experiment_id, sweep_id))
        return result

    def cancel(self, experiment_id: str, sweep_id: str) -> m.CancelSweepResponse:
        """Cancels the sweep workflow, which cancels the runs it started and starts no more."""
        result: m.CancelSweepResponse = self._t.post(
            path("/experiments/{}/sweeps/{}/cancel", experiment_id, sweep_id)
        )
        return result
