"""Keep Python's full garbage collections out of a streaming reply.

A long reply becomes thousands of widgets, and every widget is a web of
reference cycles, so each full (generation 2) collection walks more objects
and pauses the app for longer: at 20,000 tokens a single pause took 0.4-0.8 s,
and the last tokens of a reply showed at half the speed of the first. While a
reply streams, automatic collection is off and only the young generations are
collected, after a render, as often as automatic collection would; when no
reply streams any more, automatic collection is back as it was.

What the app loads once and keeps (modules, classes, the theme) is moved out
of the collector's reach once the chat view's modules are in
(:func:`freeze_loaded`), so later full collections walk only what the session
made since. Until then the program collects nothing (:func:`pause_for_start_up`):
a full collection while it starts walks every module and class loaded so far
for nothing.

This module is the garbage collector's only owner, and only when the app puts
it in charge (:func:`take_charge`): with the speed patches off
(``TANGENTS_TEXTUAL_PATCHES=0``) every function here does nothing and Python
collects as it always does.
"""

from __future__ import annotations

import gc

_in_charge = False
_streams = 0
_was_enabled = True


def take_charge(wanted: bool) -> None:
    """Let this module pause, defer and freeze collections from now on (when
    ``wanted``: the speed patches' switch)."""
    global _in_charge
    _in_charge = wanted


def defer_full_collections() -> None:
    """A reply starts streaming."""
    global _streams, _was_enabled
    if not _in_charge:
        return
    if _streams == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _streams += 1


def restore_collections() -> None:
    """A reply stopped streaming (call once per :func:`defer_full_collections`)."""
    global _streams
    if _streams == 0:
        return
    _streams -= 1
    if _streams == 0 and _was_enabled:
        gc.enable()


def collect_young() -> None:
    """Collect the young generations once as many objects were made as make an
    automatic collection (a short reply's one render does not)."""
    if _streams and _was_enabled and gc.get_count()[0] >= gc.get_threshold()[0]:
        gc.collect(1)


YOUNG_COLLECTION_EVERY = 10_000
"""Allocations (net) between two young collections, for the session after
start-up. Python's 700 suits small programs; a screen update allocates
thousands of short-lived objects, and at 700 a short exchange ran about eight
young collections and, every ten exchanges or so, a full one (a visible
stutter). At 10,000 the collector's share of an exchange halved and full
collections came half as often."""

_frozen = False
_paused_for_start_up = False


def pause_for_start_up() -> None:
    """The program starts: no automatic collection until :func:`freeze_loaded`."""
    global _paused_for_start_up
    if _in_charge and gc.isenabled():
        gc.disable()
        _paused_for_start_up = True


def freeze_loaded() -> None:
    """Everything alive now (the app's modules and classes, loaded once) is left
    out of every later collection (``gc.freeze``): full collections then walk
    only the objects made since, not the ~hundreds of thousands of startup ones.
    Only the first call freezes: later ones (another session's chat screen) could
    freeze a closed screen's garbage, which would then never be freed. Collection
    paused for the start-up comes back."""
    global _frozen
    if _in_charge and not _frozen:
        _frozen = True
        gc.freeze()
        gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
    end_start_up()


def end_start_up() -> None:
    """Collection paused by :func:`pause_for_start_up` comes back (once)."""
    global _paused_for_start_up
    if _paused_for_start_up:
        _paused_for_start_up = False
        gc.enable()
