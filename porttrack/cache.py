"""Where parse results keyed by git blob id are kept between runs."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_root(configured: str | os.PathLike | None = None) -> Path:
    """The cache folder: config `[cache] dir`, else $PORTTRACK_CACHE_DIR, else the user cache dir."""
    if configured:
        root = Path(configured).expanduser()
    elif os.environ.get("PORTTRACK_CACHE_DIR"):
        root = Path(os.environ["PORTTRACK_CACHE_DIR"])
    else:
        root = Path(platformdirs.user_cache_dir("porttrack"))
    root.mkdir(parents=True, exist_ok=True)
    return root
