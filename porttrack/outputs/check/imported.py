"""Findings on citations an imported report made (docs/import.md), and re-anchoring the moved ones."""

from __future__ import annotations

import re
from pathlib import Path

from porttrack import gitio
from porttrack.queue import file as queuefile
from porttrack.outputs.check.findings import Finding, Reanchor, finding
from porttrack.outputs.check.context import _Ctx


def _tree_state(ctx: _Ctx, tree: str, head: str | None, cache: dict) -> str:
    """'ancestor' when `tree` is HEAD or an ancestor of it, 'not-ancestor', or 'unknown' (not in this repository)."""
    if tree not in cache:
        if head is None or not tree:
            cache[tree] = "unknown"
        else:
            sha = gitio.rev_parse(ctx.root, tree)
            if sha is None:
                cache[tree] = "unknown"
            else:
                cache[tree] = "ancestor" if gitio.is_ancestor(ctx.root, sha, head) else "not-ancestor"
    return cache[tree]


class _FileIndex:
    """Where each identifier and each stripped line of one port file occurs: built once per file,
    so finding 10,000 citations again costs one pass over each cited file, not one per citation."""

    def __init__(self, lines: list[str]):
        self.tokens: dict[str, list[int]] = {}
        self.texts: dict[str, list[int]] = {}
        for i, t in enumerate(lines, 1):
            self.texts.setdefault(t.strip(), []).append(i)
            for tok in set(_TOKEN.findall(t)):
                self.tokens.setdefault(tok, []).append(i)


_TOKEN = re.compile(r"[A-Za-z0-9_]+")  # a name matches where `(?<![A-Za-z0-9_])name(?![A-Za-z0-9_])` would


def _nearest(found: list[int], line: int) -> int:
    return min(found, key=lambda n: (abs(n - line), n))


def _find_imported(lines: list[str], index: _FileIndex, c) -> tuple[str, int | None, str]:
    """('ok'|'moved'|'vanished', line now, what was looked for) for one imported citation in its file's lines."""
    first, last = c.line, min(c.last, len(lines))
    if c.text:
        found = index.texts.get(c.text, [])
        if any(first <= n <= last for n in found):
            return "ok", c.line, c.text
        if found:
            return "moved", _nearest(found, c.line), c.text
    names = [n for n in dict.fromkeys(re.split(r"::|\.|->", a)[-1].lstrip("~") for a in c.anchor) if n]
    if names:
        found = sorted({n for name in names for n in index.tokens.get(name, [])})
        if any(first <= n <= last for n in found):
            return "ok", c.line, "/".join(names)
        if found:
            return "moved", _nearest(found, c.line), "/".join(names)
        return "vanished", None, "/".join(names)
    if c.text:
        return "vanished", None, repr(c.text)
    if c.line > len(lines):
        return "vanished", None, f"line {c.line}"
    return "ok", c.line, ""


def imported_citation_findings(ctx: _Ctx) -> list[Finding]:
    """Re-verify every `[[entry.citation]]` an import wrote: moved is citation-stale, gone is citation-vanished.

    Citations read at a tree this repository lacks, or that is not an ancestor of HEAD, are checked
    best-effort: the tree is named once (citation-unanchored) and their vanished ones are warnings.
    """
    head = ctx.head
    out: list[Finding] = []
    reanchors: list[Reanchor] = []
    states: dict[str, str] = {}
    indexes: dict[str, _FileIndex] = {}
    loose: dict[str, list[tuple[int, int]]] = {}
    for e in ctx.q.entries:
        for k, c in enumerate(e.citations):
            label = f"entry {e.n} citation {k + 1}"
            ctx.checks.add(label)
            state = _tree_state(ctx, c.tree, head, states)
            best_effort = state != "ancestor"
            if best_effort:
                loose.setdefault(c.tree, []).append((e.n, k))
            qline = ctx.citation_line(e.n, k)
            kw = {"entry": e.n, "check": label, "related": [f"{ctx.qrel}:{qline}"] + ([c.source] if c.source else [])}
            lines = ctx.lines(c.path, f"{ctx.qrel}:{qline}: entry {e.n} citation path")
            at = f"{c.where}" + (f" (from {c.source})" if c.source else "")
            gone: tuple[str, str] | None = None
            if lines is None:
                gone = (
                    f"{label} cites {at}, but {c.path} does not exist in the tree checked.",
                    "Point the citation at the file that holds this now, or delete it if the evidence is gone.",
                )
            else:
                if c.path not in indexes:
                    indexes[c.path] = _FileIndex(lines)
                found, now, what = _find_imported(lines, indexes[c.path], c)
                if found == "vanished":
                    gone = (
                        f"{label} cites {at}, but {c.path} no longer mentions {what} anywhere.",
                        "Re-read the evidence and point the citation at where it is now, or re-triage the entry.",
                    )
            if gone:
                f = finding("citation-vanished", gone[0], gone[1], ctx.qrel, qline, **kw)
                out.append(_soften(f) if best_effort else f)
                continue
            assert now is not None  # only a vanished citation has no line
            length = c.last - c.line
            if found == "moved":
                new = f"{c.path}:{now}" + (f"-{now + length}" if length else "")
                out.append(
                    finding(
                        "citation-stale",
                        f"{label} cites {at}, but {what} is at {new} now.",
                        f"Run `porttrack check --reanchor --write` to move it to {new}.",
                        c.path,
                        now,
                        **kw,
                    )
                )
            if head and (found == "moved" or not head.startswith(c.tree) or not c.tree):
                reanchors.append(
                    Reanchor(
                        e.n,
                        k,
                        f"{c.where} @ {c.tree or 'unknown tree'}",
                        now,
                        now + length if length else 0,
                        head[:12],
                        found == "moved",
                    )
                )
    out += _unanchored(ctx, loose, states)
    ctx.reanchors = reanchors
    return out


def _unanchored(ctx: _Ctx, loose: dict[str, list[tuple[int, int]]], states: dict[str, str]) -> list[Finding]:
    """One citation-unanchored per tree that imported citations were read at and this check cannot anchor."""
    out: list[Finding] = []
    for tree, cites in loose.items():
        n, k = cites[0]
        why = (
            "which this repository does not have"
            if states.get(tree) == "unknown" and tree
            else "which is no ancestor of the tree checked"
            if tree
            else "an unrecorded tree"
        )
        out.append(
            finding(
                "citation-unanchored",
                f"{len(cites)} imported citation(s) were read at {tree or 'an unknown tree'}, {why}; they are checked "
                "best-effort (a vanished one is a warning, not an error).",
                "Run `porttrack check --reanchor --write` to re-anchor the ones found again to this tree.",
                ctx.qrel,
                ctx.citation_line(n, k),
                entry=n,
                check=f"citations read at {tree or 'an unknown tree'}",
            )
        )
        ctx.checks.add(f"citations read at {tree or 'an unknown tree'}")
    return out


def _soften(f: Finding) -> Finding:
    f.severity = "warning"
    f.message += " (best-effort: the citation was read at another tree)"
    return f


def reanchor_write(queue_path: Path, reanchors: list[Reanchor]) -> int:
    """Rewrite the imported citations check found again; the old place is kept in the citation's `previous`."""
    if not reanchors:
        return 0
    qf = queuefile.load(queue_path)
    for r in reanchors:
        c = qf.queue.entry_of(r.entry).citations[r.index]
        queuefile.set_citation(
            qf,
            r.entry,
            r.index,
            {
                "line": r.line,
                "end": r.end,
                "tree": r.tree,
                "previous": list(c.previous) + ([r.old] if r.old not in c.previous else []),
            },
        )
    queuefile.rebuild(qf)
    queuefile.save(qf)
    return len(reanchors)
