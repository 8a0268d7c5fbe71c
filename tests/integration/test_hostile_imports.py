"""``sessions import`` of hostile files, end to end: one line and nothing
written, or a repaired session that the database takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.formats.test_tangents_json import _document
from tests.integration.cli import run


def test_deep_nesting_is_one_line_and_nothing_is_imported(tmp_path: Path) -> None:
    db, file = tmp_path / "t.db", tmp_path / "deep.json"
    file.write_text(
        '[\n{"role": "user", "content": "hi"},\n' + "[" * 100_000 + "]" * 100_000 + "\n]"
    )
    result = run("--db", str(db), "sessions", "import", str(file))
    assert result.returncode == 1
    assert result.stderr == (
        f"tangents: cannot import {file}: line 3: nested more than 200 levels deep "
        "(nothing was imported)\n"
    )
    assert json.loads(run("--db", str(db), "sessions", "list", "--json").stdout) == []


def test_a_lone_surrogate_in_a_title_is_repaired_and_saved(tmp_path: Path) -> None:
    db, file = tmp_path / "t.db", tmp_path / "export.json"
    document = json.loads(_document())
    document["session"]["title"] = "broken \ud800 title"
    file.write_text(json.dumps(document, indent=2))
    result = run("--db", str(db), "sessions", "import", str(file))
    assert result.returncode == 0, result.stderr
    assert "replaced with U+FFFD" in result.stderr
    [listed] = json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)
    assert listed["title"] == "broken \ufffd title"


FIXTURES = Path(__file__).parent.parent / "fixtures"


def with_number(text: str, digits: str) -> str:
    """``text`` (JSON, or JSON lines) with a field holding ``digits`` added to its first object."""
    first, _, rest = text.partition("\n")
    document = json.loads(first)
    document["extra"] = "__NUMBER__"
    return json.dumps(document).replace('"__NUMBER__"', digits) + "\n" + rest


@pytest.mark.parametrize(
    "source",
    ["tangents", "openai", "pi/linear-v1.jsonl", "claude/linear.jsonl"],
)
@pytest.mark.parametrize("digits", ["1" * 5000, "1" + "0" * 400], ids=["5000-digits", "1e400"])
def test_a_huge_integer_is_one_line_in_every_format(
    tmp_path: Path, source: str, digits: str
) -> None:
    db, file = tmp_path / "t.db", tmp_path / "import.json"
    if source == "tangents":
        text = json.dumps(json.loads(_document()))
    elif source == "openai":
        text = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    else:
        text = (FIXTURES / source).read_text()
    file.write_text(with_number(text, digits))
    result = run("--db", str(db), "sessions", "import", str(file))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "digits" in lines[0], result.stderr
    assert json.loads(run("--db", str(db), "sessions", "list", "--json").stdout) == []
