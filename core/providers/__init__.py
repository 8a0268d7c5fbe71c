"""Providers: one streaming interface over the anthropic SDK, litellm and the demo model.

Nothing here imports a provider SDK at module level; each is imported on the
first request that needs it.
"""
