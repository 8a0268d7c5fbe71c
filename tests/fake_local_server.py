"""What the fake provider imitates of local servers with a small window.

``FakeProvider(local=LocalServer("vllm", 4096))`` serves a model with a 4,096
token window the way that server does: it says the window where that server
says it (vLLM's ``/v1/models`` ``max_model_len``, llama.cpp's ``/props``
``n_ctx``, LM Studio's ``/api/v0/models/NAME``, Ollama's ``/api/show`` and
``/api/ps``; llama-cpp-python says it nowhere), and refuses a prompt over it
in that server's words: HTTP 400 with its text, or, for llama-cpp-python
streaming, an event stream that just ends. In llama-cpp-python's way, an
answer that would outgrow the window is stopped where it fills it, with
finish reason ``length`` (``cut_replies`` counts them); the other kinds let
scripted answers through whole. llama-cpp-python also sends no usage, and a
request that arrives while another is answered cuts that one off
(``interrupt_requests``, on by default; ``interrupted`` counts them).

A prompt counts ``len(json.dumps(body)) // 4`` tokens, the figure the fake
reports as its usage, so what Tangents is told and what is refused agree.
Ollama can be the way it is by default (``truncates``): a prompt over its
``num_ctx`` is answered from its end, the start silently dropped.
Its default answers are short (``reply_chars``), as a small model's are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

try:
    from fake_local_attachments import attachment_refusal
except ImportError:  # imported as tests.fake_local_server
    from tests.fake_local_attachments import attachment_refusal

KINDS = ("vllm", "llama.cpp", "llama-cpp-python", "ollama", "lm-studio")


def prompt_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


@dataclass
class LocalServer:
    kind: str
    window: int
    model: str = "smollm2"
    reply_chars: int = 300
    """Its default answers (and summaries) are cut to this length."""
    asked: list[str] = field(default_factory=list)
    """The paths of the questions about the model (``/props``, ``/v1/models``, ...)."""
    largest_prompt: int = 0
    refused: int = 0
    cut_replies: int = 0
    """Answers stopped because prompt and answer outgrew the window."""
    interrupted: int = 0
    """Answers cut off by a request that came while they ran."""
    num_ctx_set: bool = True
    """Ollama: the model's parameters set ``num_ctx`` (the window); else
    ``/api/show`` gives only the model's own ``context_length`` in
    ``model_info``, and Ollama's default of 4,096 applies below it."""
    truncates: bool = False
    """Ollama as it is by default: a prompt over ``num_ctx`` is not refused but
    its start silently dropped (``truncated`` counts them)."""
    truncated: int = 0
    text_only: bool = False
    """A model that takes no attachments: a request carrying an image, audio
    or a file is refused as this kind of server refuses it
    (:mod:`fake_local_attachments`)."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown local server kind {self.kind!r}; one of {KINDS}")

    # --- what the server says about its model ---------------------------------

    def info(self, path: str) -> Any:
        """The JSON answer to a GET or POST at ``path``; None: 404."""
        self.asked.append(path)
        if path in ("/v1/models", "/models"):
            entry: dict[str, Any] = {"id": self.model, "object": "model", "owned_by": "me"}
            if self.kind == "vllm":
                entry["max_model_len"] = self.window
            elif self.kind == "llama.cpp":
                entry["meta"] = {"n_ctx_train": 8 * self.window, "n_params": 134515008}
            return {"object": "list", "data": [entry]}
        if path == "/props" and self.kind == "llama.cpp":
            return {"default_generation_settings": {"n_ctx": self.window}, "total_slots": 1}
        if path == f"/api/v0/models/{self.model}" and self.kind == "lm-studio":
            return {
                "id": self.model,
                "state": "loaded",
                "max_context_length": 8 * self.window,
                "loaded_context_length": self.window,
            }
        if self.kind == "ollama" and path == "/api/show":
            if not self.num_ctx_set:
                return {
                    "parameters": "stop <|im_end|>",
                    "model_info": {
                        "general.architecture": "llama",
                        "llama.context_length": self.window,
                    },
                }
            return {
                "parameters": f"num_ctx                        {self.window}\nstop <|im_end|>",
                "model_info": {"llama.context_length": 8 * self.window},
            }
        if self.kind == "ollama" and path == "/api/ps":
            return {"models": []}
        return None

    # --- llama-cpp-python's defaults -------------------------------------------

    @property
    def one_at_a_time(self) -> bool:
        """A new request cuts off the one running (``interrupt_requests``)."""
        return self.kind == "llama-cpp-python"

    def without_usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` as this server reads it: llama-cpp-python ignores ``stream_options``."""
        if self.kind != "llama-cpp-python":
            return body
        return {k: v for k, v in body.items() if k != "stream_options"}

    # --- a window that fills while it answers ----------------------------------

    def room(self, body: Any) -> int | None:
        """Characters of answer the window has left after the prompt (None:
        not counted, for kinds other than llama-cpp-python)."""
        if self.kind != "llama-cpp-python":
            return None
        return max(0, self.window - prompt_tokens(body)) * 4

    # --- refusing a prompt over the window ------------------------------------

    def refusal(self, body: Any) -> tuple[int, Any] | str | None:
        """None when the prompt fits; else ``(status, body)`` to answer, or
        ``"end"``: start the event stream and end it without a word."""
        refused = attachment_refusal(self.kind, body) if self.text_only else None
        if refused is not None:
            self.refused += 1
            return refused
        tokens = prompt_tokens(body)
        self.largest_prompt = max(self.largest_prompt, tokens)
        if tokens <= self.window:
            return None
        if self.kind == "ollama" and self.truncates:
            self.truncated += 1  # answered from the prompt's end, without a word
            return None
        self.refused += 1
        window = self.window
        if self.kind == "llama-cpp-python":
            if isinstance(body, dict) and body.get("stream"):
                return "end"
            message = f"Requested tokens ({tokens}) exceed context window of {window}"
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}
        if self.kind == "vllm":
            return 400, {
                "object": "error",
                "message": f"This model's maximum context length is {window} tokens. However,"
                f" you requested {tokens} tokens ({tokens} in the messages, 0 in the completion).",
                "type": "BadRequestError",
                "code": 400,
            }
        if self.kind == "llama.cpp":
            return 400, {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": tokens,
                    "n_ctx": window,
                }
            }
        if self.kind == "ollama":
            over = tokens - window
            return 400, {
                "error": {
                    "message": f"prompt too long; exceeded max context length by {over} tokens"
                }
            }
        return 400, {
            "error": f"Trying to keep the first {tokens} tokens when context the overflows. However,"
            f" the model is loaded with context length of only {window} tokens, which is not enough."
        }
