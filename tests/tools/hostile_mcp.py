"""A hostile MCP server speaking JSON-RPC over stdio by hand (standard library
only, so it can list 100,000 tools at once), for the bounds tests.

``python hostile_mcp.py MODE [N]``:

* ``regex``: one tool, ``match``, whose ``text`` argument must match the
  catastrophic pattern ``^(a+)+$``; a call answers "matched";
* ``many``: N tools (``t0`` ... ``tN-1``), each taking a string;
* ``big``: one tool, ``dump``, answering N megabytes of text;
* ``silent``: one tool, ``wait``, whose calls are never answered.

``python hostile_mcp.py --http PORT MODE [N]`` answers the same over
streamable HTTP (one JSON body a request) on 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CATASTROPHIC = "^(a+)+$"


def tools(mode: str, count: int) -> list[dict[str, object]]:
    if mode == "regex":
        schema = {
            "type": "object",
            "properties": {"text": {"type": "string", "pattern": CATASTROPHIC}},
            "required": ["text"],
        }
        return [{"name": "match", "description": "Match a pattern.", "inputSchema": schema}]
    if mode == "many":
        schema = {"type": "object", "properties": {"x": {"type": "string"}}}
        return [{"name": f"t{i}", "inputSchema": schema} for i in range(count)]
    name = "dump" if mode == "big" else "wait"
    return [{"name": name, "inputSchema": {"type": "object"}}]


def answer(mode: str, count: int, request: dict[str, object]) -> object | None:
    """The result for ``request``; None when it gets no answer."""
    method = request.get("method")
    params = request.get("params") or {}
    assert isinstance(params, dict)
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": f"hostile-{mode}", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": tools(mode, count)}
    if method == "tools/call":
        if mode == "silent":
            return None
        if mode == "big":
            return {"content": [{"type": "text", "text": "y" * (count * 1024 * 1024)}]}
        return {"content": [{"type": "text", "text": "matched"}]}
    return {}


def serve_http(port: int, mode: str, count: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # no server-sent event stream
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self) -> None:
            self.do_GET()

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            result = answer(mode, count, request) if "id" in request else None
            if result is None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    if sys.argv[1] == "--http":
        serve_http(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
        return
    mode = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        result = answer(mode, count, request)
        if result is None:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
