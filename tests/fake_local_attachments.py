"""How a local server with a text-only model refuses an attachment, in its
own words (``LocalServer(kind, window, text_only=True)``).

- llama-cpp-python 0.3: its request types know only ``text`` and
  ``image_url`` parts, so an ``input_audio`` or ``file`` part fails the
  request's validation, which its error handler answers as HTTP 500
  ``internal_server_error`` quoting the validation errors; an image passes
  validation and fails in the text-only chat handler (HTTP 500, its Python
  error's words).
- llama.cpp's ``llama-server`` without a multimodal projector: the first
  image or audio part is refused with HTTP 500 naming its kind ("image input
  is not supported - hint: ..."), any other part type with HTTP 400
  "unsupported content[].type".
"""

from __future__ import annotations

from typing import Any

_HINT = " - hint: if this is unexpected, you may need to provide the mmproj"
_TYPED = ("text", "image_url")
"""The part types llama-cpp-python's request types declare."""


def attachment_refusal(kind: str, body: Any) -> tuple[int, dict[str, Any]] | None:
    """The answer of a ``kind`` server whose model takes text only to a request
    carrying parts other than text; None when it carries none (or the kind
    of server is not imitated here)."""
    parts = [part for part in _parts(body) if part.get("type") != "text"]
    if not parts:
        return None
    if kind == "llama-cpp-python":
        untyped = [part["type"] for part in parts if part.get("type") not in _TYPED]
        if untyped:
            return 500, _error(_validation_errors(untyped), "internal_server_error")
        return 500, _error('can only concatenate str (not "list") to str', "internal_server_error")
    if kind == "llama.cpp":
        first = parts[0].get("type")
        if first == "image_url":
            return 500, _error("image input is not supported" + _HINT, "server_error", 500)
        if first == "input_audio":
            return 500, _error("audio input is not supported" + _HINT, "server_error", 500)
        return 400, _error("unsupported content[].type", "invalid_request_error", 400)
    return None


def _parts(body: Any) -> list[dict[str, Any]]:
    """Every content part of every message, in order."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return [
        part
        for message in messages or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict)
    ]


def _validation_errors(types: list[str]) -> str:
    """FastAPI's words for parts of types its request model does not know, as
    llama-cpp-python 0.3.36 answers them (its first errors: the message
    tried as each role's type, then each part type)."""
    errors = [
        "{'type': 'literal_error', 'loc': ('body', 'messages', 0,"
        " 'ChatCompletionRequestSystemMessage', 'role'), 'msg': \"Input should be 'system'\","
        " 'input': 'user', 'ctx': {'expected': \"'system'\"}}"
    ]
    errors += [
        "{'type': 'literal_error', 'loc': ('body', 'messages', 0,"
        " 'ChatCompletionRequestUserMessage', 'content', 'list[union["
        "ChatCompletionRequestMessageContentPartText,ChatCompletionRequestMessageContentPartImage]]',"
        " 1, 'ChatCompletionRequestMessageContentPartText', 'type'), 'msg': \"Input should be"
        f" 'text'\", 'input': '{name}', 'ctx': {{'expected': \"'text'\"}}}}"
        for name in types
    ]
    count = len(errors)
    return f"{count} validation errors:\n" + "\n".join(f"  {error}" for error in errors)


def _error(message: str, kind: str, code: int | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
