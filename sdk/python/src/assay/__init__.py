"""Assay's Python client: ``assay.Client`` for the REST API (experiments, variations, runs, assets,
sweeps, search, API keys, organizations), with settings from arguments, ``SERVICE_*`` variables or
``~/.assay``, and typed errors by status; ``assay.init()`` for a training script (a run handle: config,
``log``, checkpoints). See sdk/python/README.md."""

from __future__ import annotations

__version__ = "0.1.0"

from . import models, types
from ._config import Settings, SettingSource, describe_source, mask_key
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConflictError,
    MetricsError,
    NotFoundError,
    PermissionDeniedError,
    ServerError,
    ServiceError,
)
from ._organization import PERSONAL
from .client import Client
from .run import Run, RunCancelled, init

__all__ = [
    "PERSONAL",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConfigError",
    "ConflictError",
    "MetricsError",
    "NotFoundError",
    "PermissionDeniedError",
    "Run",
    "RunCancelled",
    "ServerError",
    "ServiceError",
    "SettingSource",
    "Settings",
    "__version__",
    "describe_source",
    "init",
    "mask_key",
    "models",
    "types",
]
