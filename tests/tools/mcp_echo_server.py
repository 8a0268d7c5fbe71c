"""A small MCP server for the tests, over stdio, built with the ``mcp`` package's
server API (``MCPServer``).

Tools: ``echo`` (returns its text), ``pixel`` (a 2x1 PNG image), ``add``
(structured numbers), ``environment`` (what the server sees) and ``crash`` (the process exits at once, as a crashing
server would).

Run: ``python tests/tools/mcp_echo_server.py`` (stdio), or with ``--http PORT``
to serve streamable HTTP at ``http://127.0.0.1:PORT/mcp``.
"""

from __future__ import annotations

import base64
import io
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent

server = MCPServer("echo", log_level="ERROR")


@server.tool()
def echo(text: str) -> str:
    """Return the text, prefixed with 'echo: '."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pixel() -> ImageContent:
    """A tiny PNG image (2x1 pixels)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (2, 1), (255, 0, 0)).save(buffer, format="PNG")
    return ImageContent(
        type="image", data=base64.b64encode(buffer.getvalue()).decode(), mime_type="image/png"
    )


@server.tool()
def environment() -> str:
    """The server's environment, one NAME=value a line, sorted."""
    return "\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))


@server.tool()
def crash() -> str:
    """Exit the server process immediately."""
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
