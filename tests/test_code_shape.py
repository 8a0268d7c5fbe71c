"""The shape the code keeps (issue 15): front ends stay thin consumers of the
conversation, and core passes small objects rather than long argument lists."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_PARAMETERS = 8
PRINT_MODE_MAX_LINES = 150


def parameter_counts(package: str) -> dict[str, int]:
    """``path:line name`` -> parameters (self and cls not counted, *args and **kwargs counted)."""
    counts: dict[str, int] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                count = len([n for n in names if n not in ("self", "cls")])
                count += (args.vararg is not None) + (args.kwarg is not None)
                counts[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = count
    return counts


def test_no_function_in_core_takes_more_than_eight_parameters() -> None:
    counts = parameter_counts("core")
    assert len(counts) > 500, "the scan found core's functions"
    assert {name: n for name, n in counts.items() if n > MAX_PARAMETERS} == {}


def test_print_mode_stays_a_short_consumer() -> None:
    lines = (ROOT / "tui" / "modes" / "print_mode.py").read_text(encoding="utf-8").count("\n")
    assert lines <= PRINT_MODE_MAX_LINES


def modules_importing(name: str) -> set[str]:
    found = set()
    for package in ("core", "storage", "tui"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                if name in names:
                    found.add(str(path.relative_to(ROOT)))
    return found


def test_the_garbage_collector_has_one_owner() -> None:
    """Issue #31: storage's thread, the SDK importer and the stream each changed
    it without knowing of the others; only the app's policy module may."""
    assert modules_importing("gc") == {"tui/internals/gc_policy.py"}


MAX_LOOSE_MODULES = 8


def test_at_most_eight_modules_loose_at_the_top_of_core_and_tui() -> None:
    """Issue #31: the rest lives in rooms (packages) whose names say what they hold."""
    for package in ("core", "tui"):
        loose = sorted(p.name for p in (ROOT / package).glob("*.py"))
        assert len(loose) <= MAX_LOOSE_MODULES, (package, loose)
