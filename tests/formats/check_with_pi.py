"""Check a Tangents pi export against the real pi (opt in, not part of the suite:
CI must not depend on npm).

    npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1
    python -m tests.formats.check_with_pi /tmp/pi/node_modules/.bin/pi

Writes the sample session (tests/formats/sample.py) as a pi file, runs
``pi --offline --export FILE out.html`` with a throwaway HOME and agent
directory, and reads back the session data pi embeds in the page: every
entry must be there with its parent, the leaf must be the sample's leaf, and
the labels must be on their entries. Prints what it checked; exit 1 on any
difference.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from core.formats.pi_export import to_pi_jsonl
from tests.formats.sample import sample_session


def pi_reads(pi: str, text: str) -> dict:
    """The session data pi embedded in its HTML export of ``text``."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "home").mkdir()
        session = root / "session.jsonl"
        session.write_text(text)
        out = root / "out.html"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(root / "home"),
            "PI_CODING_AGENT_DIR": str(root / "home" / "agent"),
        }
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
    for problem in problems:
        print("problem:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
