"""Files the upstream put in place of others: a commit that deletes `parsers/foo_parser.py` and adds
`parsers/foo_engine_parser.py` replaced the one with the other, whether or not git's rename detection
pairs them (a rewrite shares too few lines for it). audit's `replaced` rule reads this: a port whose
provenance names the new file was written from the upstream as that commit left it or later.

A successor lies in the deleted file's folder, and its name shares the deleted file's leading word
(the part before the first `_`, `-` or `.`), or one leading word starts the other (`foo` and
`foocoder`): a commit that deletes one file and adds an unrelated one beside it replaced nothing.
"""

from __future__ import annotations

import re

_LEAD = re.compile(r"[^_.\-]+")


def _lead(path: str) -> str:
    m = _LEAD.match(path.rpartition("/")[2])
    return m.group(0).lower() if m else ""


def _same_lead(old: str, new: str) -> bool:
    a, b = _lead(old), _lead(new)
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def successors(changes: list[tuple[str, list[str], list[str]]]) -> dict[str, list[tuple[str, str]]]:
    """deleted path -> (the commit that deleted it, a file that commit added in its place), from
    `changes` as `gitio.additions_and_deletions` gives them (commit, added, deleted)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for commit, added, deleted in changes:
        beside: dict[str, list[str]] = {}  # folder -> the files the commit adds there
        for new in added:
            beside.setdefault(new.rpartition("/")[0], []).append(new)
        for old in deleted:
            for new in beside.get(old.rpartition("/")[0], []):
                if _same_lead(old, new):
                    out.setdefault(old, []).append((commit, new))
    return out
