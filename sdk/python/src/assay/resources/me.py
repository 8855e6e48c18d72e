from __future__ import annotations

from typing import Optional

from .. import models as m
from ._base import Namespace


class Me(Namespace):
    """The caller: who the key belongs to, and the organizations they can act in."""

    def get(self) -> m.GetMeResponse:
        result: m.GetMeResponse = self._t.get("/v1/me")
        return result

    def scopes(self) -> m.GetMyScopesResponse:
        """The caller's personal scope and organization memberships (GET /v1/me/scopes)."""
        result: m.GetMyScopesResponse = self._t.get("/v1/me/scopes")
        return result

    def set_default_organization(self, organization_id: Optional[str]) -> m.SetDefaultOrganizationResponse:
        """Sets the server-side default organization (None: personal)."""
        result: m.SetDefaultOrganizationResponse = self._t.request(
            "PATCH", "/v1/me", json={"default_organization_id": organization_id}
        )
        return result
