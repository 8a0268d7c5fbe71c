"""Opening files inside the roots so that what was checked is what is opened.

:meth:`core.tools.paths.Roots.resolve` checks a path; a directory swapped for
a symbolic link after that check would lead the open outside. So every open
here starts from the root's directory descriptor and opens each component of
the path with ``O_NOFOLLOW`` (directories with ``O_DIRECTORY`` too): a
component that became a link makes the open fail instead of following it.

Only regular files are opened: the entry is checked with ``lstat`` first and
the descriptor with ``fstat`` after an ``O_NONBLOCK`` open, so a FIFO (which
would block the open until a writer comes) or a device is never read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.tools.base import ToolError
from core.tools.paths import Roots

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


class IsADirectory(ToolError):
    """The path names a directory where a file was expected."""


class NoSuchFile(ToolError):
    """Nothing exists at the path."""


@contextmanager
def parent_of(
    roots: Roots, real: Path, shown: str, *, create: bool = False
) -> Iterator[tuple[int, str]]:
    """(descriptor of the directory holding ``real``, the entry's name in it),
    every directory on the way opened without following links; missing ones
    are created when ``create``. The descriptor is closed on exit."""
    root = roots.root_of(real)
    parts = real.relative_to(root).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            child = _enter(fd, part, shown, create)
            os.close(fd)
            fd = child
        yield fd, parts[-1] if parts else "."
    finally:
        os.close(fd)


def _enter(fd: int, part: str, shown: str, create: bool) -> int:
    """The descriptor of directory ``part`` in ``fd``."""
    try:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise NoSuchFile(f"{shown}: no such file") from None
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass  # made meanwhile: opened below like any other
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ToolError(
                f"{shown}: {part!r} on the way is not a directory (a file or a symbolic link, "
                "perhaps changed just now); nothing was done"
            ) from None
        raise ToolError(f"{shown}: cannot open {part!r} ({error.strerror})") from None
    return child


def entry_stat(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry itself (a link is not followed); None when it does not exist."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def check_regular(info: os.stat_result | None, shown: str) -> None:
    """:class:`ToolError` unless ``info`` is a regular file."""
    if info is None:
        raise NoSuchFile(f"{shown}: no such file")
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectory(f"{shown} is a directory")
    if stat.S_ISLNK(info.st_mode):
        raise ToolError(f"{shown} became a symbolic link while it was used; nothing was done")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file (a FIFO, device or socket); not opened")


def open_regular(dir_fd: int, name: str, shown: str) -> int:
    """A read-only descriptor of the regular file ``name`` in ``dir_fd``."""
    check_regular(entry_stat(dir_fd, name), shown)
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise NoSuchFile(f"{shown}: no such file") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ToolError(
                f"{shown} became a symbolic link while it was used; nothing was done"
            ) from None
        raise ToolError(f"{shown}: cannot read it ({error.strerror})") from None
    try:
        check_regular(os.fstat(fd), shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``fd``'s current position."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def replace_file(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Write ``data`` to a temporary file beside ``name`` and rename it over
    ``name``, both relative to ``dir_fd``: a reader sees the old or the new
    file, never half of one."""
    for attempt in range(100):
        temp = f".{name}.{os.getpid()}.{attempt}.tmp"
        try:
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=dir_fd,
            )
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
