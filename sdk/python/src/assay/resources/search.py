from __future__ import annotations

from typing import Optional

from .. import models as m
from ._base import Namespace


class Search(Namespace):
    """Full-text search over research documents and papers; ``client.search("…")`` or
    ``client.search.query("…")``. A server without search raises ServerError (503)."""

    def query(
        self,
        q: str,
        *,
        kind: Optional[str] = None,
        limit: Optional[int] = None,
        organization_id: Optional[str] = None,
    ) -> m.SearchResponse:
        """Websearch syntax: words, "quoted phrases", -exclusions, or."""
        params = {
            "q": q,
            "kind": kind,
            "limit": limit,
            "organization_id": self._org.for_call(organization_id),
        }
        result: m.SearchResponse = self._t.get("/search", params=params)
        return result

    __call__ = query
