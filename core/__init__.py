"""The domain of Tangents: content, messages, the session tree, context and providers.

Nothing under ``core`` imports Textual; front ends (the TUI, print mode) wrap it.
"""

__version__ = "0.1.0"
