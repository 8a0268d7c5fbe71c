"""The tools offered to the model: the built-ins plus the tools of running MCP servers.

Names on the wire: providers accept tool names matching
``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic and OpenAI alike), so an MCP tool shown
as ``server.tool`` is sent as ``server__tool`` (characters outside the set
become ``_``; a name that is too long or taken gets a short hash suffix). The
tool call saved in the session carries the wire name, exactly as the model
sent it; :meth:`ToolRegistry.get` maps it back and :meth:`display_name` gives
the name to show.

The registry also remembers "allow for this session" approvals
(:meth:`allow_for_session`), keyed by wire name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.providers.base import ToolSpec
from core.settings import ToolSettings
from core.tools.base import Tool, ToolContext
from core.tools.env import EnvPolicy
from core.tools.paths import Roots
from core.tools.process import kill_all

if TYPE_CHECKING:
    from core.sessions.persistence import SessionStore
    from core.settings import McpServer, Settings
    from core.tools.mcp import McpManager

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MCP_SEPARATOR = "__"
MCP_READY_WAIT = ToolSettings().mcp_ready_wait
MCP_CALL_TIMEOUT = ToolSettings().mcp_call_timeout


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "_"


def wire_name(display: str, server: str | None = None, taken: Iterable[str] = ()) -> str:
    """The provider-safe name for a tool (``server__tool`` for an MCP tool)."""
    if server is not None:
        tool = display[len(server) + 1 :] if display.startswith(server + ".") else display
        base = f"{_safe(server)}{MCP_SEPARATOR}{_safe(tool)}"
    else:
        base = _safe(display)
    taken = set(taken)
    if len(base) <= 64 and base not in taken:
        return base
    digest = hashlib.sha1(display.encode()).hexdigest()
    for extra in range(100):
        suffix = digest[:8] if not extra else f"{digest[:8]}{extra}"
        candidate = f"{base[: 63 - len(suffix)]}_{suffix}"
        if candidate not in taken:
            return candidate
    raise ValueError(f"cannot name tool {display!r}")  # pragma: no cover


class ToolRegistry:
    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        roots: Roots | None = None,
        mcp_servers: Sequence[McpServer] = (),
        env: EnvPolicy | None = None,
        mcp_ready_wait: float = MCP_READY_WAIT,
        mcp_call_timeout: float = MCP_CALL_TIMEOUT,
    ) -> None:
        self.roots = roots or Roots.create()
        self.env = env or EnvPolicy()
        """Which of our environment variables commands and MCP servers see."""
        self.mcp_ready_wait = mcp_ready_wait
        """Seconds :meth:`prepare` waits for MCP servers still starting."""
        self._builtin: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)
        self._mcp: McpManager | None = None
        if mcp_servers:
            from core.tools.mcp import McpManager

            self._mcp = McpManager(mcp_servers, self.roots.cwd, self.env, mcp_call_timeout)
        self._session_allowed: set[str] = set()

    @classmethod
    def default(cls, settings: Settings, *, cwd: str | Path | None = None) -> ToolRegistry:
        """Built-in tools scoped to ``cwd`` (default: the current directory) and
        ``settings.extra_roots``, plus the configured MCP servers."""
        from core.tools.builtin import builtin_tools

        roots = Roots.create(cwd, getattr(settings, "extra_roots", ()))
        return cls(
            builtin_tools(),
            roots=roots,
            mcp_servers=settings.mcp_servers,
            env=EnvPolicy.from_settings(settings),
            mcp_ready_wait=settings.tools.mcp_ready_wait,
            mcp_call_timeout=settings.tools.mcp_call_timeout,
        )

    def add(self, tool: Tool) -> Tool:
        """Register a tool; its wire name must be provider-safe and unused."""
        if not WIRE_NAME.match(tool.wire_name):
            raise ValueError(f"tool name {tool.wire_name!r} does not match {WIRE_NAME.pattern}")
        if tool.wire_name in self._builtin:
            raise ValueError(f"a tool named {tool.wire_name!r} is already registered")
        self._builtin[tool.wire_name] = tool
        return tool

    # --- what is offered ---------------------------------------------------------------

    def start_servers(self) -> None:
        """Start the MCP servers in the background now (front ends call this at
        launch), so that their start-up overlaps with everything before the
        first request."""
        if self._mcp is not None:
            self._mcp.start()

    def mcp_wait_left(self) -> float:
        """Seconds a request made now would wait for MCP servers still starting."""
        return self._mcp.wait_left(self.mcp_ready_wait) if self._mcp is not None else 0.0

    async def prepare(self, wait: float | None = None) -> list[str]:
        """Start MCP servers not started yet (or crashed since) in the background
        and wait for those still starting until each has had ``wait`` seconds
        (default :attr:`mcp_ready_wait`) since it was started: call before
        listing tools for a request. A server not ready by then is offered from
        a later request, so a slow or silent one holds up a reply only when it
        was started less than ``wait`` seconds before (and not at all when
        :meth:`start_servers` ran at launch and that time has passed). Returns
        notices to show the user."""
        if self._mcp is None:
            return []
        return await self._mcp.ensure_started(self.mcp_ready_wait if wait is None else wait)

    @property
    def tools(self) -> list[Tool]:
        """Every tool offered now, with its wire name."""
        out = list(self._builtin.values())
        if self._mcp is not None:
            taken = set(self._builtin)
            for tool in self._mcp.tools():
                server = tool.source.removeprefix("mcp:")
                name = wire_name(tool.name, server, taken)
                taken.add(name)
                out.append(_with_wire_name(tool, name))
        return out

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(tool.spec() for tool in self.tools)

    def get(self, name: str) -> Tool | None:
        """The tool a call names (its wire name)."""
        found = self._builtin.get(name)
        if found is not None:
            return found
        for tool in self.tools:
            if tool.wire_name == name:
                return tool
        return None

    def find(self, name: str) -> Tool | None:
        """A tool by display name (``server.tool``) or wire name."""
        for tool in self.tools:
            if name in (tool.name, tool.wire_name):
                return tool
        return None

    def display_name(self, name: str) -> str:
        """What to show for a call's tool name (also for tools no longer offered)."""
        tool = self.get(name)
        if tool is not None:
            return tool.name
        server, sep, rest = name.partition(MCP_SEPARATOR)
        return f"{server}.{rest}" if sep and server and rest else name

    def missing_reason(self, name: str) -> str:
        """Why a call naming ``name`` cannot run (no such tool, or its MCP server is down)."""
        if self._mcp is not None:
            server, sep, _ = name.partition(MCP_SEPARATOR)
            for connection in self._mcp.connections:
                if sep and _safe(connection.name) == server and not connection.running:
                    why = f": {connection.error}" if connection.error else ""
                    return (
                        f"{self.display_name(name)} is unavailable: MCP server '{connection.name}' "
                        f"is not running ({connection.state}{why})"
                    )
        offered = ", ".join(t.wire_name for t in self.tools) or "none"
        return f"unknown tool {name!r}; the tools are: {offered}"

    def context(self, store: SessionStore | None = None) -> ToolContext:
        return ToolContext(self.roots, store, self.env)

    def mcp_status(self) -> Sequence[tuple[str, str, str | None]]:
        """(server, state, error) for each configured MCP server."""
        return self._mcp.status() if self._mcp is not None else []

    async def restart_mcp(self, name: str | None = None) -> list[str]:
        """Restart (one or all) MCP servers, waiting for them to start."""
        return await self._mcp.restart(name) if self._mcp is not None else []

    # --- approvals -------------------------------------------------------------------

    def allowed_for_session(self, tool: Tool) -> bool:
        return tool.wire_name in self._session_allowed

    def allow_for_session(self, tool: Tool) -> None:
        self._session_allowed.add(tool.wire_name)

    def forget_approvals(self) -> None:
        """Drop "allow for this session" answers (e.g. when another session opens)."""
        self._session_allowed.clear()

    async def aclose(self, deadline: float = 3.0) -> None:
        """Stop every MCP server (those still starting too) within about
        ``deadline`` seconds; whatever is left then is killed. Every front end
        calls this at exit. (Running commands end with their cancelled calls;
        :func:`core.tools.process.kill_all` runs at exit for any left.)"""
        if self._mcp is not None:
            await self._mcp.aclose(deadline)

    def kill(self) -> None:
        """Kill every MCP server and every command this program is running, now
        (synchronous: for a signal handler, or when the loop is gone)."""
        if self._mcp is not None:
            self._mcp.kill()
        kill_all()


def _with_wire_name(tool: Tool, name: str) -> Tool:
    if tool.wire_name == name:
        return tool
    from dataclasses import replace

    return replace(tool, wire_name=name)
