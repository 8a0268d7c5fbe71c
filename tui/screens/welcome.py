"""The text shown above an empty conversation."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content

from core.sanitize import strip_control
from tui import keymap
from tui.models import model_label


def welcome_text(model: str, *, no_key: bool, overrides: Mapping[str, str]) -> Content:
    def _key(action_id: str) -> str:
        return keymap.first_key(action_id, overrides)

    keys = Content.assemble(
        "Type a message and press ",
        (_key("send"), "bold"),
        ". ",
        (_key("newline"), "bold"),
        " newline · ",
        (_key("help"), "bold"),
        " keys · ",
        (_key("command_palette"), "bold"),
        " commands · ",
        ("/", "bold"),
        " slash commands · paste a file's path (image, audio, PDF) to attach it\n",
        (_key("focus_messages"), "bold"),
        " moves to the messages (then ",
        (_key("chat_previous_message"), "bold"),
        " ",
        (_key("chat_next_message"), "bold"),
        ", ",
        (_key("previous_alternative"), "bold"),
        " ",
        (_key("next_alternative"), "bold"),
        " alternatives, ",
        (_key("branch_here"), "bold"),
        " branch here) · ",
        (_key("pick_model"), "bold"),
        " model · ",
        (_key("quit"), "bold"),
        " quit",
    )
    if not no_key:
        return Content.assemble(
            ("Tangents", "bold $accent"),
            " · new conversation with ",
            (strip_control(model_label(model)), "bold"),
            "\n",
            keys,
        )
    return Content.assemble(
        ("Welcome to Tangents.", "bold $accent"),
        "\n\n",
        "No API key is set, so you are talking to ",
        ("demo (offline)", "bold"),
        ": a built-in model that answers without any network, to try every feature.\n\n",
        "To talk to a real model, set a key and start again:\n",
        ("  export ANTHROPIC_API_KEY=…", "bold"),
        "   Claude\n",
        ("  export OPENAI_API_KEY=…", "bold"),
        "      GPT\n",
        "or use a local OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio):\n",
        ("  tangents --model openai/MODEL --api-base http://localhost:11434/v1", "bold"),
        "\n\n",
        keys,
    )
