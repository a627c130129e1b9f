"""The one glob dialect porttrack speaks: `**` spans folders, `*` and `?` stay inside one."""

from __future__ import annotations

import re
from functools import cache


@cache
def translate(pattern: str) -> str:
    """A regex source for `pattern`, to be used with fullmatch; `**/` also matches no folder."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return out


def match(pattern: str, path: str) -> bool:
    return re.fullmatch(translate(pattern), path) is not None
