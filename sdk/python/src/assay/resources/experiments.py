from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Optional

from .. import models as m
from .._paths import path
from ._base import Namespace, body


class Experiments(Namespace):
    """Create, read, edit and move experiments through their states (draft → committed → concluded,
    retracted)."""

    def create(
        self,
        name: str,
        *,
        description: Optional[str] = None,
        hypothesis: Optional[str] = None,
        parent_ids: Optional[Sequence[str]] = None,
        organization_id: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
    ) -> m.CreateExperimentResponse:
        """Creates a draft experiment. ``organization_id`` is an id or ``assay.PERSONAL``; defaults to the
        client's organization."""
        data = body(
            name=name,
            description=description,
            hypothesis=hypothesis,
            parent_ids=list(parent_ids) if parent_ids is not None else None,
            organization_id=self._org.for_call(organization_id),
            tags=list(tags) if tags is not None else None,
        )
        result: m.CreateExperimentResponse = self._t.post("/experiments", data)
        return result

    def list(
        self,
        *,
        state: Optional[str] = None,
        q: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        organization_id: Optional[str] = None,
    ) -> m.ListExperimentsResponse:
        """One page of experiments of a scope, newest first; pass ``next_cursor`` back as ``cursor``."""
        params = {
            "state": state,
            "q": q,
            "tag": ",".join(tags) if tags is not None else None,
            "limit": limit,
            "cursor": cursor,
            "organization_id": self._org.for_call(organization_id),
        }
        result: m.ListExperimentsResponse = self._t.get("/experiments", params=params)
        return result

    def iterate(
        self,
        *,
        state: Optional[str] = None,
        q: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        organization_id: Optional[str] = None,
    ) -> Iterator[m.ExperimentSummary]:
        """Every experiment of a scope, page by page."""
        cursor: Optional[str] = None
        while True:
            page = self.list(
                state=state, q=q, tags=tags, limit=limit, cursor=cursor, organization_id=organization_id
            )
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def get(self, experiment_id: str) -> m.GetExperimentResponse:
        """The experiment detail: variations, run counts by state, parents and children."""
        result: m.GetExperimentResponse = self._t.get(path("/experiments/{}", experiment_id))
        return result

    def update(
        self,
        experiment_id: str,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        hypothesis: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
    ) -> m.UpdateExperimentResponse:
        """Edits a draft; ``tags`` alone may change in any state."""
        data = body(
            name=name,
            description=description,
            hypothesis=hypothesis,
            tags=list(tags) if tags is not None else None,
        )
        result: m.UpdateExperimentResponse = self._t.request(
            "PATCH", path("/experiments/{}", experiment_id), json=data
        )
        return result

    def delete(self, experiment_id: str) -> None:
        """Deletes a draft with its variations and runs; ConflictError for any other state."""
        self._t.request("DELETE", path("/experiments/{}", experiment_id))

    def commit(self, experiment_id: str) -> m.CommitExperimentResponse:
        """draft → committed: variations freeze, runs become possible."""
        result: m.CommitExperimentResponse = self._t.post(path("/experiments/{}/commit", experiment_id))
        return result

    def conclude(self, experiment_id: str) -> m.ConcludeExperimentResponse:
        """committed → concluded: no new runs."""
        result: m.ConcludeExperimentResponse = self._t.post(path("/experiments/{}/conclude", experiment_id))
        return result

    def retract(self, experiment_id: str, reason: str) -> m.RetractExperimentResponse:
        """committed | concluded → retracted, with the reason."""
        result: m.RetractExperimentResponse = self._t.post(
            path("/experiments/{}/retract", experiment_id), {"reason": reason}
        )
        return result

    def lineage(
        self, experiment_id: str, *, direction: Optional[str] = None, depth: Optional[int] = None
    ) -> m.GetExperimentLineageResponse:
        """Walks ancestors and/or descendants to a depth."""
        result: m.GetExperimentLineageResponse = self._t.get(
            path("/experiments/{}/lineage", experiment_id), params={"direction": direction, "depth": depth}
        )
        return result

    def metrics(self, experiment_id: str, keys: Sequence[str]) -> m.GetExperimentMetricsResponse:
        """The given metric keys' figures (last, min, max, count) in every run that logged any of them."""
        result: m.GetExperimentMetricsResponse = self._t.get(
            path("/experiments/{}/metrics", experiment_id), params={"keys": ",".join(keys)}
        )
        return result

    def metric_keys(
        self, experiment_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> m.ListExperimentMetricKeysResponse:
        """One page of the metric keys any run of the experiment logged, each with how many runs did."""
        result: m.ListExperimentMetricKeysResponse = self._t.get(
            path("/experiments/{}/metric-keys", experiment_id), params={"limit": limit, "cursor": cursor}
        )
        return result

    def metric_series(
        self,
        experiment_id: str,
        key: str,
        *,
        max_points: Optional[int] = None,
        min_step: Optional[int] = None,
        max_step: Optional[int] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> m.GetExperimentMetricSeriesResponse:
        """One key's curve in each run that logged it, a page of runs, each downsampled on the server."""
        params = {
            "max_points": max_points,
            "min_step": min_step,
            "max_step": max_step,
            "limit": limit,
            "cursor": cursor,
        }
        result: m.GetExperimentMetricSeriesResponse = self._t.get(
            path("/experiments/{}/metrics/{}", experiment_id, key), params=params
        )
        return result
