"""Roadmap matrices (docs/design.md §9.3): rows with a stable ID, a state, and the upstream code they track.

Tables are read with markdown-it-py, not by splitting on "|": cells hold code spans
and links that may themselves contain pipes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from porttrack.config import inside
from porttrack.evidence import naming
from porttrack.errors import UserError


@functools.lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt  # only commands that read matrices pay for the import

    # Only the table structure and each cell's text as written are read, so inline markdown is not
    # parsed (two thirds of the time on the prime user's 600 KB of matrices).
    return MarkdownIt("commonmark").enable("table").disable("inline")


@dataclass(frozen=True)  # parsed rows are cached and shared: nobody may change one
class Row:
    id: str
    state: str
    matrix: str  # matrix path relative to the port root
    line: int  # 1-based line of the row
    cells: dict[str, str] = field(default_factory=dict)  # header -> cell text (inline markdown as written)
    upstream: str = ""  # the upstream cell's text

    @property
    def where(self) -> str:
        return f"{self.matrix}:{self.line}"


def _plain(cell: str) -> str:
    return cell.strip().strip("`*_ ").strip()


def _state(cell: str) -> str:
    """The state is the cell's first code span (`ACTIVE` — notes...), else its first word."""
    m = re.match(r"\s*\**`([^`]+)`", cell)
    if m:
        return m.group(1).strip()
    words = _plain(cell).split()
    return words[0].strip(".,;:*") if words else ""


def parse_matrix(rel: str, text: str, *, id_pattern: str) -> list[Row]:
    """Rows of every table in one matrix whose first cell is an ID; other tables (summaries) are skipped."""
    return list(_parse_matrix(rel, text, id_pattern))


@functools.lru_cache(maxsize=32)  # check reads the same matrices for owners and for pre-pin gaps
def _parse_matrix(rel: str, text: str, id_pattern: str) -> tuple[Row, ...]:
    idre = re.compile(id_pattern)
    rows: list[Row] = []
    tokens = _md().parse(text)
    headers: list[str] = []
    cells: list[str] = []
    in_head = False
    row_line = 0
    for k, tok in enumerate(tokens):
        t = tok.type
        if t == "thead_open":
            in_head, headers = True, []
        elif t == "thead_close":
            in_head = False
        elif t == "tr_open":
            cells = []
            row_line = tok.map[0] + 1 if tok.map else 0
        elif t == "inline" and k and tokens[k - 1].type in ("th_open", "td_open"):
            (headers if in_head else cells).append(tok.content)
        elif t == "tr_close" and not in_head and cells:
            first = _plain(cells[0])
            if not idre.fullmatch(first):
                continue
            named = {h: (cells[i] if i < len(cells) else "") for i, h in enumerate(headers)}
            state_col = next((h for h in headers if _plain(h).lower() in ("state", "status")), None)
            up_col = next((h for h in headers if "upstream" in h.lower()), None)
            rows.append(
                Row(
                    id=first,
                    state=_state(named.get(state_col, "")) if state_col else "",
                    matrix=rel,
                    line=row_line,
                    cells=named,
                    upstream=named.get(up_col, "") if up_col else "",
                )
            )
    return tuple(rows)


def load_rows(root: Path, globs: list[str], *, id_pattern: str) -> list[Row]:
    """Rows of all matrices matching `globs` under the port root, in path order then line order."""
    root = Path(root)
    seen: set[Path] = set()
    rows: list[Row] = []
    for g in globs:
        inside(root, g.split("*")[0] or ".", "owners.matrices entry")
        if not any(c in g for c in "*?[") and not (root / g).is_file():
            raise UserError(f"[owners] matrices names {g}, which is no file under the port root {root}.")
        for p in sorted(root.glob(g)):
            if p in seen or not p.is_file():
                continue
            seen.add(p)
            rel = p.relative_to(root).as_posix()
            inside(root, rel, "matrix")
            try:
                text = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise UserError(f"matrix {rel} is not UTF-8 text.") from None
            except OSError as e:
                raise UserError(f"cannot read matrix {rel}: {e.strerror}.") from None
            rows.extend(parse_matrix(rel, text, id_pattern=id_pattern))
    return rows


def row_by_id(rows: list[Row], row_id: str) -> Row | None:
    return next((r for r in rows if r.id == row_id), None)


def owner_text(row: Row) -> str:
    """How an owner is written into a queue: the row ID plus where the row is."""
    return f"{row.id} ({row.where})"


def owner_id(owner: str) -> str:
    """The row ID of an owner as written ("KV-X (path:line)" or just "KV-X")."""
    return owner.split(" (", 1)[0].strip().strip("`")


def cites_path(cell: str, path: str) -> bool:
    """The cell names `path` as a whole path (a `:NN`, `:NN-MM`, `::Symbol` or `#L12` qualifier may follow)."""
    variants = {path}
    if path.startswith("tests/"):
        variants.add("vllm/" + path)  # the tree writes upstream tests both ways
    return any(re.search(r"(?<![\w./\-])" + re.escape(v) + r"(?![\w/\-]|\.\w)", cell) for v in variants)


def cites_symbol(cell: str, symbol: str) -> bool:
    """The cell names the symbol as a whole identifier (as written, `A::b` for `A.b`, or after `path.py::`)."""
    # short names (`run`, `get`) would match prose, so they are never looked for
    pattern = _symbols_pattern((symbol,))
    return pattern is not None and pattern.search(cell) is not None


@functools.lru_cache(maxsize=4096)  # the same symbols are looked for in every row
def _symbols_pattern(symbols: tuple[str, ...]) -> re.Pattern | None:
    """One pattern that finds any of the symbols as cites_symbol does (None: all are too short)."""
    forms = sorted(
        {f for s in symbols if len(s.split(".")[-1].lstrip("_")) >= 4 for f in (s, s.replace(".", "::"))},
        key=lambda f: (-len(f), f),
    )
    if not forms:
        return None
    return re.compile(r"(?:(?<=\w\.py::)|(?<![\w.:]))(?:" + "|".join(map(re.escape, forms)) + r")(?![\w])")


def cites_pr(cell: str, pr: int) -> bool:
    return re.search(r"(?:#|/pull/)" + str(pr) + r"(?!\d)", cell) is not None


_QUALIFIER = re.compile(r":(\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*)|::([A-Za-z_][\w.]*)|#L(\d+)(?:-L?(\d+))?")


def path_citations(cell: str, path: str) -> list[tuple[str, object]]:
    """How the cell cites `path`, once per mention: ("lines", [(lo, hi), ...]) for `path:396,640-707`
    or `path#L12-L20`, ("symbol", name) for `path::Name`, ("bare", None) for the path alone."""
    variants = {path}
    if path.startswith("tests/"):
        variants.add("vllm/" + path)
    out: list[tuple[str, object]] = []
    for v in variants:
        for m in re.finditer(r"(?<![\w./\-])" + re.escape(v) + r"(?![\w/\-]|\.\w)", cell):
            q = _QUALIFIER.match(cell, m.end())
            if q is None:
                out.append(("bare", None))
            elif q.group(1):
                spans = []
                for part in re.split(r",\s*", q.group(1)):
                    lo, _, hi = part.partition("-")
                    spans.append((int(lo), int(hi or lo)))
                out.append(("lines", spans))
            elif q.group(2):
                out.append(("symbol", q.group(2)))
            else:
                lo = int(q.group(3))
                out.append(("lines", [(lo, int(q.group(4) or lo))]))
    return out


def _overlaps(spans: list[tuple[int, int]], changed: list[tuple[int, int]]) -> bool:
    return any(lo <= c_hi and c_lo <= hi for lo, hi in spans for c_lo, c_hi in changed)


def _bare(name: str) -> str:
    return naming.parts(name)[-1]


def cites_change(cell: str, path: str, changed: list[tuple[int, int]], symbols: list[str]) -> str | None:
    """What in the cell cites this change to `path`: a line range overlapping `changed` (the
    change's line spans), or a `path::Name` qualifier naming one of `symbols`; None when the cell
    only names the file, or names other lines of it."""
    names = {_bare(s) for s in symbols}
    for kind, what in path_citations(cell, path):
        if kind == "lines" and isinstance(what, list) and _overlaps(what, changed):
            return f"{path}:" + ",".join(f"{lo}-{hi}" if hi != lo else str(lo) for lo, hi in what)
        if kind == "symbol" and _bare(str(what)) in names:
            return f"{path}::{what}"
    return None


def open_rows(rows: list[Row], done_states: Sequence[str], parked_states: Sequence[str] = ()) -> list[Row]:
    """Rows whose state is neither done nor parked: the ones that can own an entry."""
    closed = {s.upper() for s in [*done_states, *parked_states]}
    return [r for r in rows if r.state.upper() not in closed]


def find_owner(
    rows: list[Row],
    *,
    paths: list[str],
    symbols: list[str],
    pr: int | None,
    done_states: Sequence[str],
    parked_states: Sequence[str] = (),
    changed_lines: dict[str, list[tuple[int, int]]] | None = None,
) -> Row | None:
    """The first open row whose upstream cell cites the PR, else one of the symbols, else one of the paths.

    With `changed_lines` (path -> the change's line spans), a path citation owns only when it
    carries a line range overlapping the change or a `::Name` naming one of its symbols: a row
    that names a whole file does not own every change to it.
    """
    live = open_rows(rows, done_states, parked_states)
    if pr is not None:
        for r in live:
            if cites_pr(r.upstream, pr):
                return r
    cited = _symbols_pattern(tuple(sorted(set(symbols))))
    for r in live:
        if cited is not None and cited.search(r.upstream):
            return r
    for r in live:
        if changed_lines is None:
            if any(cites_path(r.upstream, p) for p in paths):
                return r
        elif any(cites_change(r.upstream, p, changed_lines.get(p, []), symbols) for p in paths):
            return r
    return None
