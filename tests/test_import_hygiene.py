"""Layering and start-up cost: core and storage never import Textual, and nothing
on the way to --help, --version or the first frame imports a provider SDK."""

from __future__ import annotations

import subprocess
import sys

SDKS = ("litellm", "anthropic", "openai")


def modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_core_and_storage_never_import_textual() -> None:
    loaded = modules_after(
        "import pkgutil, importlib, core, storage\n"
        "for pkg in (core, storage):\n"
        "    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(info.name)"
    )
    assert "core.sessions.session" in loaded and "storage.store" in loaded
    assert not {m for m in loaded if m == "textual" or m.startswith(("textual.", "tui"))}


def test_core_imports_no_provider_sdk_until_a_request() -> None:
    loaded = modules_after(
        "import core.chat.turn, core.sessions.session, core.sessions.context, core.settings, core.providers.base"
    )
    assert not loaded & set(SDKS)


def test_help_and_version_import_no_sdk_and_no_textual() -> None:
    for flag in ("--help", "--version"):
        loaded = modules_after(
            "import sys, contextlib, io\n"
            "from tui.cli import main\n"
            f"sys.argv = ['tangents', '{flag}']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main()\n    except SystemExit:\n        pass"
        )
        assert "tui.cli" in loaded
        assert not loaded & set(SDKS + ("textual",))


def import_cycles(*, type_only_imports: bool = False) -> list[tuple[str, str]]:
    """Pairs of modules of core, storage and tui that import each other, directly
    or through others; with ``type_only_imports``, imports under TYPE_CHECKING
    count too (a type that needs the module above it is a circle all the same)."""
    import grimp

    graph = grimp.build_graph(
        "core",
        "storage",
        "tui",
        exclude_type_checking_imports=not type_only_imports,
        cache_dir=None,  # a cache kept across edits missed a removed import
    )
    return sorted(
        {
            (min(module, imported), max(module, imported))
            for module in graph.modules
            for imported in graph.find_modules_directly_imported_by(module)
            if graph.chain_exists(importer=imported, imported=module)
        }
    )


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert import_cycles() == []


def test_no_import_circle_even_through_type_only_imports() -> None:
    """The chat screen's collaborators (branches, /compare) name the screen
    through protocols of their own, not by importing it (issue 31)."""
    assert import_cycles(type_only_imports=True) == []


def circles_between_children(package: str) -> list[tuple[str, str]]:
    """Pairs of ``package``'s children (rooms and loose modules, each taken with
    everything inside it) that import each other, type-only imports included."""
    import grimp

    graph = grimp.build_graph("core", "storage", "tui", cache_dir=None)
    children = sorted(graph.find_children(package))
    return [
        (a, b)
        for i, a in enumerate(children)
        for b in children[i + 1 :]
        if graph.chain_exists(importer=a, imported=b, as_packages=True)
        and graph.chain_exists(importer=b, imported=a, as_packages=True)
    ]


def test_no_circle_between_the_rooms_at_the_top_of_core_and_tui() -> None:
    """Issue 31: core.settings and core.providers, core.providers and core.chat,
    tui.keymap and tui.widgets leaned on each other."""
    assert circles_between_children("core") == []
    assert circles_between_children("tui") == []
