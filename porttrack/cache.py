"""Where parse results keyed by git blob id are kept between runs."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from porttrack.errors import UserError


def cache_root(configured: str | os.PathLike | None = None) -> Path:
    """The cache folder: config `[cache] dir`, else $PORTTRACK_CACHE_DIR, else the user cache dir."""
    if configured:
        root, source = Path(configured).expanduser(), "[cache] dir"
    elif os.environ.get("PORTTRACK_CACHE_DIR"):
        root, source = Path(os.environ["PORTTRACK_CACHE_DIR"]), "PORTTRACK_CACHE_DIR"
    else:
        root, source = Path(platformdirs.user_cache_dir("porttrack")), "the user cache folder"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cache folder {root} ({source}) cannot be created: {e.strerror or e}.") from None
    return root
