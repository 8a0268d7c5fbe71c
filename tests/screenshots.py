"""Regenerate the SVG screenshots in ``screenshots/``: ``python -m tests.screenshots [NAME...]``.

Each scene is a deterministic app: a new database in a temporary directory,
no API keys from the environment, optionally a session written beforehand
(fixed ids and times), then a message typed or keys pressed. The snapshot
tests open the same scenes, so the pictures in the README are what the tests
check.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import Entry, ModelChange, Payload, entry_type_of
from core.sessions.messages import Message, Usage, user_text
from core.sessions.persistence import Blob, SessionInfo

SIZE = (100, 32)
OUT_DIR = Path(__file__).resolve().parent.parent / "screenshots"
_TIME = "2025-06-01T09:30:{:02d}.000000Z"


@dataclass(frozen=True)
class Scene:
    name: str
    caption: str
    """One line: what you should see."""
    argv: tuple[str, ...] = ()
    seed: Callable[[], tuple[list[Payload | int], list[Blob]]] | None = None
    """Entries (and image blobs) of a session written before the app opens,
    each the child of the one before; a number ``n`` in the list makes the
    next entry a child of the ``n``-th (1-based) instead: a branch."""
    prompt: str | None = None
    """Typed and sent once the app is open; the scene waits for the reply."""
    keys: tuple[str, ...] = ()
    click: str | None = None
    """A selector clicked last (e.g. to expand a thinking block)."""
    size: tuple[int, int] = SIZE
    config: str = ""
    """The config file's TOML (empty: none)."""
    fit: bool = True
    """End with the terminal as tall as what the chat shows (:func:`fit_to_the_chat`)."""


def _assistant(*blocks, model: str, **fields) -> Message:
    return Message(role="assistant", content=tuple(blocks), model=model, **fields)


def _thinking_session() -> tuple[list[Payload], list[Blob]]:
    model = "anthropic/claude-sonnet-4-5"
    return [
        ModelChange(model, "high"),
        user_text("Why is the sky blue?"),
        _assistant(
            ThinkingContent(
                "The question is about Rayleigh scattering. Scattering goes as 1/λ⁴, so blue light "
                "scatters about five times more than red. Mention why it is not violet: the sun emits "
                "less violet and our eyes are less sensitive to it."
            ),
            TextContent(
                "Because of **Rayleigh scattering**: air molecules scatter short wavelengths far more "
                "than long ones (∝ 1/λ⁴), so blue light reaches your eyes from every direction of the sky.\n\n"
                "It is not violet because sunlight carries less violet and our eyes are less sensitive to it."
            ),
            model=model,
            provider="anthropic",
            usage=Usage(
                input_tokens=1520, output_tokens=210, input_cost=0.00456, output_cost=0.00315
            ),
            stop_reason="stop",
        ),
    ], []


def _tool_session() -> tuple[list[Payload], list[Blob]]:
    model = "openai/gpt-4o"
    arguments = {"path": "README.md"}
    return [
        ModelChange(model, "off"),
        user_text("What is in README.md?"),
        _assistant(
            TextContent("I'll read the file first."),
            ToolCallContent("call_1", "read_file", arguments, '{"path": "README.md"}'),
            model=model,
            provider="openai",
            usage=Usage(input_tokens=820, output_tokens=24),
            stop_reason="tool_use",
        ),
        Message(
            role="tool_result",
            content=(
                ToolResultContent(
                    "call_1",
                    (
                        TextContent(
                            "# Tangents\n\nA terminal chat client for LLMs where every conversation is a tree."
                        ),
                    ),
                ),
            ),
        ),
        _assistant(
            TextContent(
                "The README introduces **Tangents**, a terminal chat client in which every conversation is a tree."
            ),
            model=model,
            provider="openai",
            usage=Usage(input_tokens=900, output_tokens=30),
            stop_reason="stop",
        ),
    ], []


def _branched_session() -> tuple[list[Payload | int], list[Blob]]:
    model = "anthropic/claude-sonnet-4-5"

    def reply(text: str) -> Message:
        return _assistant(
            TextContent(text),
            model=model,
            provider="anthropic",
            stop_reason="stop",
            usage=Usage(input_tokens=400, output_tokens=120),
        )

    return [
        ModelChange(model, "off"),
        user_text("Plan three days in Lisbon"),
        reply(
            "**Day 1** Alfama and the castle. **Day 2** Belém. **Day 3** LX Factory and the river."
        ),
        user_text("Make it cheaper"),
        reply("Walk instead of taking tuk-tuks, eat at tascas, and use the 24-hour transit pass."),
        3,
        user_text("Add a day trip to Sintra"),
        reply(
            "Take the train from Rossio on day 3: Pena Palace in the morning, Quinta da Regaleira after lunch."
        ),
        2,
        reply(
            "Day 1: the old town on foot. Day 2: the museums of Belém. Day 3: a day trip to Cascais."
        ),
        user_text("Which day has the best food?"),
        reply("Day 1: Alfama's grilled sardines, then a custard tart at the end of the walk."),
    ], []


def _conversation_session() -> tuple[list[Payload | int], list[Blob]]:
    """A working conversation: thinking, a tool call, three answers to choose from
    (the second one continued), code, and a follow-up."""
    model = "anthropic/claude-sonnet-4-5"

    def reply(*blocks, tokens: tuple[int, int], stop: str = "stop") -> Message:
        sent, written = tokens
        return _assistant(
            *blocks,
            model=model,
            provider="anthropic",
            stop_reason=stop,
            usage=Usage(
                input_tokens=sent,
                output_tokens=written,
                input_cost=sent * 3e-6,
                output_cost=written * 15e-6,
            ),
        )

    source = 'def parse_row(line: str) -> list[str]:\n    return line.split(",")'
    return [
        ModelChange(model, "medium"),
        user_text(
            'My CSV export splits rows on commas inside quotes: `a,"b,c",d`. Can you fix it?'
        ),
        reply(
            ThinkingContent(
                "The bug is probably a plain str.split. Read the parser before suggesting anything."
            ),
            TextContent("Let me read the parser first."),
            ToolCallContent(
                "toolu_1", "read_file", {"path": "export/rows.py"}, '{"path": "export/rows.py"}'
            ),
            tokens=(2400, 60),
            stop="tool_use",
        ),
        Message(
            role="tool_result",
            content=(ToolResultContent("toolu_1", (TextContent(source),)),),
        ),
        reply(
            TextContent("Split with a regular expression that skips commas between quotes."),
            tokens=(2500, 40),
        ),
        4,
        reply(
            TextContent(
                "`str.split` knows nothing about quotes. The `csv` module does:\n\n"
                "```python\nimport csv\n\ndef parse_row(line: str) -> list[str]:\n"
                '    """One CSV line as its fields (quoted commas kept)."""\n'
                "    return next(csv.reader([line]))\n```\n\n"
                '`a,"b,c",d` now gives three fields: `a`, `b,c` and `d`.'
            ),
            tokens=(2500, 110),
        ),
        user_text("Does that handle newlines inside quotes too?"),
        reply(
            TextContent(
                "Only if the reader sees the whole file: pass it `csv.reader(f)`, not split lines."
            ),
            tokens=(2700, 45),
        ),
        4,
        reply(
            TextContent("Use `pandas.read_csv`: it handles quoting for you."),
            tokens=(2500, 20),
        ),
    ], []


def _compared_session() -> tuple[list[Payload | int], list[Blob]]:
    """One question answered by three models at once (``/compare``)."""

    def reply(model: str, text: str, tokens: int, cost: float, seconds: float) -> Message:
        return _assistant(
            TextContent(text),
            model=model,
            provider=model.split("/")[0],
            stop_reason="stop",
            usage=Usage(input_tokens=60, output_tokens=tokens, output_cost=cost),
            meta={"timing": {"ttft": round(seconds / 4, 2), "total": seconds}},
        )

    question = "Name one reason to write tests first, in two sentences."
    return [
        ModelChange("openai/gpt-4o", "off"),
        user_text(question),
        reply(
            "openai/gpt-4o",
            "Writing the test first makes you decide what the code should do before you "
            "decide how. It also proves the test can fail, so a pass later means something.",
            38,
            0.00038,
            2.1,
        ),
        2,
        ModelChange("anthropic/claude-sonnet-4-5", "off"),
        reply(
            "anthropic/claude-sonnet-4-5",
            "Writing the test first forces you to decide what the code should do before "
            "you decide how. It also shows the test can fail, so a pass later means something.",
            41,
            0.00062,
            3.4,
        ),
        2,
        ModelChange("gemini/gemini-2.5-flash", "off"),
        reply(
            "gemini/gemini-2.5-flash",
            "A test written first pins down the behaviour you want before any code exists. "
            "Seeing it fail first proves it can catch a bug.",
            33,
            0.00008,
            1.2,
        ),
    ], []


def _picture() -> Blob:
    import hashlib

    from PIL import Image, ImageDraw

    width, height = 400, 240
    image = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(image)
    for y in range(height):  # a sky from deep blue to pale at the horizon
        t = y / height
        draw.line((0, y, width, y), fill=(int(30 + 190 * t), int(70 + 140 * t), int(160 + 80 * t)))
    draw.ellipse((270, 40, 340, 110), fill=(255, 205, 60))
    draw.ellipse((-80, 150, 260, 330), fill=(60, 140, 70))
    draw.ellipse((160, 165, 480, 340), fill=(40, 110, 55))
    draw.rectangle((0, 215, width, height), fill=(35, 95, 50))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    data = buffer.getvalue()
    return Blob(hashlib.sha256(data).hexdigest(), "image/png", width, height, data)


def _image_session() -> tuple[list[Payload], list[Blob]]:
    blob = _picture()
    image = ImageContent(blob.media_type, blob.sha256, blob.width, blob.height)
    model = "anthropic/claude-sonnet-4-5"
    return [
        ModelChange(model, "off"),
        user_text("What is in this picture?", (image,)),
        _assistant(
            TextContent("A simple landscape: a yellow sun in a blue sky above two green hills."),
            model=model,
            provider="anthropic",
            usage=Usage(input_tokens=1100, output_tokens=22),
            stop_reason="stop",
        ),
    ], [blob]


def _error_session() -> tuple[list[Payload], list[Blob]]:
    model = "openai/gpt-4o-mini"
    return [
        ModelChange(model, "off"),
        user_text("Summarise the meeting notes."),
        _assistant(
            model=model,
            provider="openai",
            stop_reason="error",
            error="the provider had a server error (HTTP 500): Internal server error",
            meta={"error_kind": "server"},
        ),
    ], []


_ROUND_TABLE_CONFIG = """\
[[endpoints]]
name = "lab"
base_url = "http://127.0.0.1:9/v1"
models = ["critic-model", "poet-model"]

[[agents]]
name = "Critic"
model = "lab/critic-model"
color = "#e01b24"

[[agents]]
name = "Poet"
model = "lab/poet-model"
"""


def _round_table_session() -> tuple[list[Payload], list[Blob]]:
    def reply(agent: str, model: str, text: str, tokens: int) -> Message:
        usage = Usage(input_tokens=40, output_tokens=tokens)
        return _assistant(TextContent(text), model=model, agent=agent, usage=usage)

    critic, poet = "lab/critic-model", "lab/poet-model"
    return [
        ModelChange(critic, "off"),
        user_text("@Critic @Poet Is “The Clockmaker's Daughter” a good title for my novel?"),
        reply(
            "Critic",
            critic,
            "It is familiar: the *X's Daughter* pattern is crowded. What sets the book apart?",
            21,
        ),
        reply(
            "Poet",
            poet,
            "Keep the clock, lose the daughter: **“Unwound”** says time and grief in one word.",
            22,
        ),
        user_text("@Critic does “Unwound” work?"),
        reply(
            "Critic", critic, "Better: short, and it fits the ending. Check it is not taken.", 16
        ),
    ], []


SCENES: dict[str, Scene] = {
    s.name: s
    for s in (
        Scene(
            "conversation",
            "A conversation: thinking, a tool call, the second of three answers (◀ 2/3 ▶, still focused after the flip) with code, a follow-up.",
            seed=_conversation_session,
            keys=("ctrl+up", "left"),
            size=(120, 40),
        ),
        Scene(
            "empty",
            "A new session without any API key: the welcome, the demo model (offline), the input focused.",
        ),
        Scene(
            "reply",
            "A reply from the demo model, streamed: thinking, Markdown and a Python code block.",
            prompt="Show me some code",
        ),
        Scene(
            "thinking",
            "A reply with its thinking block expanded (click or Enter), thinking level high in the footer.",
            seed=_thinking_session,
            click="ThinkingBlock",
        ),
        Scene(
            "tool",
            "A tool call card with its arguments and result, then the answer.",
            seed=_tool_session,
        ),
        Scene(
            "image", "A user message with an attached image, and the answer.", seed=_image_session
        ),
        Scene(
            "error",
            "A reply that failed with a server error, shown as an error line that can be retried.",
            seed=_error_session,
        ),
        Scene(
            "branches",
            "A conversation with alternatives: the focused reply is the second of two (◀ 2/2 ▶).",
            seed=_branched_session,
            keys=("ctrl+up", "up", "up"),
        ),
        Scene(
            "tree",
            "The session tree (ctrl+g): every branch, the current path highlighted; Enter jumps there.",
            seed=_branched_session,
            keys=("ctrl+g",),
        ),
        Scene(
            "compare",
            "Three models' answers side by side (alt+v on a reply), differences highlighted (d).",
            seed=_compared_session,
            keys=("ctrl+up", "alt+v", "d"),
            size=(120, 40),
        ),
        Scene(
            "round_table",
            "A round table: @Critic and @Poet answer in turn, each reply named in its agent's colour.",
            seed=_round_table_session,
            config=_ROUND_TABLE_CONFIG,
            size=(120, 40),
        ),
        Scene(
            "help",
            "The help screen: every key (with its id for the keymap) and every slash command.",
            keys=("f1",),
        ),
    )
}


def clean_environment(home: Path) -> None:
    """Point everything at ``home`` and forget provider keys, so pictures never
    depend on the machine (this process only)."""
    os.environ["TANGENTS_HOME"] = str(home)
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    for name in list(os.environ):
        provider_setting = name.upper().endswith(
            ("_API_KEY", "_API_TOKEN", "_BASE_URL", "_API_BASE")
        )
        if provider_setting or (name.startswith("TANGENTS_") and name != "TANGENTS_HOME"):
            del os.environ[name]


async def _seed(db: Path, payloads: Sequence[Payload | int], blobs: Sequence[Blob]) -> str:
    from storage.store import SqliteStore

    store = await SqliteStore.open(db)
    try:
        for blob in blobs:
            await store.put_blob(blob)
        session_id = "01970000-0000-7000-8000-000000000000"
        entries: list[Entry] = []
        parent = None
        for payload in payloads:
            if isinstance(payload, int):  # a branch: the next entry's parent
                parent = entries[payload - 1].id
                continue
            index = len(entries) + 1
            entry = Entry(
                id=f"01970000-0000-7000-8000-{index:012d}",
                parent_id=parent,
                session_id=session_id,
                type=entry_type_of(payload),
                created_at=_TIME.format(index),
                payload=payload,
            )
            entries.append(entry)
            parent = entry.id
        info = SessionInfo(
            id=session_id,
            title=None,
            created_at=_TIME.format(0),
            updated_at=_TIME.format(len(entries)),
            leaf_id=parent,
        )
        await store.create_session(info, entries)
        return session_id
    finally:
        await store.close()


async def open_scene(scene: Scene, home: Path):
    """The scene's app and store (the caller closes the store after the run)."""
    from tui.cli import build_parser
    from tui.modes.launch import build_app, prepare_launch

    db = home / "tangents.db"
    argv = ["--db", str(db), *scene.argv]
    if scene.config:
        config = home / "scene-config.toml"
        config.write_text(scene.config, encoding="utf-8")
        argv += ["--config", str(config)]
    if scene.seed is not None:
        payloads, blobs = scene.seed()
        argv += ["--session", await _seed(db, payloads, blobs)]
    args = build_parser().parse_args(argv)
    return await build_app(args, prepare_launch(args))


def steady_cursor(pilot: Pilot) -> None:
    """A blinking cursor would make pictures differ with the time they take (on a
    loaded machine a picture taken half a second late caught it off): every input
    on every open screen shows its cursor steadily. Call it again after a screen
    with an input opens."""
    from textual.widgets import Input, TextArea

    for screen in pilot.app.screen_stack:
        for kind in (Input, TextArea):
            for widget in screen.query(kind):
                widget.cursor_blink = False


async def quiet(pilot: Pilot, timeout: float = 120) -> None:
    """Wait until no worker runs, a pause after the last one ended (a screen
    just opened starts its own when mounted)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        await pilot.pause()
        busy = [
            w for w in pilot.app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)
        ]
        if not busy:
            return
        assert loop.time() < deadline, f"still busy: {[w.name for w in busy]}"
        with suppress(WorkerCancelled):  # a worker replaced by a newer one ended too
            await pilot.app.workers.wait_for_complete(busy)


async def drive(scene: Scene, pilot: Pilot) -> None:
    """What happens after the app opens, up to the moment of the picture."""
    await pilot.pause()
    steady_cursor(pilot)
    if scene.prompt:
        await pilot.press(*[c if c != " " else "space" for c in scene.prompt])
        await pilot.press("enter")
    await quiet(pilot)
    if scene.keys:
        await pilot.press(*scene.keys)
    if scene.click:
        await pilot.click(scene.click)
    await quiet(pilot)
    if scene.fit:
        await fit_to_the_chat(pilot)
    steady_cursor(pilot)


async def fit_to_the_chat(pilot: Pilot) -> None:
    """On the chat screen (no dialog over it), make the terminal as tall as
    what the chat shows: the chat sits at the bottom of its view, and a short
    conversation left a blank band above it, most of the picture."""
    from tui.chat.chat_screen import ChatScreen

    screen = pilot.app.screen
    if not isinstance(screen, ChatScreen) or not screen.is_mounted:
        return
    view = screen.chat_view
    shown = [c for c in view.children if c.display and c.region.height]
    if not shown:
        return  # the welcome: nothing to fit
    blank = min(c.region.y - c.styles.margin.top for c in shown) - view.content_region.y
    if blank > 0:
        width, height = pilot.app.size
        await pilot.resize_terminal(width, height - blank)
        await quiet(pilot)


async def _render(scene: Scene, home: Path) -> str:
    app, store = await open_scene(scene, home)
    try:
        async with app.run_test(size=scene.size) as pilot:
            await drive(scene, pilot)
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            return app.export_screenshot(title=f"Tangents — {scene.caption}")
    finally:
        await store.close()


FONT_STACK = 'font-family: "Fira Code", ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace'
"""Fira Code when the viewer can load it, else the viewer's own monospace font."""


def render(scene: Scene) -> str:
    with tempfile.TemporaryDirectory(prefix="tangents-shot-") as tmp:
        clean_environment(Path(tmp))
        svg = asyncio.run(_render(scene, Path(tmp)))
    return svg.replace("font-family: Fira Code, monospace", FONT_STACK)


def main(argv: list[str] | None = None) -> int:
    names = (sys.argv[1:] if argv is None else argv) or list(SCENES)
    unknown = [n for n in names if n not in SCENES]
    if unknown:
        print(
            f"unknown scene(s): {', '.join(unknown)}; known: {', '.join(SCENES)}", file=sys.stderr
        )
        return 2
    OUT_DIR.mkdir(exist_ok=True)
    for name in names:
        path = OUT_DIR / f"{name}.svg"
        path.write_text(render(SCENES[name]), encoding="utf-8")
        print(f"{path}  {SCENES[name].caption}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
