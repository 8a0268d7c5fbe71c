"""The built-in tools on real files and real processes: scoping to the working
directory, bounded reads and output, images as blobs, diffs, process groups."""

from __future__ import annotations

import asyncio
import io
import json
import os
import struct
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from core.sessions.content import ImageContent, TextContent, ToolCallContent
from core.settings import load_settings
from core.tools import Roots, ToolError, ToolOutput, ToolRegistry, builtin_tools, checked_arguments
from core.tools.builtin import COMMAND_OUTPUT_CAP, READ_LINES
from storage import SqliteStore
from tests.tools.procs import still_alive


async def call(
    registry: ToolRegistry, name: str, store: SqliteStore | None = None, **arguments: Any
) -> ToolOutput:
    tool = registry.get(name)
    assert tool is not None
    checked = checked_arguments(ToolCallContent("c1", name, arguments, json.dumps(arguments)), tool)
    out = await tool.run(checked, registry.context(store))
    return ToolOutput.text(out) if isinstance(out, str) else out


def text(output: ToolOutput) -> str:
    return "\n".join(c.text for c in output.content if isinstance(c, TextContent))


# --- scoping ---------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("top secret\n")
    return directory


@pytest.mark.parametrize("tool", ["read_file", "list_directory", "search_text", "write_file"])
async def test_dotdot_absolute_and_symlink_escapes_are_refused(
    registry: ToolRegistry, work: Path, outside: Path, tool: str
) -> None:
    (work / "link").symlink_to(outside / "secret.txt")
    (work / "linkdir").symlink_to(outside)
    extra = (
        {"pattern": "secret"}
        if tool == "search_text"
        else {"content": "x"}
        if tool == "write_file"
        else {}
    )
    cases = {
        "../outside/secret.txt": "'..' leads outside",
        str(outside / "secret.txt"): "it is outside",
        "/etc/passwd": "it is outside",
        "link": "symbolic link",
        "linkdir/secret.txt": "symbolic link",
        "sub/../../outside": "'..' leads outside",
    }
    for path, why in cases.items():
        with pytest.raises(ToolError) as refused:
            await call(registry, tool, path=path, **extra)
        message = str(refused.value)
        assert message.startswith("refused") and why in message, (path, message)
        assert str(work) in message and "--extra-root" in message
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_paths_inside_are_fine_even_through_dotdot_and_inner_links(
    registry: ToolRegistry, work: Path
) -> None:
    (work / "sub").mkdir()
    (work / "inner").symlink_to(work / "notes.txt")
    assert "hello" in text(await call(registry, "read_file", path="sub/../notes.txt"))
    assert "hello" in text(await call(registry, "read_file", path="inner"))
    assert "hello" in text(await call(registry, "read_file", path=str(work / "notes.txt")))


async def test_extra_roots_widen_the_scope(work: Path, outside: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'extra_roots = ["{outside}"]\n')
    settings = load_settings(config)
    registry = ToolRegistry.default(settings, cwd=work)
    assert "top secret" in text(await call(registry, "read_file", path="../outside/secret.txt"))
    with pytest.raises(ToolError, match="allowed directories"):
        await call(registry, "read_file", path="/etc/passwd")


async def test_search_skips_links_leading_outside(
    registry: ToolRegistry, work: Path, outside: Path
) -> None:
    (work / "link.txt").symlink_to(outside / "secret.txt")
    (work / "out").symlink_to(outside)
    result = text(await call(registry, "search_text", pattern="secret"))
    assert result.startswith("no matches")


# --- read_file -------------------------------------------------------------------


async def test_read_file_numbers_lines_and_reads_ranges(registry: ToolRegistry, work: Path) -> None:
    (work / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    whole = text(await call(registry, "read_file", path="notes.txt"))
    assert whole == "     1\thello\n     2\tworld"
    part = text(await call(registry, "read_file", path="long.txt", start_line=10, end_line=12))
    assert part.splitlines() == [
        "    10\tline 10",
        "    11\tline 11",
        "    12\tline 12",
        "[lines 10-12 of 3000 in long.txt; continue with start_line=13]",
    ]
    default = text(await call(registry, "read_file", path="long.txt")).splitlines()
    assert len(default) == READ_LINES + 1 and default[-1].startswith(
        f"[lines 1-{READ_LINES} of 3000"
    )
    with pytest.raises(ToolError, match="past the end"):
        await call(registry, "read_file", path="notes.txt", start_line=9)


async def test_read_file_refuses_directories_binaries_and_missing_files(
    registry: ToolRegistry, work: Path
) -> None:
    (work / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(ToolError, match="binary file"):
        await call(registry, "read_file", path="blob.bin")
    with pytest.raises(ToolError, match="is a directory; use list_directory"):
        await call(registry, "read_file", path=".")
    with pytest.raises(ToolError, match="no such file"):
        await call(registry, "read_file", path="missing.txt")


async def test_read_file_cuts_huge_lines_and_output(registry: ToolRegistry, work: Path) -> None:
    (work / "wide.txt").write_text("x" * 50_000 + "\n" + ("y" * 1000 + "\n") * 500)
    result = text(await call(registry, "read_file", path="wide.txt"))
    assert "line cut" in result and len(result) < 70_000
    assert "continue with start_line=" in result.splitlines()[-1]


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (0, 128, 255)).save(buffer, format="PNG")
    return buffer.getvalue()


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG claiming huge dimensions: decoding it would cost gigabytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


async def test_read_file_returns_images_as_blobs(
    registry: ToolRegistry, work: Path, store: SqliteStore
) -> None:
    (work / "pic.png").write_bytes(_png(3, 2))
    output = await call(registry, "read_file", store, path="pic.png")
    [image] = [c for c in output.content if isinstance(c, ImageContent)]
    assert (image.media_type, image.width, image.height) == ("image/png", 3, 2)
    blob = await store.get_blob(image.sha256)
    assert (
        blob is not None
        and blob.data == (work / "pic.png").read_bytes()
        and (blob.width, blob.height) == (3, 2)
    )


async def test_image_decoding_is_bounded(
    registry: ToolRegistry, work: Path, store: SqliteStore
) -> None:
    (work / "bomb.png").write_bytes(_png_header_only(100_000, 100_000))
    with pytest.raises(ToolError, match="too many pixels"):
        await call(registry, "read_file", store, path="bomb.png")
    (work / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    with pytest.raises(ToolError, match="not a readable"):
        await call(registry, "read_file", store, path="bad.png")


# --- list_directory and search_text ----------------------------------------------


async def test_list_directory(registry: ToolRegistry, work: Path) -> None:
    (work / "src").mkdir()
    (work / "link").symlink_to("notes.txt")
    listing = text(await call(registry, "list_directory")).splitlines()
    assert listing == ["./ (3 entries)", "link -> notes.txt", "notes.txt  12 bytes", "src/"]
    with pytest.raises(ToolError, match="is a file"):
        await call(registry, "list_directory", path="notes.txt")


async def test_search_text_is_bounded(registry: ToolRegistry, work: Path) -> None:
    (work / "many.txt").write_text("match me\n" * 500)
    (work / "bin.dat").write_bytes(b"\x00match me")
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("match me\n")
    result = text(await call(registry, "search_text", pattern="match", max_results=20)).splitlines()
    assert len([line for line in result if line.startswith("many.txt:")]) == 20
    assert result[-2] == "[20 matches in 1 files]" and "stopped at 20 matches" in result[-1]
    assert not any(line.startswith((".git", "bin.dat")) for line in result)
    assert "notes.txt:1: hello" in text(
        await call(registry, "search_text", pattern="HELLO", ignore_case=True)
    )
    assert text(await call(registry, "search_text", pattern="hello", glob="*.py")).startswith(
        "no matches"
    )
    with pytest.raises(ToolError, match="invalid regular expression"):
        await call(registry, "search_text", pattern="(unclosed")


# --- write_file ------------------------------------------------------------------


async def test_write_file_creates_and_replaces(registry: ToolRegistry, work: Path) -> None:
    os.chmod(work / "notes.txt", 0o640)
    assert text(await call(registry, "write_file", path="notes.txt", content="new\n")).startswith(
        "replaced notes.txt"
    )
    assert (work / "notes.txt").read_text() == "new\n"
    assert (work / "notes.txt").stat().st_mode & 0o777 == 0o640
    assert text(await call(registry, "write_file", path="a/b/c.txt", content="deep")).startswith(
        "created a/b/c.txt"
    )
    assert (work / "a" / "b" / "c.txt").read_text() == "deep"
    assert [p.name for p in (work / "a" / "b").iterdir()] == ["c.txt"], "no temporary file left"
    with pytest.raises(ToolError, match="is a directory"):
        await call(registry, "write_file", path="a", content="x")


async def test_write_file_preview_is_a_unified_diff(registry: ToolRegistry, work: Path) -> None:
    tool = registry.get("write_file")
    preview = await tool.make_preview(
        {"path": "notes.txt", "content": "hello\nthere\n"}, registry.context()
    )
    assert preview.splitlines() == [
        "write_file notes.txt (replace, 12 bytes)",
        "--- a/notes.txt",
        "+++ b/notes.txt",
        "@@ -1,2 +1,2 @@",
        " hello",
        "-world",
        "+there",
    ]
    same = await tool.make_preview(
        {"path": "notes.txt", "content": "hello\nworld\n"}, registry.context()
    )
    assert same == "write_file notes.txt: no changes"


# --- run_command -----------------------------------------------------------------


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_run_command_output_and_exit_code(registry: ToolRegistry, work: Path) -> None:
    ok = await call(registry, "run_command", command="pwd; echo oops >&2")
    assert not ok.is_error and text(ok) == f"{work}\noops\n[exit code 0]"
    failed = await call(registry, "run_command", command="exit 3")
    assert failed.is_error and text(failed).endswith("[exit code 3]")


async def test_run_command_hides_api_keys(
    registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_API_KEY", "sk-secret")
    monkeypatch.setenv("HARMLESS", "visible")
    result = text(
        await call(registry, "run_command", command="echo ${SOME_API_KEY:-unset} $HARMLESS")
    )
    assert result.startswith("unset visible")


async def test_run_command_timeout_kills_the_whole_process_group(
    registry: ToolRegistry, work: Path
) -> None:
    command = "sh -c 'sleep 30 & echo $! > bg.pid; echo $$ > fg.pid; sleep 30'"
    started = time.monotonic()
    result = await call(registry, "run_command", command=command, timeout_seconds=1)
    assert time.monotonic() - started < 10
    assert result.is_error and "timed out after 1 s" in text(result)
    pids = [int((work / name).read_text()) for name in ("bg.pid", "fg.pid")]
    assert still_alive(pids, 30) == [], pids


async def test_run_command_leaves_no_background_process(registry: ToolRegistry, work: Path) -> None:
    started = time.monotonic()
    result = await call(
        registry, "run_command", command="sleep 30 & echo $! > bg.pid; echo started"
    )
    assert time.monotonic() - started < 10, "a child holding the pipe does not hang the call"
    assert text(result) == "started\n[exit code 0]"
    pid = int((work / "bg.pid").read_text())
    assert still_alive([pid], 30) == []


async def test_run_command_output_is_capped(registry: ToolRegistry) -> None:
    result = text(
        await call(
            registry,
            "run_command",
            command="head -c 500000 /dev/zero | tr '\\0' x; echo; echo THE END",
        )
    )
    assert len(result) < COMMAND_OUTPUT_CAP + 200
    assert "bytes of output omitted" in result
    assert result.startswith("xxxx") and result.endswith("THE END\n[exit code 0]")


async def test_run_command_cancelled_kills_the_group(registry: ToolRegistry, work: Path) -> None:
    task = asyncio.create_task(call(registry, "run_command", command="echo $$ > fg.pid; sleep 30"))
    for _ in range(250):
        if (work / "fg.pid").exists() and (work / "fg.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(int((work / "fg.pid").read_text()))


async def test_registry_names_and_specs(work: Path) -> None:
    registry = ToolRegistry(builtin_tools(), roots=Roots.create(work))
    specs = {s.name: s for s in registry.specs()}
    assert set(specs) == {"read_file", "list_directory", "search_text", "write_file", "run_command"}
    assert specs["read_file"].parameters["required"] == ["path"]
    assert [t.name for t in registry.tools if t.needs_approval] == ["write_file", "run_command"]
