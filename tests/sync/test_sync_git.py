"""A sync folder that is a git clone with an upstream: ``tangents sync``
commits its own files, pulls with rebase and pushes (issue 34, git transport),
against a local bare repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from tests.sync.machines import Machine, continuations_at


def git_env(tmp_path: Path) -> dict[str, str]:
    """Git with no user or system configuration, and a home in ``tmp_path``."""
    return {
        "HOME": str(tmp_path),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.invalid",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.invalid",
    }


def git(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        ["git", *args], env={**os.environ, **env}, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


class GitMachine(Machine):
    env: dict[str, str]

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return super().run(*args, env={**self.env, **kwargs.pop("env", {})}, **kwargs)


def clones(tmp_path: Path) -> tuple[Path, GitMachine, GitMachine]:
    env = git_env(tmp_path)
    remote = tmp_path / "remote.git"
    git(env, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed = tmp_path / "seed"
    git(env, "clone", "--quiet", str(remote), str(seed))
    (seed / "README").write_text("sessions\n")
    git(env, "-C", str(seed), "add", "README")
    git(env, "-C", str(seed), "commit", "--quiet", "-m", "start")
    git(env, "-C", str(seed), "push", "--quiet", "origin", "HEAD:main")
    machines = []
    for name in ("a", "b"):
        folder = tmp_path / f"clone-{name}"
        git(env, "clone", "--quiet", str(remote), str(folder))
        machine = GitMachine.make(tmp_path, name, folder)
        machine.env = env
        machines.append(machine)
    return remote, machines[0], machines[1]


def test_two_homes_through_a_bare_remote_keep_both_continuations(tmp_path: Path) -> None:
    remote, a, b = clones(tmp_path)
    session_id = a.ask("the start")
    a.sync()
    assert b.sync()["received"]["entries"] == 3
    fork = a.show(session_id)["leaf_id"]
    a.ask("continued on a", "--session", session_id)
    b.ask("continued on b", "--session", session_id)
    a.sync()
    b.sync()
    a.sync()
    for machine in (a, b):
        assert continuations_at(machine, session_id, fork) == ["continued on a", "continued on b"]
    # Every device's files reached the remote, and nothing is left uncommitted.
    tracked = git(a.env, "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main")
    for machine in (a, b):
        assert f"tangents/{machine.device()}/entries.jsonl" in tracked
        assert git(machine.env, "-C", str(machine.folder), "status", "--porcelain") == ""


def test_a_remote_that_refuses_is_a_one_line_error(tmp_path: Path) -> None:
    remote, a, _ = clones(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are closed' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.ask("hello")
    result = a.run("sync", "--folder", str(a.folder))
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "the remote refused the push" in result.stderr
    assert "pre-receive hook declined" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_sealed_folder_travels_through_git_with_its_marker(tmp_path: Path) -> None:
    _, a, b = clones(tmp_path)
    session_id = a.ask("a secret kept in the cloud")
    sealed = {"SYNC_KEY": "one passphrase"}
    for machine in (a, b, a):
        result = machine.run(
            "sync", "--folder", str(machine.folder), "--key-env", "SYNC_KEY", env=sealed
        )
        assert result.returncode == 0, result.stderr
    assert session_id in b.session_ids()
    assert "sealed.json" in git(a.env, "-C", str(a.folder), "ls-files")
