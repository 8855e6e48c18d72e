from __future__ import annotations

import builtins
from typing import Optional

from .. import models as m
from .._paths import path
from ._base import Namespace, body


class Variations(Namespace):
    """The configs of an experiment, numbered n = 1, 2, …"""

    def create(self, experiment_id: str, config_yaml: str, *, name: Optional[str] = None) -> m.Variation:
        """Creates a variation from YAML (draft experiments only); ``accelerate:`` and ``launch:`` blocks
        are split out."""
        result: m.Variation = self._t.post(
            path("/experiments/{}/variations", experiment_id), body(config_yaml=config_yaml, name=name)
        )
        return result

    def list(self, experiment_id: str) -> builtins.list[m.Variation]:
        """All variations of an experiment, by n."""
        page: m.ListVariationsResponse = self._t.get(path("/experiments/{}/variations", experiment_id))
        return page["items"]

    def get(self, experiment_id: str, n: int) -> m.Variation:
        result: m.Variation = self._t.get(path("/experiments/{}/variations/{}", experiment_id, n))
        return result

    def update(
        self, experiment_id: str, n: int, *, config_yaml: Optional[str] = None, name: Optional[str] = None
    ) -> m.Variation:
        """Edits a variation of a draft experiment."""
        result: m.Variation = self._t.request(
            "PATCH",
            path("/experiments/{}/variations/{}", experiment_id, n),
            json=body(config_yaml=config_yaml, name=name),
        )
        return result
