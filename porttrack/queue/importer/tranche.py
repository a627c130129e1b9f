"""Tranche tables: `| # | upstream | vllm# | label | holds? | evidence |`, and the report's summary table."""

from __future__ import annotations

import re

from porttrack.queue.importer.model import (
    Item,
    Report,
    _CELL_SPLIT,
    _SHA_CELL,
    _issues,
    _plain,
    _set_halves,
    parse_label,
)
from porttrack.queue.importer.citations import PathResolver, citations


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body.removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip() for c in _CELL_SPLIT.split(body)]


def _table(rep: Report, lines: list[str], i: int, resolver: PathResolver) -> int:
    """A markdown table at line i: an entry table when it has `upstream` and `label` columns,
    the report's summary when its header reads `| | Count |` (or `Disposition | Commits`)."""
    header = [_plain(c).lower() for c in _cells(lines[i])]
    j = i + 2
    rows = []
    while j < len(lines) and lines[j].lstrip().startswith("|"):
        rows.append((j + 1, lines[j]))
        j += 1
    cols = {name: k for k, name in enumerate(header)}
    if "upstream" in cols and "label" in cols:
        rep.formats.add("table")
        for ln, row in rows:
            _table_row(rep, header, cols, ln, row, resolver)
    elif len(header) >= 2 and header[1] in ("count", "commits") and header[0] in ("", "disposition", "label"):
        for _, row in rows:
            cells = _cells(row)
            if len(cells) < 2:
                continue
            key, value = _plain(cells[0]), _plain(cells[1])
            n = re.match(r"(\d+)", value)
            if not key or not n:
                continue
            rep.summary[key] = int(n.group(1))
            for count, sub in re.findall(r"(?<!\d)(\d+)\s+`?(surface-absent|inert)`?", value):
                rep.summary[f"{key} {sub}"] = int(count)
    return j


def _table_row(rep: Report, header: list[str], cols: dict[str, int], ln: int, row: str, resolver: PathResolver) -> None:
    cells = _cells(row)
    if len(cells) > len(header):
        # a `a|b` inside backticks splits a GitHub table too, but its writer meant one cell
        cells = [
            c.replace("\0", "|") for c in _cells(re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace("|", "\0"), row))
        ]
    if len(cells) > len(header) and header and header[-1] == "evidence":
        # an unescaped `|` in the free-text last cell: the writer meant prose, so it stays one cell
        cells = [*cells[: len(header) - 1], " | ".join(cells[len(header) - 1 :])]
    if len(cells) != len(header):
        rep.warnings.append(
            f"{rep.where(ln)}: table row has {len(cells)} cells, the header {len(header)}; row skipped."
        )
        return
    m = _SHA_CELL.search(cells[cols["upstream"]])
    if not m:
        rep.warnings.append(f"{rep.where(ln)}: no upstream sha in {cells[cols['upstream']]!r}; row skipped.")
        return
    item = Item(sha=m.group(1), line=ln, fmt="table")
    pr_col = next((k for name, k in cols.items() if name.endswith("#") and name != "#"), None)
    if pr_col is not None:
        pr = re.search(r"\d+", cells[pr_col])
        item.pr = int(pr.group(0)) if pr else None
    if "#" in cols:
        item.position = _plain(cells[cols["#"]])
    item.label = cells[cols["label"]]
    halves = parse_label(item.label)
    if halves is None:
        rep.warnings.append(
            f"{rep.where(ln)}: label {item.label!r} is not one porttrack knows; kept verbatim, no verdict set."
        )
    else:
        _set_halves(item, halves)
    evidence = cells[cols["evidence"]] if "evidence" in cols else ""
    item.reason = evidence
    item.issues = _issues(item.label + " " + evidence)
    item.citations = citations(evidence, rep, ln, resolver)
    rep.items.append(item)
