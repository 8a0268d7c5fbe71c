"""An endpoint inside synced entries is data: the other machine sends no
request (and no key) to a host its user never named."""

from __future__ import annotations

import json
from pathlib import Path

from fake_provider import FakeProvider, Reply

from tests.integration.cli import CANARY_OPENAI
from tests.sync.machines import Machine


def test_a_synced_session_sends_nothing_to_its_endpoint(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    folder = tmp_path / "shared"
    a, b = Machine.make(tmp_path, "a", folder), Machine.make(tmp_path, "b", folder)
    fake_provider.script(Reply(text="hello from a's server"))
    made = a.run(
        "-m", "openai/smollm2", "--api-base", fake_provider.base_url + "/v1",
        "--json", "-p", "hi", env={"OPENAI_API_KEY": "sk-a-own-key"},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    session_id = json.loads(made.stdout.splitlines()[0])["id"]
    asked = len(fake_provider.requests), len(fake_provider.info_requests)
    a.sync()
    b.sync()
    assert fake_provider.base_url in json.dumps(b.export(session_id))
    result = b.run(
        "--session", session_id, "-p", "continued on b", env={"OPENAI_API_KEY": CANARY_OPENAI}
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (len(fake_provider.requests), len(fake_provider.info_requests)) == asked
    assert "sk-a-own-key" not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
