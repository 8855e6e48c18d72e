from __future__ import annotations

from typing import Any

from .._organization import OrganizationDefault
from .._transport import Transport


class NotGiven:
    """Marks an argument that was not passed, where None means "set to null" (a run's name)."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Any = NotGiven()


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body of the fields that were given: None and NOT_GIVEN are left out, as JavaScript's
    JSON.stringify leaves out undefined."""
    return {k: v for k, v in fields.items() if v is not None and not isinstance(v, NotGiven)}


class Namespace:
    def __init__(self, transport: Transport, organization: OrganizationDefault) -> None:
        self._t = transport
        self._org = organization
