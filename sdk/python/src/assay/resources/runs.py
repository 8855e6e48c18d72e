from __future__ import annotations

import builtins
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Optional, Union

from .. import models as m
from .._paths import path
from ._base import NOT_GIVEN, Namespace, body

MetricValue = Union[float, int, str]


def encode_metric_value(value: float) -> MetricValue:
    """A metric value's wire form: a number, or "NaN", "Infinity", "-Infinity" (JSON has no such numbers)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def decode_metric_value(value: MetricValue) -> float:
    """The number a wire value stands for."""
    return float(value)  # float("NaN"), float("Infinity") and float("-Infinity") read the wire strings


class Runs(Namespace):
    """Create and read runs. The lifecycle moves (start, heartbeat, succeed, fail) belong to the run handle
    (``assay.init()``)."""

    def _run(self, experiment_id: str, n: int, r: int, tail: str = "") -> str:
        return path("/experiments/{}/variations/{}/runs/{}", experiment_id, n, r) + tail

    def create(
        self,
        experiment_id: str,
        n: int,
        *,
        name: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        notes: Optional[str] = None,
        resume_from: Optional[Mapping[str, int]] = None,
    ) -> m.Run:
        """A new pending run of a variation of a committed experiment. ``resume_from`` is
        ``{"r": 3}`` or ``{"n": 2, "r": 3}``: the run whose checkpoints it resumes from."""
        data = body(
            name=name,
            tags=list(tags) if tags is not None else None,
            notes=notes,
            resume_from=dict(resume_from) if resume_from is not None else None,
        )
        result: m.Run = self._t.post(
            path("/experiments/{}/variations/{}/runs", experiment_id, n), data or None
        )
        return result

    def get(self, experiment_id: str, n: int, r: int) -> m.Run:
        result: m.Run = self._t.get(self._run(experiment_id, n, r))
        return result

    def list(
        self,
        experiment_id: str,
        n: int,
        *,
        state: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        archived: Optional[bool] = None,
    ) -> builtins.list[m.Run]:
        params = {"state": state, "tag": ",".join(tags) if tags is not None else None, "archived": archived}
        page: m.ListRunsResponse = self._t.get(
            path("/experiments/{}/variations/{}/runs", experiment_id, n), params=params
        )
        return page["items"]

    def list_for_experiment(
        self,
        experiment_id: str,
        *,
        state: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        archived: Optional[bool] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> m.ListExperimentRunsResponse:
        """One page of every variation's runs, newest first; pass ``next_cursor`` back as ``cursor``."""
        params = {
            "state": state,
            "tag": ",".join(tags) if tags is not None else None,
            "archived": archived,
            "limit": limit,
            "cursor": cursor,
        }
        page: m.ListExperimentRunsResponse = self._t.get(
            path("/experiments/{}/runs", experiment_id), params=params
        )
        return page

    def update(
        self,
        experiment_id: str,
        n: int,
        r: int,
        *,
        name: Any = NOT_GIVEN,
        tags: Optional[Sequence[str]] = None,
        notes: Optional[str] = None,
        archived: Optional[bool] = None,
    ) -> m.Run:
        """Relabels a run (``name=None`` clears its name) or archives it; a worker key may not."""
        data = body(tags=list(tags) if tags is not None else None, notes=notes, archived=archived)
        if name is not NOT_GIVEN:
            data["name"] = name
        result: m.Run = self._t.request("PATCH", self._run(experiment_id, n, r), json=data)
        return result

    def config(self, experiment_id: str, n: int, r: int) -> m.GetRunConfigResponse:
        """The run's variation config; the server records that the runner read it (start requires that)."""
        result: m.GetRunConfigResponse = self._t.get(self._run(experiment_id, n, r, "/config"))
        return result

    def control(self, experiment_id: str, n: int, r: int, *, wait_s: float = 25) -> m.RunControlResponse:
        """The runner's long-poll: answers at once when the run was asked to stop or is no longer running,
        else when either happens, else after ``wait_s`` seconds (0-60)."""
        result: m.RunControlResponse = self._t.get(
            self._run(experiment_id, n, r, "/control"),
            params={"wait_s": wait_s},
            timeout=wait_s + self._t.timeout,
        )
        return result

    def cancel(self, experiment_id: str, n: int, r: int) -> m.Run:
        """A pending run fails ``abandoned`` at once; a running one is asked to stop."""
        result: m.Run = self._t.post(self._run(experiment_id, n, r, "/cancel"))
        return result

    def provision(
        self, experiment_id: str, n: int, r: int, *, priority: Optional[int] = None
    ) -> m.ProvisionRunResponse:
        """Makes the run a managed run; ServerError 503 when the server has no orchestrator."""
        data = None if priority is None else {"priority": priority}
        result: m.ProvisionRunResponse = self._t.post(self._run(experiment_id, n, r, "/provision"), data)
        return result

    def checkpoint(self, experiment_id: str, n: int, r: int) -> m.GetRunCheckpointResponse:
        """The newest ready checkpoint of the run's variation with download URLs; NotFoundError when none."""
        result: m.GetRunCheckpointResponse = self._t.get(self._run(experiment_id, n, r, "/checkpoint"))
        return result

    def log_metrics(
        self, experiment_id: str, n: int, r: int, points: Sequence[Mapping[str, Any]]
    ) -> m.LogRunMetricsResponse:
        """Stores one batch of points ``{"key", "step", "value"}`` as they are; NaN and ±Infinity are sent
        in their wire form. Repeating a batch overwrites the same (key, step) points, so a retry is safe."""
        wire = [
            {**p, "value": encode_metric_value(p["value"])} if isinstance(p.get("value"), float) else dict(p)
            for p in points
        ]
        result: m.LogRunMetricsResponse = self._t.post(
            self._run(experiment_id, n, r, "/metrics"), {"metrics": wire}
        )
        return result

    def metric_keys(
        self,
        experiment_id: str,
        n: int,
        r: int,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        contains: Optional[str] = None,
    ) -> m.ListRunMetricsResponse:
        """One page of the run's metric keys, each with its count, last point and extremes."""
        result: m.ListRunMetricsResponse = self._t.get(
            self._run(experiment_id, n, r, "/metrics"),
            params={"limit": limit, "cursor": cursor, "contains": contains},
        )
        return result

    def metrics(self, experiment_id: str, n: int, r: int) -> builtins.list[m.ListRunMetricsResponseItemsItem]:
        """Every metric key of the run with its count, last point and extremes (every page)."""
        items: builtins.list[m.ListRunMetricsResponseItemsItem] = []
        cursor: Optional[str] = None
        while True:
            page = self.metric_keys(experiment_id, n, r, cursor=cursor)
            items.extend(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                return items

    def metric_series(
        self,
        experiment_id: str,
        n: int,
        r: int,
        key: str,
        *,
        max_points: Optional[int] = None,
        min_step: Optional[int] = None,
        max_step: Optional[int] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> m.GetRunMetricSeriesResponse:
        """One key's series in step order: downsampled with ``max_points``, else one page of every point."""
        params = {
            "max_points": max_points,
            "min_step": min_step,
            "max_step": max_step,
            "limit": limit,
            "cursor": cursor,
        }
        result: m.GetRunMetricSeriesResponse = self._t.get(
            path("/experiments/{}/variations/{}/runs/{}/metrics/{}", experiment_id, n, r, key), params=params
        )
        return result

    def iterate_metric_points(
        self,
        experiment_id: str,
        n: int,
        r: int,
        key: str,
        *,
        min_step: Optional[int] = None,
        max_step: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> Iterator[m.ListRunMetricsResponseItemsItemLast]:
        """Every point of one key (in a step range), page by page, in step order."""
        cursor: Optional[str] = None
        while True:
            page = self.metric_series(
                experiment_id, n, r, key, min_step=min_step, max_step=max_step, limit=limit, cursor=cursor
            )
            yield from page["points"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def logs(
        self,
        experiment_id: str,
        n: int,
        r: int,
        *,
        after: Optional[int] = None,
        limit: Optional[int] = None,
        stream: Optional[str] = None,
        wait_s: Optional[float] = None,
    ) -> m.GetRunLogsResponse:
        """A page of the run's console log: the lines after ``after``; with ``wait_s`` an empty answer waits
        for new lines (follow by passing ``next_after`` back until ``complete``)."""
        result: m.GetRunLogsResponse = self._t.get(
            self._run(experiment_id, n, r, "/logs"),
            params={"after": after, "limit": limit, "stream": stream, "wait_s": wait_s},
            timeout=(wait_s or 0) + self._t.timeout,
        )
        return result

    def append_logs(
        self, experiment_id: str, n: int, r: int, first_seq: int, lines: Sequence[Mapping[str, Any]]
    ) -> m.AppendRunLogsResponse:
        """Stores lines first_seq, first_seq + 1, … of the run's log; a resend stores nothing twice."""
        result: m.AppendRunLogsResponse = self._t.post(
            self._run(experiment_id, n, r, "/logs"),
            {"first_seq": first_seq, "lines": [dict(x) for x in lines]},
        )
        return result
