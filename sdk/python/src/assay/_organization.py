"""The organization scope of calls that take one (SPEC section 4): the call's own choice (an id, or PERSONAL)
wins over the client's default; a default slug is resolved to its id through /v1/me/scopes on first use."""

from __future__ import annotations

import threading
from typing import Optional

from ._errors import ConfigError
from ._transport import Transport

__all__ = ["PERSONAL", "OrganizationDefault"]

#: Passed as organization_id on a call, forces personal scope (sent as ``organization_id: "personal"``).
PERSONAL = "personal"


class OrganizationDefault:
    def __init__(self, transport: Transport, org_id: Optional[str], slug: Optional[str]) -> None:
        self._transport = transport
        self._id = org_id
        self._slug = slug
        self._resolved: Optional[str] = None
        self._lock = threading.Lock()

    def for_call(self, choice: Optional[str]) -> Optional[str]:
        """The organization_id to send: the call's choice, else the default, else None (server default)."""
        if choice is not None:
            return choice
        if self._id is not None or self._slug is None:
            return self._id
        with self._lock:
            # A failed lookup (network, auth) raises and is tried again on the next call.
            if self._resolved is None:
                self._resolved = self._resolve_slug(self._slug)
            return self._resolved

    def _resolve_slug(self, slug: str) -> str:
        scopes = self._transport.get("/v1/me/scopes")
        organizations = scopes.get("organizations", []) if isinstance(scopes, dict) else []
        for org in organizations:
            if org.get("slug") == slug:
                return str(org["id"])
        known = ", ".join(str(o.get("slug")) for o in organizations) or "none"
        raise ConfigError(f'organization slug "{slug}" is not one of your organizations (yours: {known})')
