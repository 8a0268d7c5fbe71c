"""HTML export in a real headless Chromium: the current branch as a chat,
another branch opened from the tree sidebar and an alternative switched with
the mouse, thinking and tool calls folded, the image decoded, code
highlighted, nothing fetched, and session text shown, never run."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from core.formats.html import to_html
from core.sessions.content import TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from tests.formats.browser import open_page
from tests.formats.sample import sample_session

CHAT = "document.getElementById('chat').innerText"


def _tree_button(text: str) -> str:
    return (
        "Array.prototype.find.call(document.querySelectorAll('nav button'),"
        f" function (b) {{ return b.textContent.indexOf({text!r}) >= 0; }})"
    )


def _write(tmp_path: Path, page: str) -> Path:
    path = tmp_path / "session.html"
    path.write_text(page, encoding="utf-8")
    return path


def test_the_page_is_self_contained() -> None:
    sample = sample_session()
    page = to_html(sample.info, sample.entries, sample.labels, sample.blobs)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "</textarea>" not in page
    # A folded tool call says what it does: its name and first text argument.
    assert "<summary>Tool call: read_file · notes.md</summary>" in page


async def test_branches_and_alternatives_in_a_real_browser(tmp_path: Path) -> None:
    sample = sample_session()
    file = _write(tmp_path, to_html(sample.info, sample.entries, sample.labels, sample.blobs))
    async with open_page(file, tmp_path / "profile") as page:
        chat = await page.evaluate(CHAT)
        assert "Pines <script>alert(1)</script> like sand." in chat
        assert "Plant oaks?" in chat and "Birches" not in chat
        assert "You are welcome" not in chat, "the leaf is a4, not the end of its branch"
        # Folded: thinking, tool call and result; the image decoded; code highlighted.
        assert await page.evaluate(
            "Array.prototype.every.call(document.querySelectorAll('#chat details'),"
            " function (d) { return !d.open; })"
        )
        assert (
            await page.evaluate("document.querySelectorAll('#chat details.thinking').length") == 1
        )
        assert await page.evaluate("document.querySelector('#chat img').naturalWidth") == 3
        assert (
            await page.evaluate("document.querySelectorAll('#chat .md pre code span').length") > 0
        )
        assert await page.evaluate("performance.getEntriesByType('resource').length") == 0

        await page.click(_tree_button("Birches are fine anywhere."))
        chat = await page.evaluate(CHAT)
        assert "And birches?" in chat and "Birches are fine anywhere." in chat
        assert "Pines" not in chat and "Birches like damp." not in chat
        alternatives = "document.getElementById('e-' + {!r}).querySelector('.alts').textContent"
        assert await page.evaluate(alternatives.format(sample.ids["a3b"])) == "\u20392/2\u203a"

        await page.click(f"document.querySelector('#e-{sample.ids['a3b']} .alts button.previous')")
        chat = await page.evaluate(CHAT)
        assert "Birches like damp." in chat and "Birches are fine anywhere." not in chat
        assert await page.evaluate(alternatives.format(sample.ids["a3"])) == "\u20391/2\u203a"

        await page.click(_tree_button("You are welcome"))
        chat = await page.evaluate(CHAT)
        assert chat.rstrip().endswith("You are welcome </textarea>")
        assert await page.evaluate("document.querySelector('nav li.current').textContent") == (
            "assistant You are welcome </textarea>"
        )


async def test_hostile_text_is_shown_never_run(tmp_path: Path) -> None:
    sample = sample_session()
    hostile = [
        "<script>window.pwned = 1</script>",
        '<img src=x onerror="window.pwned = 2">',
        "</textarea><textarea>",
        "[click](javascript:window.pwned=3)",
        '"><svg onload="window.pwned=4">',
        "rm -rf ~ \u202e# nothing to see",
    ]
    entries = list(sample.entries)
    parent = sample.info.leaf_id
    for number, text in enumerate(hostile):
        role = "user" if number % 2 else "assistant"
        entry = Entry(
            f"019a0000-0000-7000-8000-0000000001{number:02d}",
            parent,
            sample.info.id,
            "message",
            f"2026-03-01T10:01:{number:02d}.000000Z",
            Message(role=role, content=(TextContent(text),)),
        )
        entries.append(entry)
        parent = entry.id
    info = replace(sample.info, leaf_id=parent, title='<b onmouseover="x">Title</b>')
    file = _write(tmp_path, to_html(info, entries, {parent: "<i>label</i>"}, sample.blobs))
    async with open_page(file, tmp_path / "profile") as page:
        assert await page.evaluate("document.querySelectorAll('#chat a').length") == 0
        await page.click(_tree_button("<img src=x"))
        assert await page.evaluate("typeof window.pwned") == "undefined"
        chat = await page.evaluate(CHAT)
        for text in hostile[:3] + ['"><svg onload="window.pwned=4">', "<i>label</i>"]:
            assert text in chat
        assert await page.evaluate("document.title") == '<b onmouseover="x">Title</b>'
        assert await page.evaluate("document.querySelectorAll('svg, textarea, b, i').length") == 0
        assert "rm -rf ~ \u27e8U+202E\u27e9# nothing to see" in chat and "\u202e" not in chat


async def test_long_lines_scroll_in_their_block_not_the_page(tmp_path: Path) -> None:
    """A long code line, a long word and a wide table stay inside the chat
    column (the code block scrolls by itself); the page never scrolls sideways."""
    sample = sample_session()
    wide = (
        "```\n"
        + "x = 1; " * 120
        + "\n```\n\n"
        + "/very/long/" * 40
        + "path\n\n"
        + "| "
        + " | ".join(f"column{n}" for n in range(40))
        + " |\n"
        + "|"
        + "---|" * 40
        + "\n"
    )
    entry = Entry(
        "019a0000-0000-7000-8000-000000000200",
        sample.info.leaf_id,
        sample.info.id,
        "message",
        "2026-03-01T10:02:00.000000Z",
        Message(role="assistant", content=(TextContent(wide),)),
    )
    info = replace(sample.info, leaf_id=entry.id)
    page_text = to_html(info, [*sample.entries, entry], sample.labels, sample.blobs)
    file = _write(tmp_path, page_text)
    async with open_page(file, tmp_path / "profile") as page:
        assert "x = 1;" in await page.evaluate(CHAT)
        assert await page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        code = f"document.querySelector('#e-' + {entry.id!r} + ' pre')"
        assert await page.evaluate(f"{code}.scrollWidth > {code}.clientWidth")
