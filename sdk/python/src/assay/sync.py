"""``assay-sync``: sends what the spool holds — offline runs (created, started, their points, their
checkpoints, their end) and the points an online run could not deliver before its process exited. A file is
deleted once everything in it is stored, so a second ``assay-sync`` finds nothing to do; a sync stopped
midway (a crash, a lost answer) is taken up by the next one without creating the run twice or storing a
point twice. A file a live process still holds is skipped.

Usage: ``assay-sync [--dir DIR]`` (default DIR: ``$ASSAY_SPOOL_DIR``, else ``~/.assay/spool``).
Exit code 0 when every file was sent (or was in use), 1 when one could not be."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, Optional

import httpx

from . import _checkpoint
from ._config import resolve_settings
from ._errors import ConflictError, ServiceError
from ._metric_logger import MAX_POINTS_PER_REQUEST
from ._paths import path as url_path
from ._spool import Spool, spool_dir, spool_files
from ._transport import Transport

MAX_TAGS = 32
"""A run's most tags (MAX_TAGS in src/contract/tags.ts)."""


def sync_file(file: Path, *, out: Any = sys.stdout) -> Optional[int]:
    """Sends one spool; answers the points sent, or None when a live process holds it."""
    spool = Spool.try_open(file)
    if spool is None:
        return None
    try:
        meta = spool.get_meta()
        # An online run's leftovers go to the server the run lives on; an offline run to the one configured
        # now (SERVICE_SERVER_URL, ~/.assay), which may not be the one reachable when it was recorded.
        online = meta.get("mode") != "offline"
        settings = resolve_settings({"server_url": meta.get("server_url") if online else None}).settings
        transport = Transport(settings.server_url, settings.api_key or "", settings.timeout)
        try:
            return _sync(spool, meta, transport, file, out)
        finally:
            transport.close()
    except BaseException:
        spool.close()
        raise


def _sync(spool: Spool, meta: dict[str, Any], transport: Transport, file: Path, out: Any) -> int:
    experiment, n = meta["experiment_id"], int(meta["n"])
    variation_path = url_path("/experiments/{}/variations/{}", experiment, n)
    r = meta.get("r")
    if r is None:  # an offline run: create it first, and remember its number before anything else
        r = _create_run(spool, meta, transport, variation_path)
        spool.set_meta(r=r)
        print(f"{file.name}: created run {r} of variation {n} of experiment {experiment}", file=out)
    run_path = f"{variation_path}/runs/{r}"
    if meta.get("mode") == "offline" and not meta.get("started"):
        state = transport.request("GET", run_path).get("state")
        if state == "pending":
            transport.request("GET", f"{run_path}/config")
            transport.request(
                "POST", f"{run_path}/start", json={"environment": meta.get("environment") or {}}
            )
        spool.set_meta(started=True)
    sent = 0
    while True:
        rowids, batch = spool.take(0, MAX_POINTS_PER_REQUEST)
        if not batch:
            break
        metrics = [
            {"key": k, "step": s, "value": v, **({"timestamp": t} if t else {})} for k, s, v, t in batch
        ]
        transport.request("POST", f"{run_path}/metrics", json={"metrics": metrics})
        spool.delete(rowids)
        sent += len(batch)
    checkpoints = list(meta.get("checkpoints") or [])
    if checkpoints:
        with httpx.Client(timeout=httpx.Timeout(300.0, connect=30.0)) as http:
            while checkpoints:
                saved = checkpoints[0]
                _checkpoint.save(
                    transport.request,
                    http,
                    {"experiment_id": experiment, "n": n, "r": r},
                    Path(saved["path"]),
                    saved["name"],
                    saved["metadata"],
                    file.parent / "checkpoints",
                )
                checkpoints.pop(0)
                spool.set_meta(checkpoints=checkpoints)
    end: Optional[dict[str, Any]] = meta.get("end")
    if end is None and meta.get("mode") == "offline":
        end = {
            "move": "fail",
            "reason": "crash",
            "message": "the offline run's process ended without finish()",
        }
    if end is not None:
        end_body = (
            {"reason": end["reason"], **({"message": end["message"]} if end.get("message") else {})}
            if end["move"] == "fail"
            else None
        )
        # A 409: ended already (a sync that stopped right after this call, run again).
        with contextlib.suppress(ConflictError):
            transport.request("POST", f"{run_path}/{end['move']}", json=end_body)
    print(f"{file.name}: {sent} point(s) sent to run {r} of variation {n}", file=out)
    for saved in meta.get("checkpoints") or []:
        _remove_tree(Path(saved["path"]))
    spool.remove()
    return sent


def _create_run(spool: Spool, meta: dict[str, Any], transport: Transport, variation_path: str) -> int:
    """Creates the offline run once, even across a sync that stopped between the POST and recording its
    number (a crash, a lost answer): the run carries the spool's id as a tag, recorded before the POST, and
    a later sync looks for a run with that tag before creating one."""
    marker = meta.get("creating")
    if marker:
        found = transport.request(
            "GET", f"{variation_path}/runs", params={"tag": marker, "archived": "true"}
        )["items"]
        if found:
            return int(found[0]["r"])
    body: dict[str, Any] = {}
    if meta.get("name"):
        body["name"] = meta["name"]
    tags = list(meta.get("tags") or [])
    local_id = meta.get("local_id")
    # A run has at most 32 tags: with 32 of its own, the run is created without the marker.
    if local_id and local_id not in tags and len(tags) < MAX_TAGS:
        tags.append(local_id)
        spool.set_meta(creating=local_id)
    if tags:
        body["tags"] = tags
    return int(transport.request("POST", f"{variation_path}/runs", json=body or None)["r"])


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="assay-sync", description="Send spooled Assay runs and metrics.")
    parser.add_argument("--dir", type=Path, default=None, help="the spool directory (default: %(default)s)")
    args = parser.parse_args(argv)
    directory = args.dir or spool_dir()
    files = list(spool_files(directory))
    if not files:
        print(f"nothing to send in {directory}")
        return 0
    failed = 0
    for file in files:
        try:
            if sync_file(file) is None:
                print(f"{file.name}: in use by a running process; skipped")
        except (ServiceError, OSError, KeyError, ValueError) as error:
            failed += 1
            print(f"{file.name}: not sent: {error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
