"""The adversarial variant of tests/integration/test_no_raw_controls.py
(issue 37): every control code point a terminal obeys (each C0 but tab and
newline, DEL, each C1, each bidi control), alone and in sequences, in every
field of the hostile session, through every export format and flag and every
``sessions`` command. Run with ``TANGENTS_LONG_TESTS=1``."""

from __future__ import annotations

import json

import pytest

from tests.integration.cli import run
from tests.integration.test_no_raw_controls import (
    COMMANDS,
    EXPORTS,
    FILE_NAME,
    HOSTILE,
    SESSION_ID,
    hostile_document,
    raw_controls,
)
from tests.long_suite import long_only

pytestmark = [
    pytest.mark.slow,
    long_only,
]
EVERY_CONTROL = [
    *(chr(c) for c in range(1, 32) if chr(c) not in "\t\n"),
    *(chr(c) for c in range(0x7F, 0xA0)),
    *(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))),
]
ALL = " ".join(f"<{c}x{c}{c}\x1b[{c}m>" for c in EVERY_CONTROL) + " " + HOSTILE


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("every-control")
    text = json.dumps(hostile_document())
    text = text.replace(json.dumps(HOSTILE)[1:-1], json.dumps(ALL)[1:-1])
    assert json.dumps(ALL)[1:-1] in text
    (folder / FILE_NAME).write_text(text, encoding="utf-8")
    database = str(folder / "t.db")
    done = run("--db", database, "sessions", "import", str(folder / FILE_NAME))
    assert done.returncode == 0, done.stderr
    return database


def output(db: str, *args: str) -> list[str]:
    done = run("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return raw_controls(done.stdout.encode()) + raw_controls(done.stderr.encode())


@pytest.mark.parametrize("flags", EXPORTS, ids=" ".join)
def test_every_control_in_every_export_format(db: str, flags: tuple[str, ...]) -> None:
    assert output(db, "sessions", "export", SESSION_ID, "--format", *flags) == []


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_control_in_every_sessions_command(db: str, command: tuple[str, ...]) -> None:
    assert output(db, "sessions", *command) == []
