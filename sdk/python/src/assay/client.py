"""``assay.Client``: the REST namespaces over one transport, its settings resolved from explicit arguments,
``SERVICE_*`` variables and ~/.assay files (as the TypeScript client's ``Client``)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any, Optional, Union

import httpx

from . import __version__
from ._config import ResolvedSettings, Settings, SettingSource, resolve_settings, resolve_settings_from_file
from ._organization import OrganizationDefault
from ._transport import Transport
from .resources.api_keys import ApiKeys
from .resources.assets import Assets
from .resources.experiments import Experiments
from .resources.me import Me
from .resources.organizations import Organizations
from .resources.runs import Runs
from .resources.search import Search
from .resources.sweeps import Sweeps
from .resources.variations import Variations

__all__ = ["Client"]


class Client:
    """The Assay API client: one namespace per endpoint group, each call one request answering the
    service's JSON as TypedDicts (``assay.models``). Nothing is retried or cached.

    Settings: each from the first source that gives it, explicit arguments, then ``SERVICE_*`` variables,
    then ``~/.assay/credentials.yaml`` over ``~/.assay/config.yaml`` (or the one file ``SERVICE_CONFIG``
    names), then defaults. Raises ConfigError before any request when no API key is found."""

    settings: Settings
    sources: dict[str, SettingSource]
    warnings: tuple[str, ...]
    transport: Transport

    def __init__(
        self,
        server_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
        max_upload_workers: Optional[int] = None,
        organization_id: Optional[str] = None,
        organization_slug: Optional[str] = None,
        http_client: Optional[httpx.Client] = None,
        _resolved: Optional[ResolvedSettings] = None,
    ) -> None:
        resolved = _resolved or resolve_settings(
            {
                "server_url": server_url,
                "api_key": api_key,
                "timeout": timeout,
                "max_upload_workers": max_upload_workers,
                "organization_id": organization_id,
                "organization_slug": organization_slug,
            }
        )
        self.settings = resolved.settings
        self.sources = dict(resolved.sources)
        self.warnings = resolved.warnings
        assert self.settings.api_key is not None  # resolve_settings raised otherwise
        self.transport = Transport(
            self.settings.server_url,
            self.settings.api_key,
            self.settings.timeout,
            http_client=http_client,
            user_agent=f"assay-client-python/{__version__}",
        )
        organization = OrganizationDefault(
            self.transport, self.settings.organization_id, self.settings.organization_slug
        )
        self.experiments = Experiments(self.transport, organization)
        self.variations = Variations(self.transport, organization)
        self.runs = Runs(self.transport, organization)
        self.sweeps = Sweeps(self.transport, organization)
        self.assets = Assets(self.transport, organization)
        self.search = Search(self.transport, organization)
        self.api_keys = ApiKeys(self.transport, organization)
        self.me = Me(self.transport, organization)
        self.organizations = Organizations(self.transport, organization)
        self.organization = organization

    @classmethod
    def from_env(cls, **kwargs: Any) -> Client:
        """The same resolution as the constructor, named as SPEC section 5 names it."""
        return cls(**kwargs)

    @classmethod
    def from_file(
        cls,
        config: Optional[Union[str, Path]] = None,
        credentials: Optional[Union[str, Path]] = None,
        *,
        http_client: Optional[httpx.Client] = None,
    ) -> Client:
        """From the given YAML files only (a combined file may be passed as ``config``), ignoring the
        environment and the default files."""
        return cls(http_client=http_client, _resolved=resolve_settings_from_file(config, credentials))

    def close(self) -> None:
        """Closes the connection pool."""
        self.transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(server_url={self.settings.server_url!r})"
