"""Check a Tangents pi export against the real pi (opt in, not part of the suite:
CI must not depend on npm).

    npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1
    python -m tests.formats.check_with_pi /tmp/pi/node_modules/.bin/pi

Writes the sample session (tests/formats/sample.py) as a pi file, with a
throwaway HOME and agent directory:

1. ``pi --offline --export FILE out.html`` and reads back the session data pi
   embeds in the page: every entry must be there with its parent, the leaf
   must be the sample's leaf, and the labels must be on their entries.
2. ``pi --session FILE -p "Go on"`` against the fake provider
   (tests/fake_provider.py, OpenAI chat completions on 127.0.0.1, declared in
   the agent directory's models.json): pi must continue from the leaf,
   sending what Tangents would send there (the compaction summary, then the
   messages kept after it), and the file pi appended to must import back into
   Tangents with its reply as the new leaf.

Prints what it checked; exit 1 on any difference.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from core.formats.pi import from_pi_jsonl
from core.formats.pi_export import to_pi_jsonl
from core.sessions.content import TextContent
from core.sessions.context import build_context
from tests.fake_provider import FakeProvider
from tests.formats.sample import sample_session
from tests.formats.tree_shape import path_to, shape

FAKE_MODEL = "fake-model"


def _pi_env(root: Path) -> dict[str, str]:
    (root / "home" / "agent").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "PI_CODING_AGENT_DIR": str(root / "home" / "agent"),
    }


def pi_reads(pi: str, text: str) -> dict:
    """The session data pi embedded in its HTML export of ``text``."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        session = root / "session.jsonl"
        session.write_text(text)
        out = root / "out.html"
        env = _pi_env(root)
        subprocess.run(
            [pi, "--offline", "--export", str(session), str(out)],
            check=True,
            env=env,
            capture_output=True,
            timeout=120,
        )
        page = out.read_text()
    match = re.search(r'<script id="session-data" type="application/json">([^<]*)</script>', page)
    if match is None:
        raise SystemExit("pi's page holds no session data")
    return json.loads(base64.b64decode(match.group(1)))


def pi_continues(pi: str, text: str, prompt: str) -> tuple[list[dict], str]:
    """The chat request pi sends when it resumes the session ``text`` (whose
    ``cwd`` must be the placeholder ``CWD``, pi refuses a folder that is not
    there) with ``prompt``, and the session file as pi left it."""
    with tempfile.TemporaryDirectory() as scratch, FakeProvider() as server:
        root = Path(scratch)
        env = _pi_env(root)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"{server.base_url}/v1",
                    "api": "openai-completions",
                    "apiKey": "not-a-key",
                    "models": [{"id": FAKE_MODEL}],
                }
            }
        }
        (root / "home" / "agent" / "models.json").write_text(json.dumps(models))
        session = root / "session.jsonl"
        session.write_text(text.replace('"cwd": "CWD"', f'"cwd": {json.dumps(scratch)}', 1))
        subprocess.run(
            [pi, "--offline", "--session", str(session), "--provider", "fake"]
            + ["--model", FAKE_MODEL, "--no-tools", "-nc", "-ne", "-ns", "-np", "-p", prompt],
            check=True,
            env=env,
            cwd=scratch,
            capture_output=True,
            timeout=120,
        )
        requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
        if len(requests) != 1:
            raise SystemExit(f"pi sent {len(requests)} chat requests, not 1")
        return requests[0].body["messages"], session.read_text()


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(part.get("text", "") for part in content)


def check_continuation(pi: str) -> list[str]:
    """pi resumes a Tangents export where Tangents would, with the same messages."""
    sample = sample_session()
    info = replace(sample.info, cwd="CWD")
    text = to_pi_jsonl(info, sample.entries, sample.labels, sample.blobs)
    sent, after = pi_continues(pi, text, "Go on")
    problems = []
    path = path_to(sample.entries, sample.info.leaf_id)
    ours = build_context(path, "anthropic/claude-x").messages
    theirs = [m for m in sent if m["role"] != "system"]
    expected = [
        (m.role, "".join(b.text for b in m.content if isinstance(b, TextContent))) for m in ours
    ] + [("user", "Go on")]
    got = [(m["role"], _texts(m["content"])) for m in theirs]
    summary = next(e.payload.summary for e in path if e.type == "compaction")
    # Each tool words the compaction summary's frame its own way: compare the summary itself.
    if len(got) != len(expected) or any(
        g[0] != e[0] or (g[1] != e[1] and not (summary in g[1] and summary in e[1]))
        for g, e in zip(got, expected, strict=False)
    ):
        problems.append(f"pi sent {got}, Tangents would send {expected}")
    again = from_pi_jsonl(after)
    leaf = path_to(again.entries, again.info.leaf_id)
    if [e.message.text for e in leaf[-2:] if e.message] != ["Go on", "echo: Go on"]:
        problems.append("pi's exchange is not the leaf of the file pi appended to")
    new = {e.id for e in leaf[-2:]}
    if shape([e for e in again.entries if e.id not in new]) != shape(sample.entries):
        problems.append("the tree pi appended to did not import back the same")
    print(f"pi continued from the leaf with {len(theirs)} messages; its file imports back")
    return problems


def main(pi: str) -> int:
    sample = sample_session()
    text = to_pi_jsonl(sample.info, sample.entries, sample.labels, sample.blobs)
    data = pi_reads(pi, text)
    done = subprocess.run([pi, "--version"], capture_output=True, text=True)
    version = (done.stdout or done.stderr).strip()
    entries = {e["id"]: e for e in data["entries"]}
    problems = []
    for entry in sample.entries:
        read = entries.get(entry.id)
        parents = {entry.parent_id, f"{entry.parent_id}-thinking"}
        if read is None or read["parentId"] not in parents:
            problems.append(f"entry {entry.id} missing or with another parent")
    leaf = entries.get(data["leafId"])
    # pi's leaf is the last line (the session_info below the labels below our leaf).
    while leaf is not None and leaf["type"] in ("label", "session_info", "custom"):
        if leaf["id"] in {e.id for e in sample.entries}:
            break
        leaf = entries.get(leaf["parentId"])
    if leaf is None or leaf["id"] != sample.info.leaf_id:
        problems.append(f"pi's position is {data['leafId']}, not below {sample.info.leaf_id}")
    labels = {e["targetId"]: e["label"] for e in data["entries"] if e["type"] == "label"}
    if labels != sample.labels:
        problems.append(f"labels differ: {labels}")
    print(f"pi {version}: read {len(data['entries'])} entries, leaf {data['leafId']}")
    problems += check_continuation(pi)
    for problem in problems:
        print("problem:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
