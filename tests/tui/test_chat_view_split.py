"""Pure parts of the chat view: where streamed Markdown is cut, and how entries become rows."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.content import ToolCallContent
from core.sessions.entries import Compaction, Entry
from tests.strategies import conversation_paths
from tests.tui.snapshot_apps.chat_data import (
    EntryMaker,
    assistant,
    compaction,
    reply_tokens,
    tool_result,
    user,
)
from tui.widgets._markdown_split import Cut, MarkdownSplitter, split_markdown, starts_paragraph
from tui.widgets._text import clip_lines, human_size, one_line, plain
from tui.widgets._transcript import Transcript

LINES = st.sampled_from(
    [
        "Some words in a paragraph.",
        "",
        "",
        "```python",
        "```",
        "~~~",
        "    indented code",
        "- a list item",
        "1. numbered",
        "# Heading",
        "Title",
        "-----",
        "=====",
        "> quoted",
        "| a | b |",
        "x = 1",
        "<div>",
    ]
)


def stream(text: str, sizes: list[int], segment_chars: int) -> list[str]:
    """Feed ``text`` in pieces; return the segments as a display would end up with them."""
    splitter = MarkdownSplitter(segment_chars)
    segments: list[str] = []
    live = ""
    position = 0
    for size in sizes + [len(text)]:
        piece = text[position : position + size]
        position += size
        for operation in splitter.feed(piece):
            if isinstance(operation, Cut):
                assert live == operation.finished + operation.carried
                segments.append(operation.finished)
                live = operation.carried
            else:
                live += operation
        if position >= len(text):
            break
    segments.append(live)
    return segments


def fence_open_at_end(text: str) -> bool:
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if fence is None and stripped.startswith(("```", "~~~")) and indent < 4:
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence) and stripped.strip("`~") == "":
            fence = None
    return fence is not None


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(LINES, max_size=120),
    sizes=st.lists(st.integers(1, 60), max_size=80),
    limit=st.integers(1, 200),
)
def test_streaming_in_any_pieces_cuts_where_the_whole_text_is_cut(lines, sizes, limit) -> None:
    text = "\n".join(lines)
    whole = split_markdown(text, limit)
    assert "".join(whole) == text
    assert stream(text, sizes, limit) == whole
    for previous, segment in zip(whole, whole[1:], strict=False):
        # Cut on a blank line, before a plain paragraph, outside any code fence.
        assert (
            previous.endswith("\n")
            and previous.rstrip(" \t").endswith("\n\n")
            or previous.endswith("\n\n")
        )
        assert starts_paragraph(segment.split("\n", 1)[0])
        assert not fence_open_at_end(previous)
        assert len(previous) >= limit


def test_a_long_reply_is_cut_about_every_segment_size() -> None:
    text = "".join(reply_tokens(20_000))
    segments = split_markdown(text)
    assert len(segments) > 15
    assert all(4_000 <= len(segment) < 6_000 for segment in segments[:-1])


def test_no_cut_inside_a_fence_or_before_a_setext_heading() -> None:
    fence = "```\n" + "code\n\nParagraph-looking line in code\n\n" * 50 + "```\n"
    assert split_markdown(fence, 10) == [fence]
    setext = "x" * 20 + "\n\nTitle\n-----\n\nbody\nmore\n"
    assert split_markdown(setext, 10) == ["x" * 20 + "\n\nTitle\n-----\n\n", "body\nmore\n"]
    # The line after a paragraph's first line must be known before cutting.
    assert split_markdown("x" * 20 + "\n\nbody\n", 10) == ["x" * 20 + "\n\nbody\n"]


def test_text_helpers() -> None:
    assert one_line("\n\n  first   line \x1b[31m\nsecond") == "first line"
    assert one_line("x" * 10, 5) == "xxxx…"
    assert clip_lines("a\nb\nc", 2) == ("a\nb", 1)
    assert human_size(12_345) == "12 KB" and human_size(999) == "999 B"
    assert plain("[bold]x[/bold]\x07").plain == "[bold]x[/bold]"


def test_transcript_puts_results_in_their_calls_row_and_dims_before_compaction() -> None:
    make = EntryMaker()
    call = ToolCallContent("c1", "t", {})
    entries = [
        make(user("q")),
        make(assistant("", calls=(call,))),
        make(tool_result("c1", "r")),
        make(tool_result("zz", "orphan")),
        make(compaction("summary", "e000002", 100)),
    ]
    transcript = Transcript.build(entries)
    assert [row.entry.id for row in transcript.rows] == ["e000001", "e000002", "e000004", "e000005"]
    assert transcript.rows[1].results["c1"].text == "r"
    assert transcript.row_index("e000003") == 1
    assert transcript.dim_before == 1
    # Adding the same entry again changes nothing.
    assert transcript.add(entries[0]) == (0, False)


def _grafted(path: list[Entry], tail: list[Entry], at: int) -> list[Entry]:
    """``path[:at]`` then ``tail`` under ``path[at - 1]``, its ids renamed apart
    (its tool call ids are not: they may repeat the first part's)."""
    renamed: list[Entry] = []
    for entry in tail:
        payload = entry.payload
        if isinstance(payload, Compaction) and payload.first_kept_id is not None:
            payload = replace(payload, first_kept_id="x" + payload.first_kept_id)
        parent = renamed[-1].id if renamed else (path[at - 1].id if at else None)
        renamed.append(replace(entry, id="x" + entry.id, parent_id=parent, payload=payload))
    return path[:at] + renamed


def _state(transcript: Transcript, entries: list[Entry]) -> tuple:
    calls = {call.id for entry in entries if entry.message for call in entry.message.tool_calls}
    return (
        [entry.id for entry in transcript.entries],
        [(row.entry.id, dict(row.results), dict(row.outcomes)) for row in transcript.rows],
        {entry.id: transcript.row_index(entry.id) for entry in entries},
        {call: transcript.row_of_call(call) for call in calls},
        transcript.dim_before,
    )


@given(conversation_paths(), conversation_paths(), st.data())
@settings(max_examples=150, deadline=None)
def test_a_transcript_for_another_path_is_the_one_built_for_it(first, tail, data) -> None:
    """Rows shared with the path shown are reused (the cost is what differs),
    and the result is what building the new path from nothing gives."""
    second = _grafted(first, tail, data.draw(st.integers(0, len(first))))
    shown = Transcript.build(first)
    before = _state(shown, first + second)

    moved = shown.for_path(second)

    assert _state(moved, first + second) == _state(Transcript.build(second), first + second)
    assert _state(shown, first + second) == before, "the transcript shown is left as it was"
    back = moved.for_path(first)
    assert _state(back, first + second) == before
