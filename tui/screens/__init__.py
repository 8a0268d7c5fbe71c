"""The app's screens; each one's .tcss lives beside it."""
