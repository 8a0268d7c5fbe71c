"""Tiny deterministic apps and data for the chat view tests."""
