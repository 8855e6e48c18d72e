from __future__ import annotations

import builtins
from typing import Optional

from .. import models as m
from .._paths import path
from ._base import Namespace, body


class Organizations(Namespace):
    """Create an organization, read it, list and add its members."""

    def create(self, slug: str, name: str) -> m.Organization:
        """The caller becomes its owner. A taken slug raises ConflictError (409)."""
        result: m.Organization = self._t.post("/organizations", {"slug": slug, "name": name})
        return result

    def get(self, organization_id: str) -> m.Organization:
        result: m.Organization = self._t.get(path("/organizations/{}", organization_id))
        return result

    def members(self, organization_id: str) -> builtins.list[m.ListOrganizationMembersResponseItemsItem]:
        page: m.ListOrganizationMembersResponse = self._t.get(
            path("/organizations/{}/members", organization_id)
        )
        return page["items"]

    def add_member(
        self,
        organization_id: str,
        *,
        user_id: Optional[str] = None,
        email: Optional[str] = None,
        role: Optional[str] = None,
    ) -> m.AddOrganizationMemberResponse:
        """Adds an existing user by id or email (owners only); a member already in raises ConflictError."""
        result: m.AddOrganizationMemberResponse = self._t.post(
            path("/organizations/{}/members", organization_id), body(user_id=user_id, email=email, role=role)
        )
        return result
