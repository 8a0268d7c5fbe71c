"""Where Tangents keeps its data and reads its config.

``TANGENTS_HOME`` puts everything (database, state, default config) in one
directory; otherwise the platform's user data and config directories are used.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "tangents"


def data_dir() -> Path:
    home = os.environ.get("TANGENTS_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    home = os.environ.get("TANGENTS_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_db_path() -> Path:
    return data_dir() / "tangents.db"


def default_config_path() -> Path:
    return config_dir() / "config.toml"


def state_path() -> Path:
    """UI state the app remembers (e.g. thinking shown/hidden), kept apart from
    the user's hand-written config so we never rewrite it."""
    return data_dir() / "state.json"
