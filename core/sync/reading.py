"""Reading the folder: every journal whole, or only what grew since a cursor.

Both say where each read stopped (:data:`~core.sync.cursor.Marks`), so the
next sync starts from what was actually read, not from what the folder held
a moment later.
"""

from __future__ import annotations

from pathlib import Path

from core.sync import folder as layout
from core.sync.cursor import Marks
from core.sync.journal import read_lines
from core.sync.merge import FolderView
from core.sync.seal import PLAIN, Seal

_KINDS = (layout.ENTRIES, layout.REGISTERS)


def read_folder(folder: Path, device: str, seal: Seal = PLAIN) -> tuple[FolderView, Marks]:
    """Every device's journals, whole: this device's first, so its own copy
    of an entry is the one kept."""
    return _read(folder, device, seal, {})


def read_changes(
    folder: Path, device: str, seal: Seal, since: Marks
) -> tuple[FolderView, Marks] | None:
    """What other devices' journals gained since ``since``: a journal that only
    grew is read from its mark on, one rewritten or new is read whole. None
    when this device's own journals are not as ``since`` says (another hand
    changed them): then only a whole read tells what the folder lacks."""
    for kind in _KINDS:
        own = layout.own_journal(folder, device, kind)
        name = f"{device}/{own.name}"
        if read_lines(own, since.get(name)).objects or (own.exists() != (name in since)):
            return None
    return _read(folder, device, seal, since)


def _read(folder: Path, device: str, seal: Seal, since: Marks) -> tuple[FolderView, Marks]:
    view = FolderView()
    marks: Marks = {}
    for name in layout.devices(folder, device):
        for kind, add in (
            (layout.ENTRIES, view.add_entry_line),
            (layout.REGISTERS, view.add_register_line),
        ):
            for path in layout.journal_files(folder, name, kind):
                key = f"{name}/{path.name}"
                lines = read_lines(path, since.get(key))
                if lines.mark is None:
                    continue
                marks[key] = lines.mark
                view.skipped += lines.skipped
                shut = 0
                for line in lines.objects:
                    opened = seal.open(line, name, kind)
                    if opened is None:
                        shut += 1
                    else:
                        add(name, opened)
                if shut:
                    view.refused.append(
                        f"{shut} line(s) of device {name}'s {path.name} do not open "
                        "(changed, or sealed with another passphrase): refused"
                    )
    return view, marks
