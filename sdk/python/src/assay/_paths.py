"""Request paths with every interpolated value percent-encoded: the one way ids enter URLs, so an id can
never add a segment or a query string (as src/client/core/path.ts)."""

from __future__ import annotations

from typing import Union
from urllib.parse import quote

__all__ = ["path"]


def _segment(value: Union[str, int]) -> str:
    # The characters encodeURIComponent leaves alone, so both clients send the same bytes.
    return quote(str(value), safe="!~*'()")


def path(template: str, *values: Union[str, int]) -> str:
    """``path("/experiments/{}/variations/{}", eid, n)``: each ``{}`` takes one encoded value."""
    parts = template.split("{}")
    if len(parts) != len(values) + 1:
        raise ValueError(f"path template {template!r} takes {len(parts) - 1} values, got {len(values)}")
    out = parts[0]
    for value, part in zip(values, parts[1:]):
        out += _segment(value) + part
    return out
