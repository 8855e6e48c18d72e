from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import httpx

from .. import models as m
from .._errors import APIConnectionError, ServiceError
from .._paths import path
from ._base import Namespace, body

RunRef = Mapping[str, Any]
"""A run as calls address it: ``{"experiment_id": …, "n": 1, "r": 2}``."""


class Assets(Namespace):
    """Records whose bytes live in object storage, uploaded through presigned URLs (presign, PUT each
    component, finalize) or sent inline."""

    def _links(
        self,
        kind: str,
        name: str,
        metadata: Optional[Mapping[str, Any]],
        experiment_id: Optional[str],
        run: Optional[RunRef],
        organization_id: Optional[str],
    ) -> dict[str, Any]:
        linked = run is not None or experiment_id is not None
        return body(
            kind=kind,
            name=name,
            metadata=dict(metadata) if metadata is not None else None,
            experiment_id=experiment_id,
            run=dict(run) if run is not None else None,
            # A linked asset lives where its experiment lives; the scope matters only for unlinked ones.
            organization_id=None if linked else self._org.for_call(organization_id),
        )

    def create(
        self,
        kind: str,
        name: str,
        components: Sequence[Mapping[str, Any]],
        *,
        metadata: Optional[Mapping[str, Any]] = None,
        experiment_id: Optional[str] = None,
        run: Optional[RunRef] = None,
        organization_id: Optional[str] = None,
    ) -> m.CreateAssetResponse:
        """Step 1 of an upload: declares the components (``{"name", "size", "content_type"?, "sha256"?}``)
        and answers presigned upload targets keyed by name."""
        data = self._links(kind, name, metadata, experiment_id, run, organization_id)
        data.update(presign=True, components=[dict(c) for c in components])
        result: m.CreateAssetResponse = self._t.post("/assets", data)
        return result

    def create_inline(
        self,
        kind: str,
        name: str,
        *,
        content: Optional[str] = None,
        content_type: Optional[str] = None,
        content_json: Optional[Mapping[str, Any]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        experiment_id: Optional[str] = None,
        run: Optional[RunRef] = None,
        organization_id: Optional[str] = None,
    ) -> m.CreateAssetResponse:
        """A small asset (report, environment snapshot) with inline content; the server finalizes it."""
        data = self._links(kind, name, metadata, experiment_id, run, organization_id)
        if content_json is not None:
            data["content_json"] = dict(content_json)
        else:
            data.update(body(content=content, content_type=content_type))
        result: m.CreateAssetResponse = self._t.post("/assets", data)
        return result

    def presign(self, asset_id: str, components: Optional[Sequence[str]] = None) -> m.PresignAssetResponse:
        """Fresh upload targets for a pending asset whose earlier URLs expired."""
        data = body(components=list(components) if components is not None else None)
        result: m.PresignAssetResponse = self._t.post(path("/assets/{}/presign", asset_id), data)
        return result

    def finalize(self, asset_id: str) -> m.Asset:
        """The server checks every component is stored as declared; the asset becomes ready and immutable."""
        result: m.Asset = self._t.request("PUT", path("/assets/{}/finalize", asset_id))
        return result

    def get(self, asset_id: str) -> m.Asset:
        result: m.Asset = self._t.get(path("/assets/{}", asset_id))
        return result

    def download(self, asset_id: str) -> m.DownloadAssetResponse:
        """Presigned download URLs of a ready asset's components."""
        result: m.DownloadAssetResponse = self._t.get(path("/assets/{}/download", asset_id))
        return result

    def list(
        self,
        *,
        experiment_id: Optional[str] = None,
        run: Optional[RunRef] = None,
        kind: Optional[str] = None,
        state: Optional[str] = None,
        name: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> m.ListAssetsResponse:
        """Assets by experiment, run, kind or state, newest first."""
        params = {
            "experiment_id": run["experiment_id"] if run is not None else experiment_id,
            "n": run["n"] if run is not None else None,
            "r": run["r"] if run is not None else None,
            "kind": kind,
            "state": state,
            "name": name,
            "limit": limit,
            "cursor": cursor,
        }
        result: m.ListAssetsResponse = self._t.get("/assets", params=params)
        return result

    def upload_files(
        self,
        kind: str,
        name: str,
        files: Mapping[str, Union[str, Path]],
        *,
        metadata: Optional[Mapping[str, Any]] = None,
        experiment_id: Optional[str] = None,
        run: Optional[RunRef] = None,
        organization_id: Optional[str] = None,
    ) -> m.Asset:
        """Uploads files as one asset, ``{component name: local path}``: declare with sha256, PUT each
        component to its presigned URL (a multipart target part by part), finalize. Simple and synchronous;
        the run handle's checkpoint upload is the resumable one."""
        declared = []
        for component, file in files.items():
            digest = hashlib.sha256()
            with open(file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            declared.append(
                {"name": component, "size": Path(file).stat().st_size, "sha256": digest.hexdigest()}
            )
        created = self.create(
            kind,
            name,
            declared,
            metadata=metadata,
            experiment_id=experiment_id,
            run=run,
            organization_id=organization_id,
        )
        targets: Mapping[str, Any] = created.get("uploads") or {}  # type: ignore[assignment]
        for component, file in files.items():
            target = targets.get(component)
            if target is None:
                raise ServiceError(f"the service answered no upload target for component {component!r}")
            _put_component(Path(file), target, self._t.timeout)
        return self.finalize(created["id"])


def _put_component(file: Path, target: Mapping[str, Any], timeout: float) -> None:
    parts = target.get("parts")
    try:
        with open(file, "rb") as handle:
            if parts:
                part_size = int(target["part_size"])
                for part in parts:
                    handle.seek((int(part["part_number"]) - 1) * part_size)
                    _put(part, handle.read(int(part["size"])), timeout)
            else:
                _put(target, handle.read(), timeout)
    except httpx.TransportError as error:
        raise APIConnectionError(f"upload of {file}: {error}") from error


def _put(request: Mapping[str, Any], data: bytes, timeout: float) -> None:
    method = str(request.get("method", "PUT"))
    headers = {str(k): str(v) for k, v in (request.get("headers") or {}).items()}
    response = httpx.request(method, str(request["url"]), content=data, headers=headers, timeout=timeout)
    if not response.is_success:
        raise ServiceError(
            f"{method} of an asset component answered HTTP {response.status_code}: {response.text[:200]}"
        )
