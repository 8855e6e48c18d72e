from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Optional

from .. import models as m
from .._paths import path
from ._base import Namespace, body


class ApiKeys(Namespace):
    """Mint restricted keys, list them, revoke them."""

    def create(
        self,
        description: str,
        scopes: Sequence[str],
        *,
        kind: Optional[str] = None,
        expires_in_days: Optional[int] = None,
        run: Optional[Mapping[str, object]] = None,
    ) -> m.CreateApiKeyResponse:
        """Mints a key holding at most the caller's scopes; a worker key is bound to one run
        (``run={"experiment_id": …, "n": 1, "r": 1}``). The full key is in the answer, once."""
        data = body(
            description=description,
            scopes=list(scopes),
            kind=kind,
            expires_in_days=expires_in_days,
            run=dict(run) if run is not None else None,
        )
        result: m.CreateApiKeyResponse = self._t.post("/api-keys", data)
        return result

    def list(self) -> builtins.list[m.ApiKey]:
        page: m.ListApiKeysResponse = self._t.get("/api-keys")
        return page["items"]

    def revoke(self, key_id: str) -> m.ApiKey:
        """Revokes at once; the key answers 401 from then on."""
        result: m.ApiKey = self._t.request("DELETE", path("/api-keys/{}", key_id))
        return result
