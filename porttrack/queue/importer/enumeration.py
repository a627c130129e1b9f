"""Enumeration lines: - `<sha>` vllm#<PR> <subject> — <DISPOSITION>: <reason>."""

from __future__ import annotations

import re

from porttrack.queue.importer.model import (
    DISPOSITION_WORDS,
    Item,
    Report,
    _CORRECTED,
    _STATED,
    _issues,
    _set_halves,
    parse_label,
)
from porttrack.queue.importer.citations import PathResolver, citations


def _enumeration(rep: Report, lines: list[str], i: int, m: re.Match, resolver: PathResolver) -> int:
    rep.formats.add("enumeration")
    item = Item(
        sha=m["sha"],
        line=i + 1,
        fmt="enumeration",
        pr=int(m["pr"]) if m["pr"] else None,
        subject=m["subject"].strip(),
        reason=m["reason"].strip(),
    )
    word = m["disp"]
    item.disposition = DISPOSITION_WORDS[word]
    item.label = word
    if word == "IGNORE":
        item.verdict = "ignore"
    elif word == "UNCLASSIFIED":
        item.verdict = "unclassified"
    item.citations = citations(item.reason, rep, i + 1, resolver)
    item.issues = _issues(item.reason)
    # indented continuation paragraphs belong to the item (a blank line between them too)
    j = i + 1
    para: list[str] = []
    paras: list[tuple[int, str]] = []
    start = j
    while j < len(lines):
        ln = lines[j]
        if ln.startswith((" ", "\t")) and ln.strip():
            if not para:
                start = j + 1
            para.append(ln.strip())
            j += 1
            continue
        if (
            not ln.strip()
            and j + 1 < len(lines)
            and lines[j + 1].startswith(("  ", "\t"))
            and lines[j + 1].strip()
            and not lines[j + 1].lstrip().startswith("- ")
        ):
            if para:
                paras.append((start, " ".join(para)))
                para = []
            j += 1
            continue
        break
    if para:
        paras.append((start, " ".join(para)))
    for at, note in paras:
        item.notes.append(note)
        item.issues += [n for n in _issues(note) if n not in item.issues]
        item.citations += citations(note, rep, at, resolver)
        c = _CORRECTED.match(note)
        if c:
            if c["issue"] and int(c["issue"]) not in item.issues:
                item.issues.append(int(c["issue"]))
            stated = _STATED.search(note)
            if stated:
                w = stated["word"]
                if DISPOSITION_WORDS.get(w):
                    item.disposition = DISPOSITION_WORDS[w]
                    item.verdict = "ignore" if w == "IGNORE" else item.verdict
                else:
                    halves = parse_label(w)
                    if halves:
                        _set_halves(item, halves)
                item.label = f"{item.label} (CORRECTED {c['date']}: {w})"
    rep.items.append(item)
    return j
