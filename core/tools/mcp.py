"""MCP servers as tool sources, through the ``mcp`` package's client.

Each ``[[mcp_servers]]`` entry is started in the background when the front end
starts (:meth:`McpManager.start`), or else the first time tools are listed for
a request (:meth:`McpManager.ensure_started`): a ``command`` (with
``args`` and ``env``) is run as a subprocess speaking stdio, a ``url`` is
reached over streamable HTTP. Its tools join the built-ins as ``server.tool``
(sent to providers as ``server__tool``, see core.tools.registry), always with
approval unless the config marks the server ``trusted``.

A server that fails to start gives one clear notice (with the end of what it
wrote on stderr) and is not retried until :meth:`McpManager.restart`; one that
crashes later fails the call it was running with a clear error result and is
restarted the next time tools are listed. The rest keeps working either way.

Each connection is owned by one background task (the client's anyio task
groups must be entered and left by the same task); calls from other tasks go
through the connected client. Nothing from ``mcp`` is imported before a
server is started.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from core import __version__
from core.providers.sdk import loaded
from core.sessions.content import ImageContent, TextContent
from core.sessions.images import image_blob, image_content
from core.sessions.persistence import Blob
from core.settings import McpServer, ToolSettings
from core.tools.base import Tool, ToolContext, ToolError, ToolOutput, schema_problem
from core.tools.env import EnvPolicy
from core.tools.mcp_stdio import StdioProcess, stdio_transport
from core.tools.tool_list import MAX_TOOLS

STARTUP_TIMEOUT = 30.0
"""Seconds a server has to start and list its tools."""
CALL_TIMEOUT = ToolSettings().mcp_call_timeout
"""Seconds one tool call may take, unless the settings say otherwise."""
SCHEMA_CHECK_SECONDS = 10.0
"""Seconds the listed tools' schemas may take to check; a server over it fails to start."""
MAX_PAGES = 100
"""Pages of a tool list read at most."""
MAX_RESULT_CHARS = 256 * 1024
"""Characters of text kept from one tool result; the rest is cut, with a note."""
STDERR_TAIL = 600
"""Characters of a failed server's stderr quoted in its notice."""

STOP_DEADLINE = 3.0
"""Seconds a server has to stop before its process group is killed."""

McpState = Literal["stopped", "starting", "running", "failed", "crashed"]


class McpStartError(Exception):
    """A server could not start; the message says which and why."""


def _leaf(error: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


class McpConnection:
    """One configured server: its process or HTTP session, its tools, its state."""

    def __init__(
        self,
        config: McpServer,
        cwd: Path,
        env_policy: EnvPolicy | None = None,
        call_timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.env_policy = env_policy or EnvPolicy()
        self.call_timeout = call_timeout
        self.state: McpState = "stopped"
        self.error: str | None = None
        self.tools: list[Tool] = []
        self.skipped: list[str] = []
        """Tools not offered (unusable schema), with why."""
        self.cut_note: str | None = None
        """Why only some of the listed tools are offered (too many)."""
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._errlog: Any = None
        self._process: StdioProcess | None = None

    @property
    def name(self) -> str:
        return self.config.name

    # --- lifecycle -------------------------------------------------------------------

    async def start(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Connect and list the tools; :class:`McpStartError` when that fails.
        Cancelling it stops the server (within :data:`STOP_DEADLINE`)."""
        if self.running:
            return
        await self.close()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[Any]] = loop.create_future()
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "not retrieved"
        self._stop = asyncio.Event()
        self._process = StdioProcess()
        self.state = "starting"
        self._task = asyncio.create_task(
            self._own(ready, self._stop), name=f"mcp-server:{self.name}"
        )
        try:
            listed = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except (TimeoutError, McpStartError) as error:
            why = (
                f"did not start within {timeout:g} s"
                if isinstance(error, TimeoutError)
                else str(error)
            )
            why += self._garbage_note()
            tail = self._stderr_tail()
            await self.close()
            self._failed(why + tail)
            raise McpStartError(self.error) from None
        except asyncio.CancelledError:
            await asyncio.shield(self.close())
            self.state = "stopped"
            raise
        try:
            # Checking the schemas takes a while for hundreds of tools: not on the loop.
            self.tools, self.skipped = await asyncio.wait_for(
                asyncio.to_thread(self._tools_from, listed), SCHEMA_CHECK_SECONDS
            )
        except TimeoutError:
            await self.close()
            self._failed(f"its tool schemas took over {SCHEMA_CHECK_SECONDS:g} s to check")
            raise McpStartError(self.error) from None
        self.state = "running"
        self.error = None

    @property
    def running(self) -> bool:
        return (
            self.state == "running"
            and self._task is not None
            and not self._task.done()
            and self._client is not None
        )

    async def close(self, deadline: float = STOP_DEADLINE) -> None:
        """Stop the server within ``deadline`` seconds: stdin closed, then its
        process group terminated, then killed (see core.tools.mcp_stdio)."""
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None and not task.done():
            if self.state != "running":
                task.cancel()  # still connecting: nothing waits for the stop event
            await asyncio.wait({task}, timeout=deadline)
            if not task.done():
                task.cancel()
                if self._process is not None:
                    self._process.kill()
                await asyncio.wait({task}, timeout=0.5)
        self._client = None
        if self.state in ("running", "starting"):
            self.state = "stopped"
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    def kill(self) -> None:
        """SIGKILL the server's process group now (synchronous)."""
        if self._process is not None:
            self._process.kill()

    def garbage_notice(self) -> str | None:
        """A notice when the server wrote non-MCP lines to stdout since the last one."""
        count = self._process.new_garbage() if self._process is not None else 0
        if not count:
            return None
        return (
            f"MCP server '{self.name}' wrote {_lines(count)} of non-MCP output to its stdout "
            "(ignored)"
        )

    async def _own(self, ready: asyncio.Future[list[Any]], stop: asyncio.Event) -> None:
        """The task that holds the connection open until ``stop`` is set."""
        try:
            # Over a second of imports: in a thread, so the app keeps drawing.
            await loaded("mcp")
            from mcp import Client
            from mcp.types import Implementation

            async with Client(
                self._transport(),
                client_info=Implementation(name="tangents", version=__version__),
            ) as client:
                tools = await self._list(client)
                self._client = client
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except BaseException as error:  # reported through `ready`, or recorded as a crash
            if not ready.done():
                ready.set_exception(McpStartError(self._explain(error)))
            elif self.state == "running" and not stop.is_set():
                self._crashed(error)
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._client = None

    async def _list(self, client: Any) -> list[Any]:
        """The first :data:`MAX_TOOLS` tools the server lists (setting
        :attr:`cut_note` when it lists more)."""
        tools: list[Any] = []
        total = 0
        cursor = None
        for _ in range(MAX_PAGES):
            cut_before = self._process.tools_cut if self._process is not None else 0
            page = await client.list_tools(cursor=cursor)
            cut = (self._process.tools_cut if self._process is not None else 0) - cut_before
            total += len(page.tools) + cut
            tools.extend(page.tools[: MAX_TOOLS - len(tools)])
            cursor = page.next_cursor
            if not cursor or total > MAX_TOOLS:
                break
        self.cut_note = None
        if total > MAX_TOOLS:
            listed = f"at least {total}" if cursor else f"{total}"
            self.cut_note = (
                f"MCP server '{self.name}' listed {listed} tools; only the first {MAX_TOOLS} "
                "are offered"
            )
        return tools

    def _transport(self) -> Any:
        config = self.config
        if config.command:
            self._errlog = tempfile.TemporaryFile()
            env = self.env_policy.environment(allowed=config.env_passthrough) | config.env
            return stdio_transport(
                [config.command, *config.args],
                env=env,
                cwd=self.cwd,
                errlog=self._errlog,
                handle=self._process or StdioProcess(),
            )
        if config.url:
            from core.tools.mcp_http import http_transport

            return http_transport(config.url, self._process or StdioProcess())
        raise McpStartError("the config gives neither a command nor a url")

    # --- calls -----------------------------------------------------------------------

    async def call(self, tool_name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        client = self._client
        if client is None or not self.running:
            why = f": {self.error}" if self.error else ""
            raise ToolError(f"MCP server '{self.name}' is not running{why}")
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        too_slow = ToolError(
            f"MCP server '{self.name}' did not answer {tool_name} within {self.call_timeout:g} s "
            "(setting tools.mcp_call_timeout)"
        )
        try:
            result = await asyncio.wait_for(
                client.call_tool(tool_name, arguments, read_timeout_seconds=self.call_timeout),
                self.call_timeout + 1,
            )
        except TimeoutError:
            raise too_slow from None
        except MCPError as error:
            if error.code == REQUEST_TIMEOUT:
                raise too_slow from None
            if error.code != CONNECTION_CLOSED:
                raise ToolError(
                    f"MCP server '{self.name}' refused {tool_name}: {error.message}"
                ) from None
            raise self._crashed_during(tool_name, error) from None
        except (OSError, EOFError) as error:
            raise self._crashed_during(tool_name, error) from None
        return await _convert(result, ctx, f"{self.name}.{tool_name}")

    # --- helpers ---------------------------------------------------------------------

    def _tools_from(self, listed: list[Any]) -> tuple[list[Tool], list[str]]:
        tools: list[Tool] = []
        skipped: list[str] = []
        for item in listed:
            schema = item.input_schema if isinstance(item.input_schema, dict) else {}
            problem = schema_problem(schema)
            if problem is None and schema.get("type", "object") != "object":
                problem = "its arguments are not an object"
            if problem is not None:
                skipped.append(f"{self.name}.{item.name}: {problem}")
                continue
            schema = {"type": "object", **schema}
            tools.append(
                Tool(
                    name=f"{self.name}.{item.name}",
                    description=item.description
                    or item.title
                    or f"{item.name} (from MCP server {self.name})",
                    parameters=schema,
                    run=self._runner(item.name),
                    side_effects=True,
                    source=f"mcp:{self.name}",
                    trusted=self.config.trusted,
                )
            )
        return tools, skipped

    def _runner(self, tool_name: str) -> Any:
        async def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
            return await self.call(tool_name, arguments, ctx)

        return run

    def _failed(self, why: str) -> None:
        self.state = "failed"
        self.error = self.env_policy.redact(why, self.config.env)
        self.tools = []

    def _crashed_during(self, tool_name: str, error: BaseException) -> ToolError:
        self._crashed(error)
        return ToolError(
            f"MCP server '{self.name}' stopped while running {tool_name} ({self.error}); "
            "it will be restarted the next time tools are listed"
        )

    def _crashed(self, error: BaseException) -> None:
        if self.state != "running":
            return
        self.state = "crashed"
        self.error = self.env_policy.redact(
            self._explain(error) + self._garbage_note() + self._stderr_tail(), self.config.env
        )
        self.tools = []
        if self._stop is not None:
            self._stop.set()  # let the owner task clean up the process

    def _explain(self, error: BaseException) -> str:
        error = _leaf(error)
        command = self.config.command
        if isinstance(error, McpStartError):
            return str(error)
        if isinstance(error, FileNotFoundError) and command:
            return f"command not found: {command!r}"
        if isinstance(error, PermissionError) and command:
            return f"permission denied running {command!r}"
        if isinstance(error, asyncio.CancelledError):
            return "cancelled"
        text = str(error).strip() or type(error).__name__
        if text == "Connection closed" and command:
            return "the process exited or closed its output"
        if self.config.url and not command:
            return f"cannot use {self.config.url}: {text}"
        return text

    def _stderr_tail(self) -> str:
        log = self._errlog
        if log is None:
            return ""
        try:
            size = os.fstat(log.fileno()).st_size
            data = os.pread(log.fileno(), STDERR_TAIL * 4, max(0, size - STDERR_TAIL * 4))
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", errors="replace")
        text = self.env_policy.redact(text, self.config.env).strip()
        if not text:
            return ""
        return f"; its stderr ended with: {text[-STDERR_TAIL:]}"

    def _garbage_note(self) -> str:
        count = self._process.new_garbage() if self._process is not None else 0
        if not count:
            return ""
        return f" (it wrote {_lines(count)} of non-MCP output to its stdout)"


def _lines(count: int) -> str:
    return f"{count} line{'s' * (count != 1)}"


async def _convert(result: Any, ctx: ToolContext, label: str) -> ToolOutput:
    """An MCP ``CallToolResult`` as our content blocks (images stored as blobs)."""
    content: list[TextContent | ImageContent] = []
    for block in result.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            content.append(TextContent(block.text))
        elif kind == "image":
            content.append(await _image(block.data, block.mime_type, ctx, label))
        elif kind == "audio":
            content.append(TextContent(f"[audio omitted: {block.mime_type}]"))
        elif kind == "resource_link":
            content.append(
                TextContent(f"[resource link: {block.uri}{' ' + block.name if block.name else ''}]")
            )
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                content.append(TextContent(f"[resource {resource.uri}]\n{text}"))
            else:
                content.append(
                    TextContent(
                        f"[resource {resource.uri}: {resource.mime_type or 'binary'} data omitted]"
                    )
                )
        else:
            content.append(TextContent(f"[unsupported MCP content: {kind}]"))
    if not content and result.structured_content is not None:
        content.append(TextContent(json.dumps(result.structured_content, ensure_ascii=False)))
    if not content:
        content.append(TextContent("(no output)"))
    return ToolOutput(_capped(content), bool(result.is_error))


def _capped(content: list[TextContent | ImageContent]) -> tuple[TextContent | ImageContent, ...]:
    """``content`` with at most :data:`MAX_RESULT_CHARS` characters of text, and a note of the cut."""
    out: list[TextContent | ImageContent] = []
    left = MAX_RESULT_CHARS
    cut = 0
    for block in content:
        if isinstance(block, TextContent) and len(block.text) > left:
            cut += len(block.text) - left
            if not left:
                continue
            block = TextContent(block.text[:left])
        if isinstance(block, TextContent):
            left -= len(block.text)
        out.append(block)
    if cut:
        out.append(
            TextContent(
                f"\n[... {cut} characters of the result were cut: "
                f"at most {MAX_RESULT_CHARS} are kept]"
            )
        )
    return tuple(out)


async def _image(
    data: str, mime_type: str, ctx: ToolContext, label: str
) -> TextContent | ImageContent:
    try:
        # Decoding up to 50 megapixels takes a while: not on the event loop.
        blob = await asyncio.to_thread(_decoded_blob, data, label)
    except ValueError as error:
        return TextContent(f"[image from {label} omitted: {error}]")
    if ctx.store is None:
        return TextContent(f"[image omitted: {blob.media_type} {blob.width}x{blob.height}]")
    await ctx.store.put_blob(blob)
    return image_content(blob)


def _decoded_blob(data: str, label: str) -> Blob:
    return image_blob(base64.b64decode(data, validate=False), label)


class McpManager:
    """The configured servers: started in the background on demand, offered
    once ready, stopped by :meth:`aclose` within a deadline."""

    def __init__(
        self,
        servers: Sequence[McpServer],
        cwd: Path,
        env_policy: EnvPolicy | None = None,
        call_timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.connections = [
            McpConnection(server, cwd, env_policy, call_timeout) for server in servers
        ]
        self._starting: dict[McpConnection, asyncio.Task[None]] = {}
        self._started_at: dict[McpConnection, float] = {}
        """When each server still starting was started (the loop's clock)."""
        self._told_waiting: set[str] = set()

    def start(self) -> None:
        """Start, in the background, the servers never started or crashed since."""
        loop = asyncio.get_running_loop()
        for connection in self.connections:
            if connection.state in ("stopped", "crashed") and connection not in self._starting:
                self._starting[connection] = loop.create_task(
                    connection.start(), name=f"mcp-start:{connection.name}"
                )
                self._started_at[connection] = loop.time()

    def wait_left(self, wait: float) -> float:
        """Seconds until every server still starting has had ``wait`` seconds
        since it was started (0 when none is starting)."""
        if not self._starting:
            return 0.0
        now = asyncio.get_running_loop().time()
        return max(0.0, max(self._started_at[c] for c in self._starting) + wait - now)

    async def ensure_started(self, wait: float = 0.0) -> list[str]:
        """Start servers never started or crashed since, in the background; wait
        for those still starting until each has had ``wait`` seconds since it
        was started (so a server started at launch delays nothing once that
        time is over). Notices for servers that failed, are still starting
        (once), or wrote garbage."""
        self.start()
        left = self.wait_left(wait)
        if left > 0:
            await asyncio.wait(set(self._starting.values()), timeout=left)
        notices: list[str] = []
        for connection, task in list(self._starting.items()):
            if not task.done():
                if connection.name not in self._told_waiting:
                    self._told_waiting.add(connection.name)
                    notices.append(
                        f"MCP server '{connection.name}' is still starting; "
                        "its tools are offered once it is ready"
                    )
                continue
            del self._starting[connection]
            del self._started_at[connection]
            self._told_waiting.discard(connection.name)
            error = None if task.cancelled() else task.exception()
            if task.cancelled() or error is not None:
                notices.append(
                    f"MCP server '{connection.name}' could not start: "
                    f"{connection.error or error or 'cancelled'}; its tools are unavailable"
                )
            else:
                if connection.cut_note is not None:
                    notices.append(connection.cut_note)
                notices.extend(f"MCP tool {s} is not offered" for s in connection.skipped)
        for connection in self.connections:
            if connection.state == "running" and (note := connection.garbage_notice()):
                notices.append(note)
        return notices

    def tools(self) -> list[Tool]:
        return [tool for c in self.connections if c.running for tool in c.tools]

    def status(self) -> list[tuple[str, McpState, str | None]]:
        """(name, state, error) of every configured server, for a status view."""
        return [(c.name, c.state, c.error) for c in self.connections]

    async def restart(self, name: str | None = None, wait: float = STARTUP_TIMEOUT) -> list[str]:
        """Stop (one or all) servers and start them again; notices for failures."""
        for connection in self.connections:
            if name is None or connection.name == name:
                task = self._starting.pop(connection, None)
                self._started_at.pop(connection, None)
                if task is not None:
                    task.cancel()
                    await asyncio.wait({task}, timeout=STOP_DEADLINE + 1)
                await connection.close()
                connection.state = "stopped"
                connection.error = None
        return await self.ensure_started(wait)

    async def aclose(self, deadline: float = STOP_DEADLINE) -> None:
        """Stop every server, those still starting included, within about
        ``deadline`` seconds; what is still running then is killed."""
        starting = list(self._starting.values())
        self._starting.clear()
        self._started_at.clear()
        for task in starting:
            task.cancel()
        closing = [asyncio.ensure_future(c.close(deadline)) for c in self.connections]
        done, pending = await asyncio.wait(starting + closing, timeout=deadline + 1)
        for task in done:
            if not task.cancelled():
                task.exception()  # retrieved: a failure while stopping is not news
        self.kill()
        for task in pending:
            task.cancel()

    def kill(self) -> None:
        """SIGKILL every server's process group now (synchronous)."""
        for connection in self.connections:
            connection.kill()
