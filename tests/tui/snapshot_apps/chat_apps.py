"""Tiny deterministic apps around one ChatView, for snapshot tests.

Each app fills its chat view in ``prepare`` (awaited by the test's
``run_before``), so the screenshot is taken once everything is rendered.
Run one by hand with ``python tests/tui/snapshot_apps/chat_apps.py NAME``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from core.providers.base import TextDelta  # noqa: E402
from core.sessions.content import ToolCallContent  # noqa: E402
from core.sessions.messages import Usage  # noqa: E402
from tests.tui.snapshot_apps.chat_data import (  # noqa: E402
    BlobShelf,
    EntryMaker,
    assistant,
    chunks,
    model_change,
    png_bytes,
    tool_result,
    user,
)
from tui.widgets.chat_view import ChatView  # noqa: E402
from tui.widgets.thinking_block import ThinkingBlock  # noqa: E402

STREAMED_REPLY = """\
Sure. Here is a small function that reads a file **safely**:

```python
from pathlib import Path

def read_text(path: str) -> str:
    \"\"\"Return the file's text, or an empty string.\"\"\"
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        return ""
```

Call it with any path; a missing file gives `""`. Literal markup stays literal: [bold]not bold[/bold] [@click=app.quit]
"""


class ChatApp(App[None]):
    """A screen with just a chat view."""

    CSS = "Screen { background: $surface; }"

    def __init__(self, *, image_mode: str = "halfcell") -> None:
        super().__init__()
        self.shelf = BlobShelf()
        self.make = EntryMaker()
        self.image_mode = image_mode

    def compose(self) -> ComposeResult:
        yield ChatView(blob_loader=self.shelf.load, image_mode=self.image_mode)  # type: ignore[arg-type]

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    async def prepare(self, pilot: Pilot) -> None:
        """Fill the chat view; wait until everything is shown."""

    async def settle(self, pilot: Pilot) -> None:
        await pilot.pause()
        await self.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()


class StreamedReplyApp(ChatApp):
    """A question, then a reply streamed in small pieces (with a code block) and finished."""

    async def prepare(self, pilot: Pilot) -> None:
        make = self.make
        await self.chat.set_entries([make(user("How do I read a file without crashing?"))])
        reply = self.chat.start_reply("demo/model")
        for piece in chunks(STREAMED_REPLY, 7):
            reply.feed(TextDelta(piece))
        await pilot.pause()
        entry = make(assistant(STREAMED_REPLY, usage=Usage(input_tokens=12, output_tokens=96)))
        await reply.finish(entry)
        await self.settle(pilot)


class ThinkingApp(ChatApp):
    """Two replies with thinking: the first expanded, the second collapsed to a line."""

    async def prepare(self, pilot: Pilot) -> None:
        make = self.make
        thoughts = "The user wants a greeting.\nA short one is best; no need for detail.\nAnswer in one line."
        await self.chat.set_entries(
            [
                make(user("Say hello.")),
                make(assistant("Hello!", thinking=thoughts)),
                make(user("And goodbye?")),
                make(assistant("Goodbye!", thinking="Mirror the previous answer.\nKeep it short.")),
            ]
        )
        await self.settle(pilot)
        self.chat.query(ThinkingBlock).first().expanded = True
        await self.settle(pilot)


class ToolCardApp(ChatApp):
    """A tool call whose long result is collapsed, and a failed call with its error."""

    async def prepare(self, pilot: Pilot) -> None:
        make = self.make
        listing = "\n".join(f"file_{n:02d}.py" for n in range(30))
        calls = (
            ToolCallContent("call_1", "list_files", {"path": "src", "recursive": True}),
            ToolCallContent("call_2", "read_file", {"path": "missing.txt"}),
        )
        await self.chat.set_entries(
            [
                make(user("What is in src?")),
                make(assistant("Let me look.", calls=calls, stop_reason="tool_use")),
                make(tool_result("call_1", listing)),
                make(tool_result("call_2", "FileNotFoundError: missing.txt", is_error=True)),
            ]
        )
        await self.settle(pilot)


class ImageApp(ChatApp):
    """A user message with a picture drawn in half blocks, and a missing image's note."""

    async def prepare(self, pilot: Pilot) -> None:
        make = self.make
        picture = self.shelf.put("a" * 64, png_bytes(160, 80), width=160, height=80)
        missing = self.shelf.put("b" * 64, b"", width=10, height=10)
        del self.shelf.blobs["b" * 64]
        await self.chat.set_entries(
            [
                make(user("What is in this picture?", images=[picture])),
                make(assistant("A yellow disc on a blue background.")),
                make(user("And this one?", images=[missing])),
            ]
        )
        await self.settle(pilot)


class ErrorApp(ChatApp):
    """Replies that ended badly: an error with its retry hint, a stopped and an interrupted one."""

    async def prepare(self, pilot: Pilot) -> None:
        make = self.make
        await self.chat.set_entries(
            [
                make(model_change("anthropic/claude-sonnet", "medium")),
                make(user("Write a poem.")),
                make(assistant("Roses are", stop_reason="aborted")),
                make(user("Again, please.")),
                make(assistant("Violets", stop_reason="interrupted")),
                make(user("Once more.")),
                make(
                    assistant(
                        "",
                        stop_reason="error",
                        error="rate limited by the provider (HTTP 429); retry after 20 s",
                    )
                ),
            ]
        )
        await self.settle(pilot)


APPS = {
    "streamed": StreamedReplyApp,
    "thinking": ThinkingApp,
    "tool": ToolCardApp,
    "image": ImageApp,
    "error": ErrorApp,
}


if __name__ == "__main__":
    app = APPS[sys.argv[1] if len(sys.argv) > 1 else "streamed"]()
    app.call_after_refresh(lambda: app.run_worker(app.prepare(Pilot(app))))
    app.run()
