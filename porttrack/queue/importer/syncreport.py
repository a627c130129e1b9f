"""Sync report entry lines, porttrack's own or a person's: - <repo>#<PR> `<subject>` (`<sha>`) — <reason>."""

from __future__ import annotations

import re

from porttrack.queue.importer.model import Half, Item, Report, _VERDICT_WORDS
from porttrack.queue.importer.citations import PathResolver, citations


def _sync_item(rep: Report, m: re.Match, ln: int, section: str, resolver: PathResolver) -> Item:
    reason = m["reason"].strip()
    item = Item(
        sha=m["sha"],
        line=ln,
        fmt="sync",
        pr=int(m["pr"]) if m["pr"] else None,
        subject=m["subject"].replace("\\`", "`"),
        disposition=section,
        reason=reason,
    )
    word = re.match(r"^(?P<v>[a-z-]+):\s*(?P<rest>.*)$", reason)
    if word and word["v"] in _VERDICT_WORDS:
        item.verdict = word["v"]
        item.label = word["v"]
        item.reason = word["rest"].rstrip(".")
        parts = re.search(r";\s*parts:\s*(.*)$", item.reason)
        if parts:
            item.reason = item.reason[: parts.start()]
            for bit in parts.group(1).split("; "):
                pm = re.match(r"^(?P<name>.+?) (?P<v>[a-z-]+)(?::\s*(?P<why>.*))?$", bit)
                if pm and pm["v"] in _VERDICT_WORDS:
                    item.halves.append(Half(pm["v"], pm["v"], pm["name"]))
    elif section == "IGNORE":
        item.verdict = "ignore"
    item.citations = citations(reason, rep, ln, resolver)
    return item
