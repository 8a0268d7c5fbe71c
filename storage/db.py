"""Opening the database file: permissions, refusal of bad files, pragmas,
migrations; and the transaction wrapper every write runs in.

A file is inspected before anything writes to it (switching to WAL or
migrating would change its bytes), so a file this version cannot use is
refused and left exactly as it was.
"""

from __future__ import annotations

import asyncio
import errno
import os
import sqlite3
import stat
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from storage.errors import StorageError
from storage.migrations import check, migrate

BUSY_TIMEOUT_MS = 10_000
_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100

T = TypeVar("T")


def write(conn: sqlite3.Connection, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(conn, *args)`` in one ``BEGIN IMMEDIATE`` transaction.

    Called in aiosqlite's worker thread, so the transaction starts and ends
    there: a cancelled caller cannot leave it open or half applied.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn, *args)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


async def open_database(path: Path) -> aiosqlite.Connection:
    """Open (creating if needed) the database at ``path``, migrated and ready."""
    try:
        await asyncio.to_thread(_prepare, path)
        conn = await aiosqlite.connect(path, isolation_level=None)
    except OSError as exc:
        raise StorageError(path, exc.strerror or str(exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise StorageError.from_sqlite(path, exc) from exc
    try:
        await conn._execute(_configure, conn._conn, path)
    except BaseException as exc:
        await conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            raise StorageError.from_sqlite(path, exc) from exc
        raise
    for suffix in ("-wal", "-shm"):
        with suppress(FileNotFoundError, PermissionError):
            os.chmod(f"{path}{suffix}", 0o600)
    return conn


def _prepare(path: Path) -> None:
    """Create the directory and an empty file owner-only, or refuse an unusable file."""
    _make_dirs(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        _inspect(path)
    else:
        os.fchmod(fd, 0o600)
        os.close(fd)


def _make_dirs(directory: Path) -> None:
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for d in reversed(missing):
        with suppress(FileExistsError):
            d.mkdir(mode=0o700)
            d.chmod(0o700)


def _inspect(path: Path) -> None:
    """Refuse a file that is not SQLite, is truncated, is read-only, or that
    Tangents cannot read; create nothing beside it while looking."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise StorageError(path, "is not a regular file")
    with open(path, "rb") as f:
        header = f.read(_HEADER_SIZE)
        size = os.fstat(f.fileno()).st_size
    if not header:
        _check_writable(path)
        return  # empty: a new database
    if not header.startswith(_MAGIC):
        raise StorageError(path, "not an SQLite database")
    if len(header) < _HEADER_SIZE or _truncated(path, header, size):
        raise StorageError(path, "the database file is truncated")
    _check_writable(path)
    conn = sqlite3.connect(_inspection_uri(path, header), uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        check(conn, path)
    except sqlite3.DatabaseError as exc:
        raise StorageError.from_sqlite(path, exc) from exc
    finally:
        conn.close()


def _check_writable(path: Path) -> None:
    """Refuse a file Tangents could read but never save to (mode, immutable
    flag, read-only file system): every mode writes, if only the session."""
    try:
        os.close(os.open(path, os.O_RDWR))
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise StorageError(path, "is read-only") from exc
        raise


def _inspection_uri(path: Path, header: bytes) -> str:
    """A read-only URI for looking at the file before using it.

    A read-only connection to a WAL file creates ``-wal`` and ``-shm`` and
    leaves them behind; when no ``-wal`` exists (no connection is using the
    file, nothing is waiting to be checkpointed) the file is read as
    immutable, which creates nothing."""
    uri = f"{path.absolute().as_uri()}?mode=ro"
    in_wal_mode = header[18] == 2 and header[19] == 2
    if in_wal_mode and not Path(f"{path}-wal").exists():
        uri += "&immutable=1"
    return uri


def _truncated(path: Path, header: bytes, size: int) -> bool:
    """Whether the file is shorter than its header says.

    Only decidable when no write-ahead log holds newer pages, and when the
    header's page count is marked valid (change counter == version-valid-for).
    """
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return False
    if header[24:28] != header[92:96]:
        return False
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    return size < page_size * pages


def _configure(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = _use_wal(conn)
    if mode != "wal":
        raise StorageError(path, f"cannot use write-ahead logging (journal mode {mode})")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    write(conn, migrate, path)


def _use_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL, retrying while another connection holds the file.

    The switch upgrades a shared lock to an exclusive one, and SQLite reports
    busy at once instead of calling the busy handler (that could deadlock), so
    two processes creating the same new file need this loop.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
