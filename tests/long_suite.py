"""The adversarial suite's switch: ``TANGENTS_LONG_TESTS=1`` runs the long
variants (more payloads, more kills); by default they are left out."""

from __future__ import annotations

import os

import pytest

LONG = os.environ.get("TANGENTS_LONG_TESTS") == "1"

long_only = pytest.mark.skipif(not LONG, reason="the long suite: TANGENTS_LONG_TESTS=1 runs it")
