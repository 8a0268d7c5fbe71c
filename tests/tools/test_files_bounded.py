"""read_file and write_file on hostile files (issue 37): a FIFO is never opened,
a file with one enormous line is not read whole, the write preview reads a
bounded amount, and a directory swapped for a symlink between the path check
and the open never lets content from outside the working directory through."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply, ToolCall

from core.tools import ToolError, ToolRegistry
from core.tools.builtin import LONG_LINE_BYTES, PREVIEW_BYTES
from tests.tools.test_builtin import call, text
from tests.tools.test_mcp_bounds import longest_gap, ticking
from tests.tools.test_print_mode_tools import tangents, tool_results

BOUNDED = 10.0
"""Seconds a call on a hostile file gets before the test calls it hung."""


def bytes_read() -> int:
    """Bytes this process has read so far (Linux ``rchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture
def fifo(work: Path) -> Iterator[Path]:
    """A FIFO in the working directory; whatever blocks opening it is released
    at the end (a writer is opened once), so a failing test still ends."""
    path = work / "pipe"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


async def bounded(coroutine: object) -> object:
    return await asyncio.wait_for(coroutine, BOUNDED)  # type: ignore[arg-type]


async def test_read_file_refuses_a_fifo_without_opening_it(
    registry: ToolRegistry, fifo: Path
) -> None:
    with pytest.raises(ToolError, match="not a regular file"):
        await bounded(call(registry, "read_file", path="pipe"))


async def test_write_preview_and_write_refuse_a_fifo(
    registry: ToolRegistry, work: Path, fifo: Path
) -> None:
    tool = registry.get("write_file")
    assert tool is not None
    with pytest.raises(ToolError, match="not a regular file"):
        await bounded(tool.make_preview({"path": "pipe", "content": "x"}, registry.context()))
    with pytest.raises(ToolError, match="not a regular file"):
        await bounded(call(registry, "write_file", path="pipe", content="x"))
    assert fifo.is_fifo()


async def test_a_huge_line_is_not_read_whole(registry: ToolRegistry, work: Path) -> None:
    head = "".join(f"line {i:04}: some text here\n" for i in range(400))  # ~9 KB
    with open(work / "huge.txt", "w") as handle:
        handle.write(head)
        handle.write("x" * (50 * 1024 * 1024) + "\n")
        handle.write("MARKER-AFTER\n")
    before = bytes_read()
    result = text(await bounded(call(registry, "read_file", path="huge.txt")))
    read = bytes_read() - before
    assert read < LONG_LINE_BYTES + 4 * 1024 * 1024, f"read {read} bytes"
    assert "line 0399: some text here" in result
    assert "line cut" in result
    assert "MARKER-AFTER" not in result
    assert "not read" in result.splitlines()[-1]


async def test_write_preview_reads_a_bounded_amount(registry: ToolRegistry, work: Path) -> None:
    (work / "big.txt").write_text("old line\n" * (3 * 1024 * 1024))  # 27 MB
    tool = registry.get("write_file")
    assert tool is not None
    before = bytes_read()
    preview = await bounded(
        tool.make_preview({"path": "big.txt", "content": "new\n"}, registry.context())
    )
    read = bytes_read() - before
    assert read < PREVIEW_BYTES + 1024 * 1024, f"read {read} bytes"
    assert preview.splitlines()[0] == "write_file big.txt (replace, 4 bytes)"
    assert "too large to compare" in preview
    assert "+new" in preview


async def test_a_big_new_content_gets_a_bounded_preview(registry: ToolRegistry) -> None:
    tool = registry.get("write_file")
    assert tool is not None
    content = "".join(f"row {i}\n" for i in range(400_000))
    preview = await bounded(
        tool.make_preview({"path": "fresh.txt", "content": content}, registry.context())
    )
    assert len(preview) < 200_000
    assert "+row 0" in preview


def swap_forever(work: Path, stop: threading.Event) -> None:
    """Swap ``sub`` (a real directory) with ``link`` (a symlink leading outside)."""
    while not stop.is_set():
        with contextlib.suppress(OSError):
            os.rename(work / "sub", work / "sub_real")
            os.rename(work / "link", work / "sub")
            os.rename(work / "sub", work / "link")
            os.rename(work / "sub_real", work / "sub")


async def test_a_directory_swapped_for_a_symlink_never_leaks_outside_content(
    registry: ToolRegistry, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("SECRET outside\n")
    (work / "sub").mkdir()
    (work / "sub" / "f.txt").write_text("inside\n")
    (work / "link").symlink_to(outside)
    stop = threading.Event()
    swapper = threading.Thread(target=swap_forever, args=(work, stop), daemon=True)
    swapper.start()
    seen: list[str] = []
    try:
        for _ in range(400):
            try:
                seen.append(text(await bounded(call(registry, "read_file", path="sub/f.txt"))))
            except ToolError as error:
                seen.append(f"error: {error}")
    finally:
        stop.set()
        swapper.join(timeout=BOUNDED)
    assert not [s for s in seen if "SECRET" in s]
    assert any("inside" in s for s in seen), "the read worked at least once"


def test_print_mode_writing_to_a_fifo_ends_in_one_line(
    fake_provider: FakeProvider, work: Path, tmp_path: Path, fifo: Path
) -> None:
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "pipe", "content": "x"})]),
        Reply(text="could not"),
    )
    for allow in ([], ["--allow-tools", "write_file"]):
        result = tangents(work, tmp_path / "t.db", fake_provider, "-p", "write", *allow)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        [sent] = tool_results(fake_provider.last_request.body)
        assert sent["is_error"] and "not a regular file" in sent["content"][0]["text"]
        fake_provider.script(
            Reply(tool_calls=[ToolCall("write_file", {"path": "pipe", "content": "x"})]),
            Reply(text="could not"),
        )
    assert fifo.is_fifo()


async def test_a_slow_diff_leaves_the_event_loop_free(registry: ToolRegistry, work: Path) -> None:
    """Every other line changed: difflib needs about 19 s for 12,000 lines here."""
    (work / "old.txt").write_text("".join(f"line {i}\n" for i in range(12_000)))
    new = "".join(f"line {i}\n" if i % 2 else f"changed {i}\n" for i in range(12_000))
    tool = registry.get("write_file")
    assert tool is not None
    async with ticking() as ticks:
        preview = await bounded(
            tool.make_preview({"path": "old.txt", "content": new}, registry.context())
        )
    assert preview.startswith("write_file old.txt (replace,")
    assert "+changed 0" in preview
    assert longest_gap(ticks) < 3.0, "the event loop kept running"


async def test_search_text_skips_a_fifo_without_waiting_on_it(
    registry: ToolRegistry, fifo: Path
) -> None:
    result = text(await bounded(call(registry, "search_text", pattern="hello")))
    assert result.splitlines()[0] == "notes.txt:1: hello"
    assert "stopped after" not in result
