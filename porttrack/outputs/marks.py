"""porttrack's own report lines, told apart from lines a person edited.

`queue import` of a report porttrack wrote must change nothing, however often it is done,
while a line a person edited is that person's reading. So `report sync` ends with one HTML
comment (markdown renderers do not show it) that maps each entry's short sha to a hash of
its line as porttrack wrote it; the entry lines themselves stay exactly as documented.
"""

from __future__ import annotations

import hashlib
import re

_BLOCK = re.compile(r"^<!-- porttrack lines: ((?:[0-9a-f]{7,40}=[0-9a-f]{8} ?)*)-->\s*$", re.M)


def digest(line: str) -> str:
    return hashlib.sha256(line.rstrip().encode("utf-8")).hexdigest()[:8]


def block(lines: dict[str, str]) -> str:
    """The comment that marks `lines` (short sha -> the entry's line) as porttrack wrote them."""
    return "<!-- porttrack lines: " + "".join(f"{sha}={digest(line)} " for sha, line in lines.items()) + "-->"


def read(text: str) -> dict[str, str]:
    """short sha -> hash, from a report's marks; empty for a report porttrack did not write."""
    m = _BLOCK.search(text)
    if m is None:
        return {}
    return dict(pair.split("=", 1) for pair in m.group(1).split())


def as_written(marks: dict[str, str], sha: str, line: str) -> bool:
    """Is `line`, the entry `sha`'s line, exactly as porttrack wrote it?"""
    return marks.get(sha) == digest(line)
