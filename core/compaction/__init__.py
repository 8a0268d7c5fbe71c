"""Compaction: :mod:`plan` decides (where to cut, what to summarize, the
limits for a window) as pure functions; :mod:`run` asks a model for the
summary and writes the entry; :mod:`prompts` holds what it is asked."""
