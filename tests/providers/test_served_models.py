"""The names a server's model list gives the picker: only short printable text,
a bounded number of them, from either list shape."""

from __future__ import annotations

from core.providers.served_models import MAX_MODELS, model_names


def test_openai_and_ollama_lists() -> None:
    assert model_names({"data": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}) == ["a", "b"]
    assert model_names({"models": [{"name": "llama3:8b"}]}) == ["llama3:8b"]


def test_hostile_names_are_left_out() -> None:
    answer = {
        "data": [
            {"id": "\x1b]52;c;cHduZWQ=\x07evil"},
            {"id": "x" * 10_000},
            {"id": 5},
            {"id": ""},
            "not an entry",
            {"id": "fine"},
        ]
    }
    assert model_names(answer) == ["fine"]
    assert model_names([1, 2]) == [] and model_names({"data": "x"}) == []


def test_a_huge_list_is_cut() -> None:
    answer = {"data": [{"id": f"m{i}"} for i in range(100_000)]}
    assert len(model_names(answer)) == MAX_MODELS
