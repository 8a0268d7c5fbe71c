"""The error a tool raises for the model to read: below :mod:`core.tools.base`,
so that the modules a tool's context names (:mod:`core.tools.paths`) can raise
it without importing the module that names them."""

from __future__ import annotations


class ToolError(Exception):
    """Raised by a tool (or while checking a call): the message is sent to the
    model as an error result. It should say what went wrong and what to do."""
