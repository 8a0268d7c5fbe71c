"""What a compacted conversation looks like.

Update after a deliberate change with ``pytest tests/tui/test_compaction_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fake_provider import Reply

from tests.screenshots import steady_cursor
from tests.tui.helpers import send, settle
from tui.cli import build_parser
from tui.modes.launch import build_app, prepare_launch
from tui.widgets.markers import CompactionMarker

SUMMARY = """## Goal
Plan the **garden** for spring.

## Next steps
- order seeds
- fix the fence"""


def test_expanded_compaction_marker_and_a_yellow_footer(
    snap_compare, fake_provider, fake_args, tmp_path: Path, fixed_ids: None
) -> None:
    """Dimmed history above the kept tail, the marker "compacted 4,100 tokens" expanded to its
    Markdown summary, and the footer's context (1.5k of a 2k window, 75%) in the warning colour."""
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        '[compaction]\nreserve_tokens = 100\n\n[context_windows]\n"openai/test" = 2000\n'
    )
    fake_provider.script(
        *[
            Reply(text=text, usage={"input_tokens": 4000, "output_tokens": 100})
            for text in (
                "Beans, peas, lettuce and radishes: they forgive clay soil and half a day of shade.",
                "Marigolds along the beans keep pests away; sweet peas can climb the old fence.",
                "By the gate, on the flat corner, where it shades nothing you plan to grow.",
            )
        ],
        Reply(text=SUMMARY),
        Reply(
            text="Seeds first, then the fence.", usage={"input_tokens": 1400, "output_tokens": 100}
        ),
    )
    args = build_parser().parse_args(["--db", str(tmp_path / "t.db"), *fake_args])
    app, store = asyncio.run(build_app(args, prepare_launch(args)))

    async def run_before(pilot) -> None:
        await pilot.pause()
        steady_cursor(pilot)
        for text in (
            "Which vegetables grow well in clay soil with half a day of shade?",
            "And which flowers would go with them along the fence?",
            "Where does the shed go?",
            "/compact",
            "What first?",
        ):
            await send(pilot, text)
        marker = pilot.app.screen.query_one(CompactionMarker)
        marker.focus()
        await pilot.press("enter")
        await settle(pilot)

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(100, 40))
    finally:
        asyncio.run(store.close())
