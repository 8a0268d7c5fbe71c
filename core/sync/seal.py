"""A sealed sync folder: every journal line and image encrypted with a key
derived from a passphrase that only the environment holds.

``tangents/sealed.json`` says the folder is sealed: the scrypt parameters and
salt, and a check value (a fixed text sealed with the key) so a wrong
passphrase is told in one line rather than read as damaged lines. Neither the
passphrase nor a key is ever written. A line is AES-256-GCM (``cryptography``)
with a fresh 96-bit nonce; its associated data names the device and journal it
belongs in, so a line moved elsewhere does not open. Images are named by a
keyed hash of their sha256, so not even their hashes are in the folder.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from core.sync.journal import dumps, write_whole

_FORMAT = "tangents-sealed-1"
_CHECK = b"tangents: this passphrase opens this folder"
_N, _R, _P = 2**15, 8, 1
"""scrypt's cost: 32 MiB and a fraction of a second per sync."""
_MAX_N = 2**20
"""A marker asking for more is refused: it could make every sync hang."""


class SealError(ValueError):
    """The folder and the passphrase do not go together (one line, for the user)."""


class Seal:
    """Lines and images as written to and read from a plain folder."""

    def close(self, obj: Mapping[str, Any], device: str, kind: str) -> Mapping[str, Any]:
        return obj

    def open(self, obj: dict[str, Any], device: str, kind: str) -> dict[str, Any] | None:
        """The line as written (None: it does not open)."""
        return obj

    def blob_name(self, sha256: str) -> str:
        return sha256


PLAIN = Seal()


class Sealed(Seal):
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key[:32])
        self._names = key[32:]

    def close(self, obj: Mapping[str, Any], device: str, kind: str) -> Mapping[str, Any]:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, dumps(obj).encode(), _context(device, kind))
        return {"sealed": base64.b64encode(nonce + sealed).decode("ascii")}

    def open(self, obj: dict[str, Any], device: str, kind: str) -> dict[str, Any] | None:
        text = obj.get("sealed")
        if not isinstance(text, str):
            return None
        try:
            data = base64.b64decode(text, validate=True)
            plain = self._aead.decrypt(data[:12], data[12:], _context(device, kind))
            value = json.loads(plain)
        except (binascii.Error, InvalidTag, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def blob_name(self, sha256: str) -> str:
        return hmac.new(self._names, sha256.encode(), hashlib.sha256).hexdigest()


def _context(device: str, kind: str) -> bytes:
    return f"{_FORMAT} {device} {kind}".encode()


def folder_seal(marker: Path, passphrase: str | None, written: bool) -> Seal:
    """How a folder is read and written with ``passphrase`` (None: none
    given), ``marker`` its seal marker's path, ``written`` whether any device
    wrote to it yet.

    A passphrase and a folder nobody wrote to yet: the folder is sealed now.
    :class:`SealError` when they do not go together: a sealed folder and no
    passphrase or another one, a passphrase and a folder of plain journals."""
    if not marker.exists():
        if passphrase is None:
            return PLAIN
        if written:
            raise SealError(
                "the folder holds journals that are not encrypted: "
                "give an empty folder to sync encrypted, or sync this one without a passphrase"
            )
        return _seal_new(marker, passphrase)
    if passphrase is None:
        raise SealError(
            "the folder is encrypted: name the environment variable holding its passphrase "
            "with --key-env NAME or key_env in the config's [sync]"
        )
    salt, n = _read_marker(marker)
    key = _derive(passphrase, salt, n)
    try:
        check = base64.b64decode(json.loads(marker.read_bytes())["check"], validate=True)
        opened = AESGCM(key[:32]).decrypt(check[:12], check[12:], b"check")
    except (OSError, ValueError, KeyError, TypeError, binascii.Error, InvalidTag):
        opened = None
    if opened != _CHECK:
        raise SealError(
            "the passphrase given does not open the folder (it was sealed with another)"
        )
    return Sealed(key)


def _seal_new(marker: Path, passphrase: str) -> Sealed:
    salt = os.urandom(16)
    key = _derive(passphrase, salt, _N)
    nonce = os.urandom(12)
    check = nonce + AESGCM(key[:32]).encrypt(nonce, _CHECK, b"check")
    document = {
        "format": _FORMAT,
        "cipher": "AES-256-GCM",
        "kdf": {"name": "scrypt", "n": _N, "r": _R, "p": _P, "salt": _b64(salt)},
        "check": _b64(check),
    }
    write_whole(marker, (json.dumps(document, indent=2) + "\n").encode())
    return Sealed(key)


def _read_marker(marker: Path) -> tuple[bytes, int]:
    """The salt and scrypt cost ``n`` the marker names."""
    try:
        document = json.loads(marker.read_bytes())
        kdf = document["kdf"]
        salt = base64.b64decode(kdf["salt"], validate=True)
        n = kdf["n"]
        valid = (
            document["format"] == _FORMAT
            and (kdf["name"], kdf["r"], kdf["p"]) == ("scrypt", _R, _P)
            and isinstance(n, int)
            and 2 <= n <= _MAX_N
            and n & (n - 1) == 0
            and 16 <= len(salt) <= 64
        )
    except (OSError, ValueError, KeyError, TypeError, binascii.Error):
        valid = False
    if not valid:
        raise SealError(f"its {marker.name} is not a seal marker this version reads")
    return salt, n


def _derive(passphrase: str, salt: bytes, n: int) -> bytes:
    """64 bytes: the AES key, then the key that names images."""
    return Scrypt(salt=salt, length=64, n=n, r=_R, p=_P).derive(passphrase.encode("utf-8"))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
