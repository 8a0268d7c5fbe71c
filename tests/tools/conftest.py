"""Fixtures for the tool tests: a working directory, a real SQLite store, a
session, and the agent loop pointed at the fake provider through a real client
(the anthropic SDK or litellm)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from fake_provider import FakeProvider

from core.chat.agent import run_agent
from core.chat.events import Emit, Event, Notice, ToolChanged
from core.chat.results import AgentResult
from core.chat.target import target_for
from core.providers.target import Target
from core.sessions.content import ToolCallContent
from core.sessions.messages import Message, user_text
from core.sessions.session import Session
from core.settings import Settings
from core.tools import Approval, Roots, Tool, ToolRegistry, builtin_tools
from storage import SqliteStore

ANTHROPIC_MODEL = "anthropic/claude-test"
OPENAI_MODEL = "openai/gpt-test"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The working directory the tools are scoped to, with a notes file."""
    directory = tmp_path / "work"
    directory.mkdir()
    (directory / "notes.txt").write_text("hello\nworld\n")
    return directory


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "tangents.db")
    yield opened
    await opened.close()


@pytest.fixture
def registry(work: Path) -> ToolRegistry:
    return ToolRegistry(builtin_tools(), roots=Roots.create(work))


@dataclass
class Approver:
    """A test approval callback: answers from a queue (default ``once``), records what it was asked."""

    answers: list[Approval] = field(default_factory=list)
    asked: list[tuple[ToolCallContent, Tool, str]] = field(default_factory=list)

    async def __call__(self, call: ToolCallContent, tool: Tool, preview: str) -> Approval:
        self.asked.append((call, tool, preview))
        return self.answers.pop(0) if self.answers else Approval("once")


@dataclass
class Agent:
    """run_agent on one session, through one wire, against the fake provider."""

    session: Session
    fake: FakeProvider
    registry: ToolRegistry
    wire: str = "anthropic"
    settings: Settings = field(default_factory=Settings)
    approver: Approver = field(default_factory=Approver)
    activity: list[tuple[str, str, str]] = field(default_factory=list)
    """(call id, tool name, state) for every ToolChanged event."""
    notices: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        return ANTHROPIC_MODEL if self.wire == "anthropic" else OPENAI_MODEL

    @property
    def api_base(self) -> str:
        return self.fake.base_url if self.wire == "anthropic" else self.fake.base_url + "/v1"

    @property
    def target(self) -> Target:
        return target_for(self.model, self.settings, self.api_base)

    async def ask(self, text: str, **options: Any) -> AgentResult:
        await self.session.append(user_text(text))
        return await self.run(**options)

    async def run(self, emit: Emit | None = None, **options: Any) -> AgentResult:
        """``emit`` also sees every event (the agent records tool states and notices)."""

        def listen(event: Event) -> None:
            if isinstance(event, ToolChanged):
                a = event.activity
                self.activity.append((a.call.id, a.name, a.state))
            elif isinstance(event, Notice):
                self.notices.append(event.text)
            if emit is not None:
                emit(event)

        options.setdefault("approve", self.approver)
        return await run_agent(
            self.session,
            self.settings,
            model=self.model,
            target=self.target,
            tools=self.registry,
            emit=listen,
            **options,
        )

    def with_settings(self, **changes: Any) -> Agent:
        self.settings = replace(self.settings, **changes)
        return self

    # --- what reached the provider ------------------------------------------------

    def body(self, index: int = -1) -> dict[str, Any]:
        return self.fake.requests[index].body

    def tool_names(self, index: int = -1) -> list[str]:
        tools = self.body(index).get("tools") or []
        if self.wire == "anthropic":
            return [t["name"] for t in tools]
        return [t["function"]["name"] for t in tools]

    def tool_results(self, index: int = -1) -> list[dict[str, Any]]:
        """Tool results in a request body, wire-neutral: id, text, is_error."""
        found = []
        for message in self.body(index)["messages"]:
            if self.wire == "anthropic":
                if not isinstance(message.get("content"), list):
                    continue
                for block in message["content"]:
                    if block.get("type") == "tool_result":
                        text = "\n".join(
                            c.get("text", "") for c in block["content"] if c.get("type") == "text"
                        )
                        found.append(
                            {
                                "id": block["tool_use_id"],
                                "text": text,
                                "is_error": bool(block.get("is_error")),
                            }
                        )
            elif message.get("role") == "tool":
                text = message["content"]
                found.append(
                    {
                        "id": message["tool_call_id"],
                        "text": text,
                        "is_error": text.startswith("Error: "),
                    }
                )
        return found


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")


@pytest.fixture
async def session(store: SqliteStore, work: Path) -> Session:
    return await Session.create(store, cwd=str(work))


@pytest.fixture
def agent(session: Session, fake_provider: FakeProvider, registry: ToolRegistry) -> Agent:
    return Agent(session, fake_provider, registry)


async def unpaired_calls(store: SqliteStore, session_id: str) -> list[str]:
    """Ids of assistant tool calls in the database with no result in the entry after them."""
    entries = await store.entries(session_id)
    children: dict[str | None, list[Any]] = {}
    for entry in entries:
        children.setdefault(entry.parent_id, []).append(entry)
    missing = []
    for entry in entries:
        message = entry.message
        if message is None or message.role != "assistant" or not message.tool_calls:
            continue
        answered: set[str] = set()
        for child in children.get(entry.id, []):
            if child.message is not None and child.message.role == "tool_result":
                answered |= {r.tool_call_id for r in child.message.tool_results}
        missing += [c.id for c in message.tool_calls if c.id not in answered]
    return missing


def roles(session: Session) -> list[str]:
    return [m.role for m in session.messages()]


def last_results(session: Session) -> Message:
    return [m for m in session.messages() if m.role == "tool_result"][-1]
