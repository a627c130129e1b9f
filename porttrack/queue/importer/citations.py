"""The `path:line` citations a report's prose makes, resolved against the port tree it read."""

from __future__ import annotations

import re

from porttrack.model import Citation
from porttrack.queue.importer.model import Report, _CITE, _IDENT, _PATH_ONLY, _SPAN


class PathResolver:
    """Completes the short paths reports write (`cuda_ops.cu:1172`, `tool_parsers/gemma4.cpp`) against the port's files."""

    def __init__(self, files: set[str]):
        self.files = files
        self._by_tail: dict[str, list[str]] | None = None

    def resolve(self, path: str, earlier: list[str]) -> str:
        if path in self.files or not path:
            return path
        if "/.../" in path:  # `include/.../x.h`: the writer elided the middle
            path = path.rsplit("/.../", 1)[1]
        for p in reversed(earlier):  # the cell named the full path before
            if p.endswith("/" + path):
                return p
        if self._by_tail is None:
            self._by_tail = {}
            for f in self.files:
                parts = f.split("/")
                for k in range(len(parts)):
                    self._by_tail.setdefault("/".join(parts[k:]), []).append(f)
        hits = self._by_tail.get(path, [])
        return hits[0] if len(hits) == 1 else path


def citations(text: str, rep: Report, ln: int, resolver: PathResolver) -> list[Citation]:
    """Every `path:line`, `path:l1-l2`, `path:a,b` and bare `:l1-l2` (the last path named before it) in a cell."""
    out: list[Citation] = []
    spans = list(_SPAN.finditer(text))
    current = ""
    named: list[str] = []
    for s in spans:
        body = s.group(1).strip()
        m = _CITE.match(body)
        if not m:
            if _PATH_ONLY.match(body) and "/" in body:
                current = resolver.resolve(body, named)
                named.append(current)
            continue
        if re.search(r"@\s*[0-9a-f]{7,40}", m["rest"]):
            continue  # `file.py:10 @ sha` cites upstream at a revision, not the port
        if m["path"]:
            current = resolver.resolve(m["path"], named)
            named.append(current)
        if not current:
            continue
        anchor = _anchors(text, s.start(), s.end(), spans)
        for rng in re.split(r",\s*", m["lines"]):
            a, _, b = rng.partition("-")
            start, end = int(a), int(b) if b else 0
            if start < 1:
                continue
            out.append(
                Citation(
                    path=current,
                    line=start,
                    end=end if end > start else 0,
                    tree=rep.tree,
                    source=rep.where(ln),
                    anchor=anchor,
                )
            )
    return out


def _anchors(text: str, start: int, end: int, spans: list[re.Match]) -> list[str]:
    """Identifiers the same sentence names in backticks: what the cited line should still mention."""
    left = max(text.rfind(". ", 0, start), text.rfind("; ", 0, start), text.rfind(" — ", 0, start))
    right = [p for p in (text.find(". ", end), text.find("; ", end)) if p != -1]
    lo, hi = left + 1, min(right) if right else len(text)
    out = []
    for s in spans:
        if s.start() < lo or s.end() > hi or s.start() == start:
            continue
        body = s.group(1).strip()
        if _CITE.match(body) or not _IDENT.match(body):
            continue
        name = _without_call(body)
        if len(re.split(r"::|\.|->", name)[-1]) >= 3 and name not in out:
            out.append(name)
    return out


def _without_call(body: str) -> str:
    """`f(a, b)` -> `f`: the text before the last line's first `(`, when the (stripped) body ends in
    `)`. One pass, where a pattern for a trailing call would search again from every `(`."""
    at = body.find("(", body.rfind("\n") + 1)
    return body[:at] if at >= 0 and body.endswith(")") else body
