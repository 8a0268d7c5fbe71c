"""Two (or more) "machines" for sync tests: each its own TANGENTS_HOME (database,
state, device id), all sharing one folder, driving the real ``tangents``."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.integration.cli import run


@dataclass
class Machine:
    home: Path
    folder: Path

    @classmethod
    def make(cls, tmp_path: Path, name: str, folder: Path) -> Machine:
        home = tmp_path / name
        home.mkdir()
        folder.mkdir(exist_ok=True)
        return cls(home, folder)

    @property
    def db(self) -> Path:
        return self.home / "tangents.db"

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return run(*args, env={"TANGENTS_HOME": str(self.home), **kwargs.pop("env", {})}, **kwargs)

    def sync(self) -> dict[str, Any]:
        """One ``tangents sync --json``, which must succeed."""
        result = self.run("sync", "--folder", str(self.folder), "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def ask(self, text: str, *where: str) -> str:
        """Send ``text`` with the offline demo model (``where``: ``--session ID``,
        ``-c``...) and return the session's id."""
        result = self.run("-m", "demo", *where, "--json", "-p", text)
        assert result.returncode == 0, result.stderr
        for line in result.stdout.splitlines():
            event = json.loads(line)
            if event.get("type") == "session":
                return str(event["id"])
        raise AssertionError(result.stdout)

    def session_ids(self) -> set[str]:
        result = self.run("sessions", "list", "--all", "--json")
        assert result.returncode == 0, result.stderr
        return {row["id"] for row in json.loads(result.stdout)}

    def export(self, session_id: str) -> dict[str, Any]:
        result = self.run("sessions", "export", session_id, "--format", "json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def show(self, session_id: str) -> dict[str, Any]:
        result = self.run("sessions", "show", session_id, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def device(self) -> str:
        return str(json.loads((self.home / "state.json").read_text())["sync_device"])


def entry_map(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An exported session's entries by id."""
    return {entry["id"]: entry for entry in document["entries"]}


def continuations_at(machine: Machine, session_id: str, fork: str) -> list[str]:
    """The first texts of the entries ``machine`` holds right after ``fork``, sorted."""
    entries = entry_map(machine.export(session_id)).values()
    return sorted(e["payload"]["content"][0]["text"] for e in entries if e["parent_id"] == fork)
