"""``python -m ortdlpack``: prints what a bug report needs (ortdlpack.show_config())."""

from ._config import show_config

show_config()
