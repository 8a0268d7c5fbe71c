"""Where print mode's request goes is decided once (issues 31 and 32): the
base URL the key is checked for is the one the request is sent to, and
``--api-base`` wins over an ``[[endpoints]]`` entry's ``base_url``."""

from __future__ import annotations

from pathlib import Path

from fake_provider import FakeProvider, Reply

from tests.integration.cli import run


def _chats(server: FakeProvider) -> list[str]:
    return [r.body["model"] for r in server.requests if r.path.endswith("/chat/completions")]


def _lab_config(tmp_path: Path, base_url: str, key_env: str | None = None) -> Path:
    config = tmp_path / "config.toml"
    key = f'api_key_env = "{key_env}"\n' if key_env else ""
    config.write_text(
        f'[[endpoints]]\nname = "lab"\nbase_url = "{base_url}/v1"\n{key}models = ["qwen3"]\n'
    )
    return config


def test_api_base_wins_over_the_configured_endpoint(tmp_path: Path) -> None:
    with FakeProvider() as configured, FakeProvider() as named:
        named.script(Reply(text="from the server named on the command line"))
        config = _lab_config(tmp_path, configured.base_url)
        result = run(
            "--db",
            str(tmp_path / "t.db"),
            "--config",
            str(config),
            "-m",
            "lab/qwen3",
            "--api-base",
            f"{named.base_url}/v1",
            "-p",
            "hi",
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == "from the server named on the command line\n"
        assert _chats(named) == ["qwen3"]
        assert _chats(configured) == []


def test_the_endpoint_key_goes_with_its_model_to_the_named_server(tmp_path: Path) -> None:
    with FakeProvider() as configured, FakeProvider() as named:
        config = _lab_config(tmp_path, configured.base_url, "LAB_SERVER_TOKEN")
        result = run(
            "--db",
            str(tmp_path / "t.db"),
            "--config",
            str(config),
            "-m",
            "lab/qwen3",
            "--api-base",
            f"{named.base_url}/v1",
            "-p",
            "hi",
            env={"LAB_SERVER_TOKEN": "lab-secret-token-123"},
        )
        assert result.returncode == 0, result.stderr
        assert named.last_request.headers.get("authorization") == "Bearer lab-secret-token-123"
        assert _chats(configured) == []


def test_the_key_is_checked_for_the_server_the_request_goes_to(
    fake_provider: FakeProvider, tmp_path: Path
) -> None:
    """``OPENAI_BASE_URL`` names a local server: it needs no OpenAI key, and
    the request goes there, not to api.openai.com."""
    fake_provider.script(Reply(text="from the local server"))
    result = run(
        "--db",
        str(tmp_path / "t.db"),
        "-m",
        "openai/qwen3",
        "-p",
        "hi",
        env={"OPENAI_BASE_URL": f"{fake_provider.base_url}/v1"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from the local server\n"
    assert _chats(fake_provider) == ["qwen3"]
