"""The local spool: one SQLite file per run holding the metric points not yet stored by the service, and what
the run still owes the service (its creation, in offline mode; its end). A live process holds a lock on its
file, so ``assay-sync`` leaves it alone; after a crash or in offline mode, ``assay-sync`` sends it."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional, Union

try:  # POSIX only: on other systems a spool is not locked (sync could race a live process there)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

WireValue = Union[float, str]
"""A metric value as it travels: a finite float, or "NaN", "Infinity", "-Infinity"."""
Point = tuple[str, int, WireValue, Optional[str]]
"""(key, step, value, ISO timestamp or None)."""

SPOOL_DIR_VARIABLE = "ASSAY_SPOOL_DIR"


def spool_dir() -> Path:
    """``$ASSAY_SPOOL_DIR``, else ``~/.assay/spool``."""
    configured = os.environ.get(SPOOL_DIR_VARIABLE, "").strip()
    return Path(configured) if configured else Path.home() / ".assay" / "spool"


class Spool:
    """One run's spool file. Thread-safe: the sender's workers and the main thread share one connection."""

    def __init__(self, path: Path, *, lock: bool = True) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._lock_file: Optional[Any] = None
        if lock and fcntl is not None:
            self._lock_file = open(f"{path}.lock", "a")  # noqa: SIM115 - held for the spool's lifetime
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX)
        # isolation_level=None: each statement commits on its own unless inside an explicit transaction.
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        # `value` has no declared type, so the strings "NaN"/"Infinity" stay strings (SQLite turns a NaN
        # REAL into NULL). A repeat of (key, step) replaces the earlier point, as on the service.
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS points (key TEXT NOT NULL, step INTEGER NOT NULL, value, ts TEXT,"
            " UNIQUE (key, step) ON CONFLICT REPLACE)"
        )

    @staticmethod
    def try_open(path: Path) -> Optional[Spool]:
        """Opens a spool nobody holds (for assay-sync); None when a live process has it."""
        if fcntl is not None:
            probe = open(f"{path}.lock", "a")  # noqa: SIM115
            try:
                fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                probe.close()
                return None
            spool = Spool(path, lock=False)
            spool._lock_file = probe
            return spool
        return Spool(path, lock=False)

    # --- metadata ---
    def get_meta(self) -> dict[str, Any]:
        with self._lock:
            rows = self._db.execute("SELECT key, value FROM meta").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def set_meta(self, **values: Any) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()],
            )

    # --- points ---
    def add(self, points: Iterable[Point]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT INTO points (key, step, value, ts) VALUES (?, ?, ?, ?)", points)
            finally:
                self._db.execute("COMMIT")

    def take(self, after_rowid: int, limit: int) -> tuple[list[int], list[Point]]:
        """The oldest points after a rowid: their rowids (to delete once stored) and the points."""
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, key, step, value, ts FROM points WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (after_rowid, limit),
            ).fetchall()
        return [r[0] for r in rows], [(r[1], r[2], r[3], r[4]) for r in rows]

    def delete(self, rowids: Sequence[int]) -> None:
        # A point replaced since it was taken has a new rowid, so the newer value stays to be sent.
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("DELETE FROM points WHERE rowid = ?", [(r,) for r in rowids])
            finally:
                self._db.execute("COMMIT")

    def count(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT count(*) FROM points").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def remove(self) -> None:
        """Closes and deletes the file (everything in it reached the service)."""
        self.close()
        for suffix in ("", "-wal", "-shm", ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")


def spool_files(directory: Optional[Path] = None) -> Iterator[Path]:
    """Every run spool in the directory, oldest first."""
    root = directory or spool_dir()
    if not root.is_dir():
        return iter(())
    files = [p for p in root.glob("*.db") if p.is_file()]
    return iter(sorted(files, key=lambda p: p.stat().st_mtime))
