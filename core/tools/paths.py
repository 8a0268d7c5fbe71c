"""Where the built-in tools may read and write: the working directory the app
was started in, plus any extra roots the user allowed (``--extra-root``, the
``extra_roots`` setting).

A path is resolved the way the OS would follow it (relative to the working
directory, ``..`` collapsed, every symlink followed) and refused when the
result is not inside a root. So ``../x``, ``/etc/passwd`` and a link inside the
directory pointing outside it are all refused, with a message saying why.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.tools.errors import ToolError

WIDEN_HINT = "the user can allow more directories with --extra-root DIR or the extra_roots setting"


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


@dataclass(frozen=True)
class Roots:
    cwd: Path
    """The working directory (resolved); relative paths start here."""
    extra: tuple[Path, ...] = ()

    @classmethod
    def create(
        cls, cwd: str | os.PathLike[str] | None = None, extra: Iterable[str | os.PathLike[str]] = ()
    ) -> Roots:
        base = _real(cwd if cwd is not None else os.getcwd())
        extras = []
        for root in extra:
            p = Path(os.path.expanduser(root))
            extras.append(_real(p if p.is_absolute() else base / p))
        return cls(base, tuple(dict.fromkeys(e for e in extras if e != base)))

    @property
    def all(self) -> tuple[Path, ...]:
        return (self.cwd, *self.extra)

    def contains(self, real: Path) -> bool:
        return any(real == root or root in real.parents for root in self.all)

    def root_of(self, real: Path) -> Path:
        """The innermost root holding ``real`` (a path :meth:`resolve` returned)."""
        holding = [root for root in self.all if real == root or root in real.parents]
        if not holding:
            raise ValueError(f"{real} is outside every root")
        return max(holding, key=lambda root: len(root.parts))

    def resolve(self, path: str) -> Path:
        """The real path ``path`` names, or :class:`ToolError` if it leads outside every root."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("the path is empty")
        if "\x00" in path:
            raise ToolError("the path contains a NUL character")
        given = Path(os.path.expanduser(path))
        joined = given if given.is_absolute() else self.cwd / given
        try:
            real = Path(os.path.realpath(joined))
        except OSError as error:  # a link changed while it was followed
            raise ToolError(f"{path!r} cannot be read now ({error.strerror or error})") from None
        if self.contains(real):
            return real
        lexical = Path(os.path.normpath(joined))
        if self.contains(lexical):
            why = f"it leads through a symbolic link to {real}, which is outside"
        elif ".." in given.parts and not given.is_absolute():
            why = "'..' leads outside"
        else:
            why = "it is outside"
        raise ToolError(f"refused: {path!r}: {why} {self.describe()}; {WIDEN_HINT}.")

    def describe(self) -> str:
        if not self.extra:
            return f"the working directory {self.cwd}"
        return f"the working directory {self.cwd} and the allowed directories " + ", ".join(
            map(str, self.extra)
        )

    def display(self, real: Path) -> str:
        """``real`` relative to the working directory when inside it, else absolute."""
        try:
            rel = real.relative_to(self.cwd)
        except ValueError:
            return str(real)
        return str(rel) if str(rel) != "." else "."
