"""Checkpoints as assets of kind "checkpoint": ``save`` uploads a file or a directory (one component per
file) through presigned URLs, in parts for files over 64 MiB (``ASSAY_UPLOAD_PART_BYTES``), up to
``max_upload_workers`` files or parts at once; ``load`` downloads the newest ready checkpoint of the run's
chain. A save records its asset and the pieces already sent in a small JSON file next to the
spool, so a save that failed halfway, called again with the same files, re-uses the asset and sends only the
missing pieces."""

from __future__ import annotations

import hashlib
import json
import math
import mimetypes
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Optional

import httpx

from ._errors import ConfigError, ConflictError, NotFoundError

Request = Callable[..., Any]

PART_BYTES = 64 * 1024 * 1024
"""Files larger than this go in parts (the TypeScript client's DEFAULT_UPLOAD_PART_BYTES)."""
PART_BYTES_VARIABLE = "ASSAY_UPLOAD_PART_BYTES"
MAX_PARTS = 10_000
_MIB = 1024 * 1024


def part_bytes_from_env(env: Mapping[str, str]) -> int:
    """``ASSAY_UPLOAD_PART_BYTES``: the part size (and the size above which a file goes in parts); at least
    1 MiB, since a part size grows in whole MiB when a file would need more than 10,000 parts. An S3 store
    refuses parts under 5 MiB but the last."""
    given = env.get(PART_BYTES_VARIABLE, "").strip()
    if not given:
        return PART_BYTES
    try:
        value = int(given)
    except ValueError:
        value = 0
    if value < _MIB:
        raise ConfigError(f"{PART_BYTES_VARIABLE} must be a whole number of bytes ≥ {_MIB}, got {given!r}")
    return value


_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")
_CHUNK = 1024 * 1024
_PUT_ATTEMPTS = 4


class CheckpointError(Exception):
    """A checkpoint could not be saved or loaded; a save may be called again to resume."""


def _part_size(size: int, part_bytes: int) -> Optional[int]:
    if size <= part_bytes:
        return None
    return max(part_bytes, math.ceil(size / MAX_PARTS / _MIB) * _MIB)


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    if root.is_file():
        yield root.name, root
        return
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        yield path.relative_to(root).as_posix(), path


def _digests(path: Path, part_size: Optional[int]) -> tuple[str, list[str]]:
    whole = hashlib.sha256()
    parts: list[str] = []
    part = hashlib.sha256()
    in_part = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            whole.update(chunk)
            if part_size is None:
                continue
            view = memoryview(chunk)
            while view:
                take = min(len(view), part_size - in_part)
                part.update(view[:take])
                in_part += take
                view = view[take:]
                if in_part == part_size:
                    parts.append(part.hexdigest())
                    part, in_part = hashlib.sha256(), 0
    if part_size is not None and in_part > 0:
        parts.append(part.hexdigest())
    return whole.hexdigest(), parts


def _declare(root: Path, part_bytes: int) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    components: list[dict[str, Any]] = []
    paths: dict[str, Path] = {}
    for name, path in _files(root):
        if not _COMPONENT.match(name):
            raise CheckpointError(
                f"{name!r}: checkpoint file names are letters, digits and . _ -"
                " (no segment starting with a dot)"
            )
        size = path.stat().st_size
        part_size = _part_size(size, part_bytes)
        sha, parts = _digests(path, part_size)
        declared: dict[str, Any] = {
            "name": name,
            "size": size,
            "content_type": mimetypes.guess_type(name)[0] or "application/octet-stream",
            "sha256": sha,
        }
        if part_size is not None and len(parts) >= 2:
            declared["part_size"] = part_size
            declared["part_sha256"] = parts
        components.append(declared)
        paths[name] = path
    if not components:
        raise CheckpointError(f"{root}: nothing to save (no files)")
    return components, paths


def save(
    request: Request,
    http: httpx.Client,
    run: dict[str, Any],
    source: Path,
    name: str,
    metadata: dict[str, Any],
    state_dir: Path,
    part_bytes: int = PART_BYTES,
    workers: int = 1,
) -> dict[str, Any]:
    """Uploads ``source`` as a checkpoint of ``run`` ({experiment_id, n, r}), ``workers`` files or parts at
    once; answers the ready asset."""
    if not source.exists():
        raise CheckpointError(f"{source}: no such file or directory")
    components, paths = _declare(source, part_bytes)
    fingerprint = hashlib.sha256(json.dumps([run, name, components], sort_keys=True).encode()).hexdigest()[
        :32
    ]
    state_file = state_dir / f"checkpoint-{fingerprint}.json"
    state: dict[str, Any] = {}
    if state_file.exists():
        state = json.loads(state_file.read_text())
    if state.get("asset_id"):
        try:
            asset = request("POST", f"/assets/{state['asset_id']}/presign", json={})
        except ConflictError as error:
            if error.code != "asset_ready":
                raise
            state_file.unlink(missing_ok=True)
            return dict(request("GET", f"/assets/{state['asset_id']}"))
    else:
        asset = request(
            "POST",
            "/assets",
            json={
                "kind": "checkpoint",
                "name": name,
                "run": run,
                "presign": True,
                "metadata": metadata,
                "components": components,
            },
        )
        state = {"asset_id": asset["id"], "done": []}
        state_dir.mkdir(parents=True, exist_ok=True)
        state_file.write_text(json.dumps(state))
    done: set[str] = set(state["done"])
    pieces: list[tuple[str, dict[str, Any], Path, int]] = []
    for component, target in asset.get("uploads", {}).items():
        whole = [(component, target, 0)]
        parts = [
            (f"{component}#{p['part_number']}", p, (p["part_number"] - 1) * target["part_size"])
            for p in target.get("parts", [])
        ]
        for key, piece, offset in parts if target.get("multipart") else whole:
            if key not in done:
                pieces.append((key, piece, paths[component], offset))
    recorded = threading.Lock()

    def send(key: str, piece: dict[str, Any], path: Path, offset: int) -> None:
        _put(http, piece, path, offset, piece.get("size", path.stat().st_size))
        with recorded:  # each piece sent is on disk before the next: a failed save resumes after it
            done.add(key)
            state["done"] = sorted(done)
            state_file.write_text(json.dumps(state))

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="assay-upload") as pool:
        futures = [pool.submit(send, *piece) for piece in pieces]
        wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            future.cancel()  # after a failure, the pieces not started yet wait for the next save
        for future in futures:
            failure = None if future.cancelled() or not future.done() else future.exception()
            if failure is not None:
                raise failure
    finalized = dict(request("PUT", f"/assets/{asset['id']}/finalize"))
    state_file.unlink(missing_ok=True)
    return finalized


def _put(http: httpx.Client, target: dict[str, Any], path: Path, offset: int, size: int) -> None:
    def body() -> Iterator[bytes]:
        with open(path, "rb") as f:
            f.seek(offset)
            left = size
            while left > 0:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    raise CheckpointError(f"{path} got shorter while it was uploaded")
                left -= len(chunk)
                yield chunk

    headers = {**target.get("headers", {}), "content-length": str(size)}
    for attempt in range(_PUT_ATTEMPTS):
        try:
            response = http.request(
                target.get("method", "PUT"), target["url"], headers=headers, content=body()
            )
        except httpx.TransportError as error:
            if attempt + 1 == _PUT_ATTEMPTS:
                raise CheckpointError(f"upload of {path} failed: {error}") from error
        else:
            if response.status_code < 300:
                return
            if response.status_code < 500 or attempt + 1 == _PUT_ATTEMPTS:
                raise CheckpointError(
                    f"upload of {path} refused: HTTP {response.status_code} {response.text[:200]}"
                )
        time.sleep(0.5 * 2**attempt)


def load(
    request: Request, http: httpx.Client, run_path: str, dest: Optional[Path], cache_dir: Path
) -> Optional[Path]:
    """Downloads the newest ready checkpoint of the run's chain; None when there is none."""
    try:
        answer = request("GET", f"{run_path}/checkpoint")
    except NotFoundError:
        return None
    asset: dict[str, Any] = answer["asset"]
    root: Path = dest if dest is not None else cache_dir / asset["id"]
    for component, info in answer["download"]["components"].items():
        target = root / component
        if (
            target.exists()
            and target.stat().st_size == info["size"]
            and _sha_matches(target, info.get("sha256"))
        ):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        digest = hashlib.sha256()
        with http.stream(info.get("method", "GET"), info["url"], headers=info.get("headers", {})) as response:
            if response.status_code >= 300:
                raise CheckpointError(f"download of {component} failed: HTTP {response.status_code}")
            with open(partial, "wb") as f:
                for chunk in response.iter_bytes(_CHUNK):
                    digest.update(chunk)
                    f.write(chunk)
        if info.get("sha256") and digest.hexdigest() != info["sha256"]:
            partial.unlink(missing_ok=True)
            raise CheckpointError(f"download of {component}: sha256 differs from the asset's")
        os.replace(partial, target)
    components: dict[str, Any] = answer["download"]["components"]
    if asset.get("metadata", {}).get("layout") == "file" and len(components) == 1:
        return root / next(iter(components))
    return root


def _sha_matches(path: Path, expected: Optional[str]) -> bool:
    if not expected:
        return True
    return _digests(path, None)[0] == expected
