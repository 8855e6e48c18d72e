"""Client settings resolution, per setting: explicit arguments > ``SERVICE_*`` environment > YAML files
(``~/.assay/credentials.yaml`` over ``~/.assay/config.yaml``, or the one file ``SERVICE_CONFIG`` names) >
defaults. The same rules and messages as the TypeScript client (src/client/config*.ts); the cases in
test/conformance/config.json hold both to them."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar, Union
from urllib.parse import urlsplit

import yaml

from ._errors import ConfigError, js_json

__all__ = [
    "CONFIG_PATH_VARIABLE",
    "DEFAULT_MAX_UPLOAD_WORKERS",
    "DEFAULT_SERVER_URL",
    "DEFAULT_TIMEOUT_SECONDS",
    "ENV_VARIABLES",
    "YAML_KEYS",
    "ResolvedSettings",
    "SettingSource",
    "Settings",
    "default_config_paths",
    "describe_source",
    "inspect_settings",
    "mask_key",
    "resolve_settings",
    "resolve_settings_from_file",
]

DEFAULT_SERVER_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_SECONDS: float = 30
DEFAULT_MAX_UPLOAD_WORKERS = 2

#: Names a single YAML file that replaces both default files.
CONFIG_PATH_VARIABLE = "SERVICE_CONFIG"

# The settings in the order the TypeScript client resolves them; Python names are the YAML keys.
SETTING_NAMES = (
    "server_url",
    "api_key",
    "timeout",
    "max_upload_workers",
    "organization_id",
    "organization_slug",
)

#: Environment variable of each setting.
ENV_VARIABLES: dict[str, str] = {
    "server_url": "SERVICE_SERVER_URL",
    "api_key": "SERVICE_API_KEY",
    "timeout": "SERVICE_TIMEOUT",
    "max_upload_workers": "SERVICE_MAX_UPLOAD_WORKERS",
    "organization_id": "SERVICE_ORGANIZATION_ID",
    "organization_slug": "SERVICE_ORGANIZATION_SLUG",
}

#: YAML key of each setting in config.yaml, credentials.yaml or a combined file.
YAML_KEYS: dict[str, str] = {name: name for name in SETTING_NAMES}


@dataclass(frozen=True)
class SettingSource:
    """Where a setting's value came from: ``option``, ``env`` (with its variable), ``file`` (with its path)
    or ``default``."""

    kind: str
    variable: Optional[str] = None
    path: Optional[str] = None


@dataclass(frozen=True)
class Settings:
    """The resolved client settings; at most one of organization_id and organization_slug is set."""

    server_url: str
    api_key: Optional[str]
    timeout: float
    """Per-request timeout in seconds."""
    max_upload_workers: int
    organization_id: Optional[str] = None
    organization_slug: Optional[str] = None
    """Resolved to an id through /v1/me/scopes on first use."""


@dataclass(frozen=True)
class ResolvedSettings:
    settings: Settings
    sources: Mapping[str, SettingSource]
    """The source of each setting that is set."""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    """Unknown YAML keys that were ignored, one line each."""


@dataclass(frozen=True)
class _Entry:
    value: Any
    source: SettingSource


_Layer = dict[str, _Entry]


def default_config_paths(home_dir: Optional[Union[str, Path]] = None) -> tuple[Path, Path]:
    """``~/.assay/config.yaml`` and ``~/.assay/credentials.yaml``; ``assay auth login`` writes these."""
    base = Path(home_dir) if home_dir is not None else Path.home()
    return base / ".assay" / "config.yaml", base / ".assay" / "credentials.yaml"


def resolve_settings(
    options: Optional[Mapping[str, Any]] = None,
    *,
    env: Optional[Mapping[str, str]] = None,
    home_dir: Optional[Union[str, Path]] = None,
) -> ResolvedSettings:
    """Resolves the settings from explicit options (keys as in ``SETTING_NAMES``; None or blank means "not
    given"), the ``SERVICE_*`` environment, then either the file named by ``SERVICE_CONFIG`` or
    ``~/.assay/credentials.yaml`` over ``~/.assay/config.yaml``, then the defaults. Raises ConfigError
    (before any network call) when no API key is found or a value is invalid."""
    hint = "pass api_key, set SERVICE_API_KEY, or run `assay auth login`"
    return _require_api_key(inspect_settings(options, env=env, home_dir=home_dir), hint)


def inspect_settings(
    options: Optional[Mapping[str, Any]] = None,
    *,
    env: Optional[Mapping[str, str]] = None,
    home_dir: Optional[Union[str, Path]] = None,
) -> ResolvedSettings:
    """Like resolve_settings, but a missing API key is not an error. Invalid values still raise."""
    environ: Mapping[str, str] = os.environ if env is None else env
    home = str(home_dir) if home_dir is not None else str(Path.home())
    single = (environ.get(CONFIG_PATH_VARIABLE) or "").strip()
    warnings: list[str] = []
    if single:
        # A file named on purpose must exist; only the default files are optional.
        files = [_file_layer(os.path.abspath(_expand_home(single, home)), True, warnings)]
    else:
        config, credentials = default_config_paths(home)
        files = [_file_layer(str(credentials), False, warnings), _file_layer(str(config), False, warnings)]
    return _resolve_layers([_option_layer(options or {}), _env_layer(environ), *files], warnings)


def resolve_settings_from_file(
    config_path: Optional[Union[str, Path]] = None,
    credentials_path: Optional[Union[str, Path]] = None,
    options: Optional[Mapping[str, Any]] = None,
) -> ResolvedSettings:
    """From explicit options and the given files only: no ``SERVICE_*`` variables, no ``SERVICE_CONFIG``,
    no default files; built-in defaults still apply. A combined file may be passed as config_path; the
    credentials file wins over the config file; a path that is given must exist."""
    warnings: list[str] = []
    layers = [_option_layer(options or {})]
    given = []
    if credentials_path is not None:
        layers.append(_file_layer(os.path.abspath(credentials_path), True, warnings))
        given.append(str(credentials_path))
    if config_path is not None:
        layers.append(_file_layer(os.path.abspath(config_path), True, warnings))
        given.append(str(config_path))
    hint = f"pass api_key or put api_key in {' or '.join(given)}" if given else "pass api_key or a file"
    return _require_api_key(_resolve_layers(layers, warnings), hint)


def mask_key(key: str) -> str:
    """Masks a key for display: keeps a ``sk_<kind>_`` prefix and the last 4 characters."""
    match = re.match(r"sk_[a-z]+_", key)
    prefix = match.group(0) if match else ""
    rest = key[len(prefix) :]
    # Four characters of a short secret would give away too much of it.
    return f"{prefix}****{rest[-4:]}" if len(rest) >= 12 else f"{prefix}****"


def describe_source(source: SettingSource) -> str:
    """One line, e.g. ``env SERVICE_API_KEY`` or ``file /home/me/.assay/credentials.yaml``."""
    if source.kind == "option":
        return "explicit option"
    if source.kind == "env":
        return f"env {source.variable}"
    if source.kind == "file":
        return f"file {source.path}"
    return "default"


# --- values ---------------------------------------------------------------------------------------------


def check_string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {_show(value)}")
    return value


def check_url(value: Any, where: str) -> str:
    """An http(s) base URL, returned without trailing slashes (the transport appends paths)."""
    text = check_string(value, where)
    try:
        parts = urlsplit(text)
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"{where} must be an http(s) URL, got {_show(text)}")
    return text.rstrip("/")


def check_key(value: Any, where: str) -> str:
    text = check_string(value, where)
    # A stray space or newline (a pasted key) would make an invalid Authorization header.
    if re.search(r"\s", text):
        raise ConfigError(f"{where} must not contain whitespace")
    return text


def _to_number(value: Any) -> float:
    if isinstance(value, bool):
        return math.nan  # a YAML `true` is no number, as in JavaScript's typeof check
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value.strip() != "":
        try:
            return float(value)
        except ValueError:
            return math.nan
    return math.nan


def check_timeout(value: Any, where: str) -> float:
    seconds = _to_number(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds, got {_show(value)}")
    return seconds


def check_workers(value: Any, where: str) -> int:
    workers = _to_number(value)
    if not math.isfinite(workers) or workers != int(workers) or workers <= 0:
        raise ConfigError(f"{where} must be a positive integer, got {_show(value)}")
    return int(workers)


def _show(value: Any) -> str:
    # JSON.stringify of the value, as the TypeScript client quotes it; an integral float prints as JS does.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    try:
        return js_json(value)
    except (TypeError, ValueError):
        return repr(value)


# --- layers ---------------------------------------------------------------------------------------------


def _where(name: str, source: SettingSource) -> str:
    if source.kind == "env":
        return str(source.variable)
    if source.kind == "file":
        return f"{YAML_KEYS[name]} in {source.path}"
    return f"option {name}"


def _given(value: Any) -> Any:
    # Empty and blank strings count as "not given" in every source, as an exported-but-empty variable does.
    if isinstance(value, str):
        return None if value.strip() == "" else value.strip()
    return value


def _layer(read: Callable[[str], Any], source: Callable[[str], SettingSource]) -> _Layer:
    out: _Layer = {}
    for name in SETTING_NAMES:
        value = _given(read(name))
        if value is not None:
            out[name] = _Entry(value, source(name))
    return out


def _option_layer(options: Mapping[str, Any]) -> _Layer:
    unknown = set(options) - set(SETTING_NAMES)
    if unknown:
        raise TypeError(f"unknown client settings: {', '.join(sorted(unknown))}")
    return _layer(options.get, lambda _name: SettingSource("option"))


def _env_layer(env: Mapping[str, str]) -> _Layer:
    return _layer(
        lambda name: env.get(ENV_VARIABLES[name]),
        lambda name: SettingSource("env", variable=ENV_VARIABLES[name]),
    )


def _file_layer(file: str, required: bool, warnings: list[str]) -> _Layer:
    # Every known key is accepted in every file; unknown keys are ignored with a warning, so a config.yaml
    # written by a newer client does not break an older one.
    mapping = _read_yaml_mapping(file, required) or {}
    for key in mapping:
        if key not in YAML_KEYS.values():
            warnings.append(f'ignored unknown key "{key}" in {file}')
    return _layer(lambda name: mapping.get(YAML_KEYS[name]), lambda _name: SettingSource("file", path=file))


def _read_yaml_mapping(file: str, required: bool) -> Optional[dict[str, Any]]:
    """The file's top-level mapping, or None when an optional file does not exist. An empty file is an empty
    mapping; anything unreadable, malformed or not a mapping is a ConfigError."""
    try:
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError as error:
        if not required:
            return None
        raise ConfigError(f"cannot read client config file {file}: file not found") from error
    except IsADirectoryError as error:
        raise ConfigError(f"cannot read client config file {file}: is a directory") from error
    except OSError as error:
        raise ConfigError(f"cannot read client config file {file}: {error}") from error
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else file
        reason = getattr(error, "problem", None) or str(error)
        raise ConfigError(f"{at}: invalid YAML: {reason}") from error
    if value is None:
        return {}
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else f"a {_js_type(value)}"
        raise ConfigError(f"{file}: the top level must be a mapping of settings (key: value), got {kind}")
    return {str(k): v for k, v in value.items()}


def _js_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _expand_home(file: str, home: str) -> str:
    return os.path.join(home, file[2:]) if file.startswith("~/") else (home if file == "~" else file)


_T = TypeVar("_T")


def _take(
    layers: list[_Layer], name: str, check: Callable[[Any, str], _T], sources: dict[str, SettingSource]
) -> Optional[_T]:
    # The first layer that has the setting decides it; only its value is checked.
    for layer in layers:
        entry = layer.get(name)
        if entry is not None:
            sources[name] = entry.source
            return check(entry.value, _where(name, entry.source))
    return None


def _organization_layers(layers: list[_Layer]) -> list[_Layer]:
    # The organization is one setting spelled two ways: the highest source naming either decides it, and one
    # source naming both is an error; so an id from one source never meets a slug from another.
    for layer in layers:
        org_id, slug = layer.get("organization_id"), layer.get("organization_slug")
        if org_id is None and slug is None:
            continue
        if org_id is not None and slug is not None:
            both = (
                f"{_where('organization_id', org_id.source)} and {_where('organization_slug', slug.source)}"
            )
            raise ConfigError(f"set an organization id or slug, not both: {both} are both set")
        return [layer]
    return []


def _resolve_layers(layers: list[_Layer], warnings: list[str]) -> ResolvedSettings:
    sources: dict[str, SettingSource] = {}
    default = SettingSource("default")

    def fallback(name: str, value: _T) -> _T:
        sources[name] = default
        return value

    organization = _organization_layers(layers)
    server_url = _take(layers, "server_url", check_url, sources)
    api_key = _take(layers, "api_key", check_key, sources)
    timeout = _take(layers, "timeout", check_timeout, sources)
    workers = _take(layers, "max_upload_workers", check_workers, sources)
    org_id = _take(organization, "organization_id", check_string, sources)
    slug = _take(organization, "organization_slug", check_string, sources)
    settings = Settings(
        server_url=server_url if server_url is not None else fallback("server_url", DEFAULT_SERVER_URL),
        api_key=api_key,
        timeout=timeout if timeout is not None else fallback("timeout", DEFAULT_TIMEOUT_SECONDS),
        max_upload_workers=workers
        if workers is not None
        else fallback("max_upload_workers", DEFAULT_MAX_UPLOAD_WORKERS),
        organization_id=org_id,
        organization_slug=slug,
    )
    return ResolvedSettings(settings=settings, sources=dict(sources), warnings=tuple(warnings))


def _require_api_key(resolved: ResolvedSettings, hint: str) -> ResolvedSettings:
    if resolved.settings.api_key is None:
        raise ConfigError(f"no API key: {hint}")
    return resolved
