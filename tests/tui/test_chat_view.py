"""The chat view shows every kind of entry, safely: markup stays literal, escapes are stripped."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input, Markdown

from core.sessions.content import TextContent, ThinkingContent, ToolCallContent
from core.sessions.messages import Message
from tests.tui.snapshot_apps.chat_data import (
    EntryMaker,
    assistant,
    branch_summary,
    compaction,
    custom,
    model_change,
    tool_result,
    user,
)
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.chat_view import ChatView
from tui.widgets.markers import BranchSummaryMarker, CompactionMarker, ModelChangeLine, NoteLine
from tui.widgets.message_widget import MessageWidget
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard
from tui.widgets.user_message import UserMessage

MARKUP = [
    "[/INST]",
    "[bold]b[/bold]",
    "[link=https://x.example]l[/link]",
    "[@click=app.quit]q",
    "[red",
]
ESCAPES = "\x1b[31mRED\x1b[0m \x1b]8;;https://evil.example\x07LINK\x1b]8;;\x07 \x07BEL \x9b2J"


class ChatTestApp(App[None]):
    def __init__(self, **kwargs: object) -> None:
        super().__init__()
        self.kwargs = kwargs
        self.retries: list[str | None] = []
        self.errors: list[str] = []

    def compose(self) -> ComposeResult:
        yield ChatView(image_mode="halfcell", **self.kwargs)  # type: ignore[arg-type]
        yield Input(id="input")

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    def on_assistant_message_retry_requested(self, event: AssistantMessage.RetryRequested) -> None:
        self.retries.append(event.entry_id)

    def on_chat_view_error_shown(self, event: ChatView.ErrorShown) -> None:
        self.errors.append(event.error)


def screen_text(app: App) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def all_path() -> list:
    make = EntryMaker()
    call = ToolCallContent("call_1", "read_file", {"path": "a.txt"})
    return [
        make(Message(role="system", content=(TextContent("You are terse."),))),
        make(model_change("demo/model", "low")),
        make(user("hello")),
        make(
            assistant("Hi **there**", thinking="think first", calls=(call,), stop_reason="tool_use")
        ),
        make(tool_result("call_1", "file contents here")),
        make(custom("context trimmed", kind="notice")),
        make(compaction("## Goal\nSummarized goal", first_kept_id="e000003", tokens=12345)),
        make(branch_summary("The user tried another approach")),
        make(user("after")),
    ]


async def test_each_entry_kind_has_its_row() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 60)) as pilot:
        entries = all_path()
        await app.chat.set_entries(entries)
        await pilot.pause()
        rows = app.chat.message_widgets
        assert [type(row) for row in rows] == [
            NoteLine,
            ModelChangeLine,
            UserMessage,
            AssistantMessage,
            NoteLine,
            CompactionMarker,
            BranchSummaryMarker,
            UserMessage,
        ]
        # The tool result has no row: it is inside the card of its call.
        assert app.chat.row_count == len(entries) - 1
        card = app.query_one(ToolCallCard)
        assert card.result_text == "file contents here"
        assert [row.entry_id for row in rows] == [e.id for e in entries if e.id != "e000005"]
        assert all(row.can_focus for row in rows)
        text = screen_text(app)
        for expected in (
            "system: You are terse.",
            "model: demo/model · thinking: low",
            "hello",
            "Hi there",
            "▸ Thinking · think first",
            "⚙ read_file ✓",
            '"path": "a.txt"',
            "file contents here",
            "notice: context trimmed",
            "compacted 12,345 tokens",
            "branch summary · The user tried another approach",
            "after",
        ):
            assert expected in text, expected
        # Rows above the compaction's first kept entry are dimmed.
        dimmed = [row.entry_id for row in rows if row.has_class("-compacted")]
        assert dimmed == ["e000001", "e000002"]


async def test_markup_looking_text_is_shown_literally() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(120, 60)) as pilot:
        make = EntryMaker()
        markup = " ".join(MARKUP)
        call = ToolCallContent("c1", f"tool{MARKUP[1]}", {"arg": markup})
        await app.chat.set_entries(
            [
                make(model_change(f"m{MARKUP[3]}")),
                make(user(f"user {markup}")),
                make(assistant(f"reply {markup}", thinking=f"thought {markup}", calls=(call,))),
                make(tool_result("c1", f"result {markup}")),
                make(custom(f"note {markup}", kind=MARKUP[0])),
                make(user("next")),
                make(assistant("", stop_reason="error", error=f"error {markup}")),
            ]
        )
        await pilot.pause()
        app.query_one(ThinkingBlock).expanded = True
        await pilot.pause()
        text = screen_text(app)
        for prefix in ("user", "reply", "thought", "result", "note"):
            assert f"{prefix} {markup}" in text, prefix
        assert "error [/INST] [bold]b[/bold]" in text
        assert "tool[bold]b[/bold]" in text
        assert f"m{MARKUP[3]}" in text
        assert app.is_running


async def test_escape_sequences_are_stripped_everywhere() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(120, 60)) as pilot:
        make = EntryMaker()
        call = ToolCallContent("c1", f"tool{ESCAPES}", {"arg": ESCAPES})
        await app.chat.set_entries(
            [
                make(model_change(f"model{ESCAPES}")),
                make(user(f"user {ESCAPES}")),
                make(assistant(f"reply {ESCAPES}", thinking=f"thought {ESCAPES}", calls=(call,))),
                make(tool_result("c1", f"result {ESCAPES}")),
                make(custom(f"note {ESCAPES}")),
                make(assistant("", stop_reason="error", error=f"error {ESCAPES}")),
            ]
        )
        await pilot.pause()
        app.query_one(ThinkingBlock).expanded = True
        await pilot.pause()
        text = screen_text(app)
        for prefix in ("user", "reply", "thought", "result", "note", "error"):
            assert f"{prefix} RED LINK BEL" in text, prefix
        for control in ("\x1b", "\x07", "\x9b"):
            assert control not in text
        # Tool arguments are shown as JSON, which spells control characters out.
        assert '"arg": "\\u001b[31mRED' in text
        for markdown in app.query(Markdown):
            assert "\x1b" not in markdown.source and "\x07" not in markdown.source
        card = app.query_one(ToolCallCard)
        assert "\x1b" not in card.arguments_text and "\x1b" not in card.result_text


async def test_thinking_expands_per_block_and_hides_globally() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries(
            [
                make(user("q1")),
                make(assistant("a1", thinking="first line one\nsecond line one")),
                make(user("q2")),
                make(assistant("a2", thinking="first line two\nsecond line two")),
            ]
        )
        await pilot.pause()
        first, second = app.query(ThinkingBlock)
        text = screen_text(app)
        assert "▸ Thinking · first line one" in text and "second line one" not in text

        await pilot.click(first)
        await pilot.pause()
        assert first.expanded and not second.expanded
        text = screen_text(app)
        assert "second line one" in text and "second line two" not in text

        second.focus()
        await pilot.press("enter")
        assert second.expanded
        await pilot.press("enter")
        assert not second.expanded

        app.chat.show_thinking = False
        await pilot.pause()
        assert not first.display and not second.display
        assert "Thinking" not in screen_text(app)
        # Rows mounted while thinking is hidden hide theirs too.
        await app.chat.append_entry(make(assistant("a3", thinking="hidden thought")))
        await pilot.pause()
        third = app.query(ThinkingBlock).last()
        assert third.styles.display == "none"
        assert "hidden thought" not in screen_text(app)

        app.chat.show_thinking = True
        await pilot.pause()
        assert all(block.display for block in app.query(ThinkingBlock))
        assert "▸ Thinking · hidden thought" in screen_text(app)


async def test_show_thinking_false_from_the_start() -> None:
    app = ChatTestApp(show_thinking=False)
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(assistant("answer", thinking="secret plan"))])
        await pilot.pause()
        assert "secret plan" not in screen_text(app)
        assert "answer" in screen_text(app)


async def test_tool_card_collapses_long_results_and_expands() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 60)) as pilot:
        make = EntryMaker()
        listing = "\n".join(f"line {n}" for n in range(40))
        arguments = {f"key{n}": n for n in range(10)}
        await app.chat.set_entries(
            [
                make(assistant("", calls=(ToolCallContent("c1", "ls", arguments),))),
                make(tool_result("c1", listing)),
            ]
        )
        await pilot.pause()
        card = app.query_one(ToolCallCard)
        text = screen_text(app)
        assert "line 5" in text and "line 6" not in text and "line 39" not in text
        assert "more lines · enter to expand" in text
        assert '"key2": 2' in text and '"key9"' not in text

        card.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert card.expanded
        text = screen_text(app)
        assert "line 39" in text and '"key9": 9' in text and "more lines" not in text

        await pilot.click(card)
        await pilot.pause()
        assert not card.expanded
        assert "line 39" not in screen_text(app)


async def test_tool_results_appended_later_go_into_their_cards() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        calls = (ToolCallContent("c1", "one", {}), ToolCallContent("c2", "two", {}))
        await app.chat.set_entries([make(user("go")), make(assistant("", calls=calls))])
        rows = app.chat.row_count
        await app.chat.append_entry(make(tool_result("c1", "first result")))
        await app.chat.append_entry(make(tool_result("c2", "boom", is_error=True)))
        # A result whose call is not on the path gets a row of its own.
        await app.chat.append_entry(make(tool_result("c9", "orphan result")))
        await pilot.pause()
        assert app.chat.row_count == rows + 1
        one, two, orphan = app.query(ToolCallCard)
        assert one.result_text == "first result" and not one.has_class("-error")
        assert two.result_text == "boom" and two.has_class("-error")
        assert orphan.result_text == "orphan result"
        text = screen_text(app)
        assert "⚙ two ✗ error" in text and "orphan result" in text


async def test_how_a_reply_ended_is_shown() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        entries = [
            make(assistant("part", stop_reason="aborted")),
            make(assistant("half", stop_reason="interrupted")),
            make(assistant("long", stop_reason="length")),
            make(assistant("", stop_reason="error", error="the API key was rejected")),
        ]
        await app.chat.set_entries(entries)
        await pilot.pause()
        text = screen_text(app)
        assert "■ stopped" in text
        assert "interrupted (connection lost)" in text
        assert "cut off at the output token limit" in text
        assert "✗ error: the API key was rejected · press ctrl+r to retry" in text
        status = app.chat.message_widgets[-1].query_one(".message-status")
        await pilot.click(status)
        await pilot.pause()
        assert app.retries == [entries[-1].id]


async def test_compaction_marker_expands_and_dims_what_it_replaced() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        first = [make(user("old question")), make(assistant("old answer")), make(user("kept"))]
        await app.chat.set_entries(first)
        assert not any(row.has_class("-compacted") for row in app.chat.message_widgets)
        await app.chat.append_entry(make(compaction("## Goal\nThe summary text", "e000003", 2000)))
        await pilot.pause()
        dimmed = [row.entry_id for row in app.chat.message_widgets if row.has_class("-compacted")]
        assert dimmed == ["e000001", "e000002"]
        marker = app.query_one(CompactionMarker)
        assert "The summary text" not in screen_text(app)
        marker.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert marker.expanded and "The summary text" in screen_text(app)


async def test_branch_summary_marker_expands() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(branch_summary("Tried X.\n\nIt failed because of Y."))])
        await pilot.pause()
        marker = app.query_one(BranchSummaryMarker)
        assert "It failed because of Y." not in screen_text(app)
        await pilot.click(marker)
        await pilot.pause()
        assert "It failed because of Y." in screen_text(app)


async def test_focus_moves_between_messages_and_restyles_only_the_row() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries(
            [make(user("one")), make(assistant("two " * 50)), make(user("three"))]
        )
        await pilot.pause()
        rows = app.chat.message_widgets
        styled: list[object] = []
        original = app.stylesheet.update_nodes

        def counting(nodes, animate=False):  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            styled.extend(nodes)
            return original(nodes, animate=animate)

        app.stylesheet.update_nodes = counting  # type: ignore[method-assign]
        rows[2].focus()
        await pilot.pause()
        await pilot.press("up")
        await pilot.pause()
        assert app.focused is rows[1]
        # Focus and blur restyle the two rows themselves, not the Markdown inside.
        assert all(isinstance(node, (MessageWidget, ChatView, Input)) for node in styled), styled
        await pilot.press("up")
        assert app.focused is rows[0]
        await pilot.press("down", "down")
        assert app.focused is rows[2]


async def test_focus_entry_scrolls_to_and_focuses_it() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        entries = [make(user(f"message {n}")) for n in range(50)]
        await app.chat.set_entries(entries)
        await pilot.pause()
        widget = await app.chat.focus_entry("e000003")
        await pilot.pause()
        assert widget is not None and app.focused is widget
        assert widget.entry_id == "e000003"
        assert "message 2" in screen_text(app)


async def test_thinking_and_signature_blocks_render_from_entries() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        message = Message(
            role="assistant",
            content=(ThinkingContent("opaque", redacted=True), TextContent("visible")),
            model="m",
        )
        await app.chat.set_entries([make(message)])
        await pilot.pause()
        text = screen_text(app)
        assert "Thinking (redacted)" in text and "opaque" not in text and "visible" in text


async def test_a_user_message_of_text_alone_is_one_widget_until_it_has_alternatives() -> None:
    """The row paints its own text (one widget a row, not two); when the bar of
    its alternatives comes, the text moves into a line below the bar, shown once."""
    from core.sessions.content import ImageContent
    from tui.widgets._context import BranchInfo
    from tui.widgets.branch_bar import BranchBar

    info: dict[str, BranchInfo] = {}
    app = ChatTestApp(branch_info=info.get)
    async with app.run_test(size=(60, 16)) as pilot:
        make = EntryMaker()
        question = make(user("where to in Lisbon?"))
        picture = make(user("and this one", [ImageContent("image/png", "d" * 64, 10, 10)]))
        await app.chat.set_entries([question, picture])
        await pilot.pause()
        asked, shown = app.chat.message_widgets
        assert not asked.children and screen_text(app).count("where to in Lisbon?") == 1
        assert [type(c).__name__ for c in shown.children] == ["Static", "ImageView"]
        info[question.id] = BranchInfo(0, 2)
        app.chat.refresh_branch_info()
        await pilot.pause()
        assert [type(child) for child in asked.children] == [BranchBar, type(shown.children[0])]
        lines = screen_text(app).splitlines()
        [bar] = [n for n, line in enumerate(lines) if "1/2" in line]
        [text] = [n for n, line in enumerate(lines) if "where to in Lisbon?" in line]
        assert text == bar + 1


async def test_a_reply_paints_its_header_until_it_has_alternatives() -> None:
    """The header is the row's first line, painted by the row; when the bar of
    the reply's alternatives comes, the header moves into a line below the bar,
    shown once."""
    from tui.widgets._context import BranchInfo
    from tui.widgets.branch_bar import BranchBar

    info: dict[str, BranchInfo] = {}
    app = ChatTestApp(branch_info=info.get)
    async with app.run_test(size=(60, 16)) as pilot:
        make = EntryMaker()
        answer = make(assistant("Take tram 28.", model="the-model"))
        await app.chat.set_entries([make(user("where to in Lisbon?")), answer])
        await pilot.pause()
        row = app.chat.message_widgets[-1]
        assert list(row.children) == []  # the header and the paragraph: painted by the row
        assert screen_text(app).count("◆ the-model") == 1
        info[answer.id] = BranchInfo(1, 2)
        app.chat.refresh_branch_info()
        await pilot.pause()
        assert [type(c).__name__ for c in row.children] == [
            "BranchBar",
            "Static",
            "SegmentedMarkdown",
        ]
        assert isinstance(row.children[0], BranchBar)
        lines = screen_text(app).splitlines()
        [bar] = [n for n, line in enumerate(lines) if "2/2" in line]
        [header] = [n for n, line in enumerate(lines) if "◆ the-model" in line]
        [text] = [n for n, line in enumerate(lines) if "Take tram 28." in line]
        assert header == bar + 1 and text == header + 1
