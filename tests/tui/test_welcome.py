"""The text above an empty conversation says what pasting a path attaches:
files of every kind the input takes (images, audio, PDFs), not only images."""

from __future__ import annotations

import pytest

from tui.screens.welcome import welcome_text


@pytest.mark.parametrize("no_key", [False, True])
def test_the_welcome_says_a_pasted_path_attaches_images_audio_and_pdfs(no_key: bool) -> None:
    text = welcome_text("openai/gpt-4o", no_key=no_key, overrides={}).plain
    assert "paste a file's path (image, audio, PDF) to attach it" in text
    assert "image path" not in text
