"""An image in the chat: a caption and the picture, or a note saying why not.

Images are drawn by textual-image with what the terminal answered at launch
(:mod:`tui.terminal_answers`). It and Pillow (slow imports) load with the
first image, in the thread that decodes it: not with the chat view, where a
first message typed at launch and its request would wait for them.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from core.sessions.content import ImageContent
from tui.terminal_answers import textual_image_widgets
from tui.widgets._context import ViewContext
from tui.widgets._text import clean, plain

if TYPE_CHECKING:
    from tui.widgets._images import DecodedImage

MAX_ROWS = 16
"""An image is at most this many terminal rows high."""
CELL_ASPECT = 2.0
"""A terminal cell is about twice as high as it is wide."""

_IMAGE_CLASSES = {"auto": "Image", "halfcell": "HalfcellImage", "unicode": "UnicodeImage"}
"""textual-image's widget for each ``image_mode``."""


def display_rows(width: int, height: int, max_rows: int = MAX_ROWS, max_cols: int = 80) -> int:
    """Rows an image of ``width`` x ``height`` pixels takes (about 10x20 px per cell)."""
    if width <= 0 or height <= 0:
        return max_rows // 2
    cols = min(max_cols, math.ceil(width / 10))
    rows = math.ceil(cols * height / width / CELL_ASPECT)
    return max(1, min(max_rows, rows, math.ceil(height / 20)))


class ImageView(Widget):
    """One image, loaded through the chat view's blob loader and decoded in a thread.

    Missing, unreadable, truncated or oversized images show a one-line note.
    """

    DEFAULT_CSS = """
    ImageView {
        height: auto;
        width: 1fr;
        margin: 0 0 1 0;
        & > .image-caption {
            color: $text-muted;
        }
        & > .image-note {
            color: $text-warning;
        }
        & > .image-picture {
            width: auto;
        }
    }
    """

    def __init__(
        self,
        image: ImageContent,
        context: ViewContext | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.image = image
        self.context = context or ViewContext()
        self.decoded: DecodedImage | None = None
        """The decoded image once loaded (``None`` before)."""
        self._rows = display_rows(image.width, image.height)

    def compose(self) -> ComposeResult:
        yield Static(self._caption(), markup=False, classes="image-caption")
        if self.context.image_mode != "none":
            # Reserve the picture's rows now so the layout does not jump when it loads.
            placeholder = Static("", classes="image-placeholder")
            placeholder.styles.height = self._rows
            yield placeholder

    def on_mount(self) -> None:
        self.run_worker(self._load(), group="image", exit_on_error=False)

    @property
    def caption(self) -> str:
        """The caption as shown (``image/png 800×600 · 12 KB``)."""
        return self._caption().plain

    def _caption(self) -> Content:
        if self.decoded is not None:
            return plain(self.decoded.caption)
        image = self.image
        dims = f" {image.width}×{image.height}" if image.width and image.height else ""
        return plain(f"{image.media_type}{dims}")

    async def _load(self) -> None:
        loader = self.context.blob_loader
        note: str | None = None
        decoded: DecodedImage | None = None
        sha = clean(self.image.sha256)[:12]
        if loader is None:
            note = "image not available here"
        else:
            try:
                blob = await loader(self.image.sha256)
            except Exception as error:  # the store failed: say so, do not crash the view
                blob = None
                note = f"could not load image: {clean(type(error).__name__)}"
            if blob is None and note is None:
                note = f"image missing ({sha}…)"
            elif blob is not None:
                media_type = blob.media_type or self.image.media_type
                decoded = await asyncio.to_thread(_decode, blob.data, media_type)
                note = decoded.note
        await self._show(decoded, note)

    async def _show(self, decoded: DecodedImage | None, note: str | None) -> None:
        self.decoded = decoded
        caption = self.query_one(".image-caption", Static)
        caption.update(self._caption())
        placeholder = self.query(".image-placeholder")
        if note is not None or decoded is None or decoded.image is None:
            self.add_class("-note")
            await placeholder.remove()
            await self.mount(
                Static(plain(f"⚠ {note or 'image cannot be shown'}"), classes="image-note")
            )
            return
        if self.context.image_mode == "none":
            return
        widgets = textual_image_widgets()  # loaded by the decoding thread
        image_class = getattr(widgets, _IMAGE_CLASSES.get(self.context.image_mode, "Image"))
        picture = image_class(decoded.image, classes="image-picture")
        picture.styles.height = display_rows(decoded.width, decoded.height)
        with self.app.batch_update():
            await placeholder.remove()
            await self.mount(picture)


def _decode(data: bytes, media_type: str) -> DecodedImage:
    """Decode an image (in a thread): Pillow and textual-image are imported
    here, not on the app's thread, the first time."""
    from tui.widgets._images import decode_image

    textual_image_widgets()
    return decode_image(data, media_type)
