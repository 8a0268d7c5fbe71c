"""The lines of an open file, read in chunks, with the memory and the bytes read
bounded: a file holding one line of gigabytes is never read whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Literal

CHUNK = 64 * 1024


class LineScan:
    """Iterate over the lines (bytes, without the line break) from ``fd``'s
    position. It stops early, setting :attr:`stopped`, at a line longer than
    ``max_line`` bytes (whose first ``max_line`` bytes are the last line
    yielded) or once ``max_bytes`` were read (the unfinished line is dropped)."""

    def __init__(self, fd: int, *, max_line: int, max_bytes: int) -> None:
        self.fd = fd
        self.max_line = max_line
        self.max_bytes = max_bytes
        self.stopped: Literal["long_line", "size"] | None = None

    def __iter__(self) -> Iterator[bytes]:
        buffer = b""
        read = 0
        while True:
            start = 0
            while (end := buffer.find(b"\n", start)) >= 0:
                yield _line(buffer[start:end])
                start = end + 1
            buffer = buffer[start:]
            if len(buffer) > self.max_line:
                self.stopped = "long_line"
                yield buffer[: self.max_line]
                return
            if read >= self.max_bytes:
                self.stopped = "size"
                return
            chunk = os.read(self.fd, min(CHUNK, self.max_bytes - read))
            if not chunk:
                if buffer:
                    yield _line(buffer)
                return
            read += len(chunk)
            buffer += chunk


def _line(data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\r") else data
