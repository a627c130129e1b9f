"""queue import: read a team's hand-written sync reports into a queue (docs/import.md).

Three formats are read, each into the same `Item` (one upstream commit as one report
states it): enumeration lines (`` - `sha` vllm#N subject — PORT-NOW: reason `` with
indented continuation paragraphs such as `**CORRECTED …**` notes), tranche tables
(`| # | upstream | vllm# | label | holds? | evidence |`), and the entry lines that
`porttrack report sync` writes. The vocabulary map below is the one place a report's
words become porttrack's verdicts. Merging keeps every reading: the latest report's wins,
the earlier ones go to the entry's `history`, and nothing is dropped for being unreadable.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from porttrack import gitio, marks, queuefile
from porttrack.config import Config, inside
from porttrack.errors import UserError
from porttrack.model import Citation, Entry, Part, QueueMeta

FORMATS = (
    "enumeration lines (- `<sha>` vllm#<PR> <subject> — <DISPOSITION>: <reason>)",
    "tranche tables (| # | upstream | vllm# | label | holds? | evidence |)",
    "sync report entry lines (- <repo>#<PR> `<subject>` (`<sha>`) — <reason>.)",
)

# The vocabulary map (docs/import.md): a report's label -> porttrack verdict.
LABELS = {
    "ALREADY_SATISFIED": "ported",
    "REAL_GAP": "real-gap",
    "surface-absent": "surface-absent",
    "inert": "inert",
}
DISPOSITION_WORDS = {"PORT-NOW": "PORT-NOW", "INVENTORY": "INVENTORY", "IGNORE": "IGNORE", "UNCLASSIFIED": None}
# Where halves disagree, the entry carries the verdict of the half needing the most work.
_WORK_ORDER = ("real-gap", "inert", "surface-absent", "ported", "no-op", "ignore")
_VERDICT_WORDS = (
    "real-gap",
    "inert",
    "blocked",
    "owned",
    "surface-absent",
    "no-op",
    "ported",
    "ignore",
    "untrusted",
    "unclassified",
)

_ENUM = re.compile(
    r"^- `(?P<sha>[0-9a-f]{7,40})`\s+(?:(?P<repo>[\w.-]+)#(?P<pr>\d+)\s+)?(?P<subject>.*?)\s+—\s+"
    r"(?P<disp>PORT-NOW|INVENTORY|IGNORE|UNCLASSIFIED)\b:?\s*(?P<reason>.*)$"
)
_SYNC = re.compile(
    r"^- (?P<repo>[\w.-]+)(?:#(?P<pr>\d+)|@[0-9a-f]{7,40})? `(?P<subject>(?:[^`\\]|\\.)*)` "
    r"\(`(?P<sha>[0-9a-f]{7,40})`\) — (?P<reason>.+)$"
)
_SECTION = re.compile(r"^##\s+(?:\d+\.\s+)?(?P<name>PORT-NOW|INVENTORY|IGNORE)\b")
# porttrack's own sync report lists each entry once: PORT-NOW-level entries it files under these
# (docs/reports.md), where a hand-written Carry-over only repeats entries listed above it
_OWN_SECTION = re.compile(r"^(?:##\s+(?:SETTLED|TO TRIAGE)|###\s+(?:Owned|Blocked|Deferred)) \(\d+\)\s*$")
_CORRECTED = re.compile(r"^\*\*CORRECTED\s+(?P<date>\d{4}-\d{2}-\d{2})\s*\((?P<wave>[^,)]*?)(?:,\s*#(?P<issue>\d+))?\)")
_STATED = re.compile(
    r"\b(?:disposition|label)\s+(?:is now|is|becomes|:)\s+\**`?(?P<word>PORT-NOW|INVENTORY|IGNORE|"
    r"UNCLASSIFIED|NOT_APPLICABLE|ALREADY_SATISFIED|REAL_GAP)\b"
)
_ISSUE_LINK = re.compile(r"\[#(\d+)\]\([^)]*?/issues/\1\)")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SHA_CELL = re.compile(r"`?\b([0-9a-f]{7,40})\b`?")
_SPAN = re.compile(r"`([^`\n]+)`")
_CITE = re.compile(
    r"^(?P<path>[\w.+/-]*[\w+-]\.[A-Za-z0-9]+)?:(?P<lines>\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*)(?P<rest>.*)$"
)
_PATH_ONLY = re.compile(r"^[\w.+-]+(?:/[\w.+-]+)*\.[A-Za-z0-9]+$")
_IDENT = re.compile(r"^~?[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|->)~?[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*\))?$")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass
class Half:
    verdict: str
    label: str  # this half's words, verbatim
    description: str = ""
    gate_text: str = ""


@dataclass
class Item:
    """One upstream commit as one report states it."""

    sha: str
    line: int
    fmt: str  # "enumeration", "table", "sync"
    pr: int | None = None
    subject: str = ""
    disposition: str | None = None
    verdict: str | None = None  # None: the report states no verdict (PORT-NOW / INVENTORY enumeration)
    label: str = ""
    gate_text: str = ""
    halves: list[Half] = field(default_factory=list)
    reason: str = ""
    issues: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    position: str = ""
    untouched: bool = False  # a line of porttrack's own report, as porttrack wrote it (porttrack/marks.py)


@dataclass
class Report:
    path: str  # as given on the command line (it is what `source` records)
    text: str
    date: str = ""
    tree: str = ""
    range: str = ""
    row: str = ""
    issue: int | None = None
    summary: dict[str, int] = field(default_factory=dict)  # the report's own counts table
    items: list[Item] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    formats: set[str] = field(default_factory=set)

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"


# ---------------------------------------------------------------- reading one report


# A team's sync report runs to a few hundred entries and well under 1 MiB; a report past this
# limit is refused in one sentence rather than parsed into memory it may not have (docs/import.md).
MAX_REPORT_BYTES = 4 * 2**20


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # CommonMark's code fence


def read_report(path: Path, shown: str, resolver: PathResolver | None = None) -> Report:
    if path.exists() and not path.is_file():  # a FIFO or device would block the read
        raise UserError(f"report {shown} is not a regular file.")
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise UserError(
                f"report {shown} is {path.stat().st_size / 2**20:.1f} MiB, past the "
                f"{MAX_REPORT_BYTES // 2**20} MiB a report may have; split it (one file per sync cycle)."
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"report {shown} does not exist.") from None
    except IsADirectoryError:
        raise UserError(f"report {shown} is a folder, not a file.") from None
    except OSError as e:
        raise UserError(f"cannot read report {shown}: {e.strerror}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(f"{shown}:{line}: report is not UTF-8 text.") from None
    return parse(text, shown, resolver)


def parse(text: str, shown: str, resolver: PathResolver | None = None) -> Report:
    """Every entry a report states, in any of the three formats, with its header facts."""
    rep = Report(path=shown, text=text)
    m = _DATE.match(Path(shown).name)
    rep.date = m.group(1) if m else ""
    lines = text.splitlines()
    _header_facts(rep, lines)
    ours = marks.read(text)  # porttrack's own report: the lines it wrote, by short sha
    resolver = resolver or PathResolver(set())
    section: str | None = None
    carry = False  # inside a `## Carry-over` section
    i = 0
    fence: str | None = None  # the open code fence: nothing inside one is an entry, to the end if unclosed
    while i < len(lines):
        line = lines[i]
        f = _FENCE.match(line)
        if fence is not None or f:
            if fence is None:
                fence = f.group(1)  # type: ignore[union-attr]
            elif f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) and not f.group(2).strip():
                fence = None
            i += 1
            continue
        if line.startswith("#"):
            s = _SECTION.match(line)
            carry = line.startswith("## Carry-over") or (carry and line.startswith("### "))
            section = s.group("name") if s else None
            if section is None and _OWN_SECTION.match(line) and (carry or line.startswith("## ")):
                section = "PORT-NOW"
            count = re.search(r"\((\d+)\)\s*$", line)
            if section and count and section not in rep.summary:  # `## INVENTORY (94)`: the report's own count
                rep.summary[section] = int(count.group(1))
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|?\s*$", lines[i + 1]):
            i = _table(rep, lines, i, resolver)
            continue
        m = _ENUM.match(line)
        if m:
            i = _enumeration(rep, lines, i, m, resolver)
            continue
        m = _SYNC.match(line)
        if m and section is not None:  # Carry-over and other sections repeat entries; their sections don't say
            item = _sync_item(rep, m, i + 1, section, resolver)
            item.untouched = marks.as_written(ours, m["sha"], line)
            rep.items.append(item)
            rep.formats.add("sync")
        i += 1
    return rep


def _header_facts(rep: Report, lines: list[str]) -> None:
    head = "\n".join(lines[:60])
    m = re.search(r"Tree read:\s*(?:`[^`]*`\s+at\s+)?`([0-9a-f]{7,40})`", head) or re.search(
        r"\*\*Port commit probed:\*\*\s*`([0-9a-f]{7,40})", head
    )
    rep.tree = m.group(1) if m else ""
    m = re.search(r"`([0-9a-f]{7,40}\.\.[0-9a-f]{7,40})`", head) or re.search(
        r"\b([0-9a-f]{7,40}\.\.[0-9a-f]{7,40})\b", head
    )
    rep.range = m.group(1) if m else ""
    m = re.search(r"\bRow\s+`([^`]+)`", head)
    rep.row = m.group(1) if m else ""
    m = re.search(r"^Issue:\s*\[#(\d+)\]", head, re.MULTILINE)
    rep.issue = int(m.group(1)) if m else None


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body.removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip() for c in _CELL_SPLIT.split(body)]


def _plain(text: str) -> str:
    return re.sub(r"\*\*|__", "", text).strip()


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
            for count, sub in re.findall(r"(\d+)\s+`?(surface-absent|inert)`?", value):
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


def parse_label(cell: str) -> list[Half] | None:
    """`ALREADY_SATISFIED **+** NA surface-absent (the batch half)` -> two halves; None when not understood."""
    text = cell.replace("†", "").replace("‡", "").strip()
    segments = [s for s in re.split(r"\s*\*\*\+\*\*\s*|\s+\+\s+", text) if s.strip()]
    halves = []
    for seg in segments:
        d = next((m for m in re.finditer(r"\(([^()]*)\)", seg) if not m.group(1).startswith("http")), None)
        desc = _plain(d.group(1)) if d else ""
        plain = _plain(seg)
        gate = re.search(r"`inert:\s*([^`]*)`", seg)
        if gate:
            # `inert:` with the gate written after the backticks: `inert:` the BF16-only arm (half B)
            text_ = gate.group(1).strip() or _plain(seg[gate.end() :].split("(")[0])
            halves.append(Half("inert", seg.strip(), desc, text_.strip()))
            continue
        na = re.match(r"^(?:NA|NOT_APPLICABLE)\b\s*", plain)
        rest = plain[na.end() :] if na else plain
        # the label is the first label word: `**REAL_GAP** (… both edited halves surface-absent)` is a real gap
        first = min(
            (
                (m.start(), m.group(0))
                for m in re.finditer(r"ALREADY_SATISFIED|REAL_GAP|surface-absent|\binert\b", rest)
            ),
            default=None,
        )
        if first is None:
            if not na:
                return None
            # the reports split NOT_APPLICABLE into surface-absent and inert:<gate>; a bare one names no gate
            halves.append(Half("surface-absent", seg.strip(), desc))
            continue
        if first[1] == "inert":
            text_ = re.sub(r"^\s*:?\s*", "", rest[first[0] + len("inert") :])
            if d and _plain(d.group(0)) in text_:
                text_ = text_[: text_.find(_plain(d.group(0)))]
            halves.append(Half("inert", seg.strip(), desc, text_.strip()))
            continue
        halves.append(Half(LABELS[first[1]], seg.strip(), desc))
    return halves or None


def _set_halves(item: Item, halves: list[Half]) -> None:
    item.verdict = min((h.verdict for h in halves), key=_WORK_ORDER.index)
    item.gate_text = next((h.gate_text for h in halves if h.verdict == item.verdict and h.gate_text), "")
    if len(halves) > 1:
        item.halves = halves


def _issues(text: str) -> list[int]:
    return list(dict.fromkeys(int(n) for n in _ISSUE_LINK.findall(text)))


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


# ---------------------------------------------------------------- citations


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
        name = re.sub(r"\(.*\)$", "", body)
        if len(re.split(r"::|\.|->", name)[-1]) >= 3 and name not in out:
            out.append(name)
    return out


# ---------------------------------------------------------------- merging into a queue


@dataclass
class ImportResult:
    queue_path: Path
    created: bool
    reports: list[Report]
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    citations: int = 0
    upstream_missing: int = 0
    upstream_checked: bool = False
    warnings: list[str] = field(default_factory=list)
    written: bool = False


def comparison(rep: Report) -> list[tuple[str, int, int]]:
    """(label, entries imported, the report's own count) for every count the report's summary table states."""
    tally: dict[str, int] = {}
    table = [it for it in rep.items if it.fmt == "table"]
    for it in table:
        first = it.halves[0].verdict if it.halves else it.verdict
        word = {
            "ported": "ALREADY_SATISFIED",
            "real-gap": "REAL_GAP",
            "surface-absent": "NOT_APPLICABLE",
            "inert": "NOT_APPLICABLE",
        }.get(first or "", "unlabelled")
        tally[word] = tally.get(word, 0) + 1
        if word == "NOT_APPLICABLE":
            tally[f"NOT_APPLICABLE {first}"] = tally.get(f"NOT_APPLICABLE {first}", 0) + 1
    for it in rep.items:
        if it.fmt != "table" and it.disposition:
            tally[it.disposition] = tally.get(it.disposition, 0) + 1
    out = []
    for key, stated in rep.summary.items():
        if key in tally or key in (
            "ALREADY_SATISFIED",
            "REAL_GAP",
            "NOT_APPLICABLE",
            "PORT-NOW",
            "INVENTORY",
            "IGNORE",
            "NOT_APPLICABLE surface-absent",
            "NOT_APPLICABLE inert",
        ):
            out.append((key, tally.get(key, 0), stated))
    return out


def _queue_destination(cfg: Config, queue: Path | None) -> Path:
    from porttrack.config import queue_path

    if queue is not None:
        return queue_path(cfg, queue)
    if cfg.queue_file or list((cfg.port_root / "queue").glob("*.toml")):
        return queue_path(cfg, None)
    return inside(cfg.port_root, "queue/imported.toml", "queue path")


def _port_files(root: Path) -> set[str]:
    if gitio.is_git_repo(root):
        out = gitio.git(root, "ls-files", "-z").decode("utf-8", "replace")
        prefix = gitio.git(root, "rev-parse", "--show-prefix").decode().strip()
        return {f[len(prefix) :] for f in out.split("\0") if f and f.startswith(prefix)}
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _upstream_commits(repo: Path, shas: list[str]) -> dict[str, tuple[str, str, str, list[str]]]:
    """prefix -> (full sha, subject, date, files) for the prefixes that name one commit of the upstream checkout."""
    if not shas:
        return {}
    full = {s: sha for s, sha in gitio.resolve_commits(repo, shas).items() if sha is not None}
    if not full:
        return {}
    proc = gitio.run(
        repo,
        "log", "--no-walk=unsorted", "--stdin", "-m", "--first-parent", "--name-only", "--no-textconv",
        "--format=%x00%H%x1f%s%x1f%as",
        input="\n".join(sorted(set(full.values()))).encode(),
    )  # fmt: skip
    info: dict[str, tuple[str, str, list[str]]] = {}
    for block in proc.stdout.decode("utf-8", "replace").split("\0")[1:]:
        head, _, rest = block.partition("\n")
        sha, subject, date = ([*head.split("\x1f"), "", ""])[:3]
        info[sha] = (subject, date, [f for f in rest.splitlines() if f.strip()])
    return {s: (f, *info.get(f, ("", "", []))) for s, f in full.items()}


class _ShaIndex:
    """Entries by the first 7 characters of their sha (the shortest prefix a report writes), for prefix matching."""

    def __init__(self, entries: list[Entry]):
        self.by7: dict[str, list[Entry]] = {}
        for e in entries:
            self.add(e)

    def add(self, e: Entry) -> None:
        if e.sha:
            self.by7.setdefault(e.sha[:7], []).append(e)

    def match(self, sha: str) -> list[Entry]:
        return [e for e in self.by7.get(sha[:7], []) if e.sha.startswith(sha) or sha.startswith(e.sha)]


def _date_of(source: str) -> str:
    m = _DATE.match(Path(source.rsplit(":", 1)[0]).name) if source else None
    return m.group(1) if m else ""


def _reading(e: Entry) -> str:
    """An entry's current reading, as one history line."""
    bits = [f"disposition {e.disposition}", f"verdict {e.verdict}" + (f" ({e.verdict_by})" if e.verdict_by else "")]
    if e.label:
        bits.append(f"label {e.label}")
    if e.parts:
        bits.append("parts " + "; ".join(f"{p.name}: {p.verdict}" for p in e.parts))
    if e.reason:
        bits.append(f"reason {e.reason}")
    return f"{e.source or 'queue'}: " + "; ".join(bits)


def _item_reading(it: Item, rep: Report) -> str:
    e = Entry(
        n=0,
        sha=it.sha,
        subject="",
        disposition=it.disposition or "?",
        verdict=it.verdict or "(none stated)",
        verdict_by="human" if it.verdict else "",
        label=it.label,
        reason=it.reason,
        source=rep.where(it.line),
        parts=[Part(name=h.description, verdict=h.verdict) for h in it.halves],
    )
    return _reading(e)


def _parts(it: Item) -> list[Part]:
    out, used = [], set()
    for k, h in enumerate(it.halves, 1):
        name = h.description or f"half {k}"
        if name in used:
            name = f"{name} ({k})"
        used.add(name)
        out.append(Part(name=name, verdict=h.verdict, verdict_by="human", label=h.label, gate_text=h.gate_text))
    return out


def _read_all(root: Path, reports: list[tuple[Path, str]]) -> list[Report]:
    """Every report parsed, oldest first by the date in its file name; undated ones in command-line order after."""
    resolver = PathResolver(_port_files(root))
    parsed = [read_report(p, shown, resolver) for p, shown in reports]
    for rep in parsed:
        if not rep.items:
            raise UserError(f"{rep.path}: no entries recognised; tried " + "; ".join(FORMATS) + ".")
    order = sorted(range(len(parsed)), key=lambda k: (not parsed[k].date, parsed[k].date or "", k))
    return [parsed[k] for k in order]


def _open_queue(cfg: Config, qpath: Path, parsed: list[Report]) -> queuefile.QueueFile:
    """The queue at QPATH, or a new one whose range is the latest report's (as its labels win)."""
    if qpath.exists():
        return queuefile.load(qpath)
    latest = next((r for r in reversed(parsed) if r.range), None)
    pin, _, target = latest.range.partition("..") if latest else ("", "", "")
    return queuefile.new(
        qpath,
        QueueMeta(
            name=qpath.stem,
            upstream=cfg.upstream_name or (cfg.upstream_repo.name if cfg.upstream_repo else ""),
            pin=pin,
            target=target,
            paths=list(cfg.upstream_paths),
        ),
    )


@dataclass
class _Merge:
    """Entries an import creates and touches, as it applies report items in order."""

    index: _ShaIndex
    next_n: int
    new: list[Entry] = field(default_factory=list)
    touched: dict[int, Entry] = field(default_factory=dict)
    before: dict[int, dict] = field(default_factory=dict)  # each touched entry's values as read: update or no-op
    new_ids: set[int] = field(default_factory=set)

    def apply(self, rep: Report, it: Item, upstream: dict, result: ImportResult) -> None:
        hits = self.index.match(it.sha)
        if len(hits) > 1:
            result.warnings.append(
                f"{rep.where(it.line)}: sha {it.sha} matches entries {', '.join(str(e.n) for e in hits)}; not imported."
            )
            return
        if not hits:
            e = Entry(n=self.next_n, sha=it.sha, subject=it.subject, pr=it.pr, verdict="unclassified")
            self.next_n += 1
            self.new.append(e)
            self.new_ids.add(id(e))
            _fill_upstream(e, it, upstream, result.upstream_checked)
            self.index.add(e)
            _apply(e, it, rep, initial=True)
            return
        e = hits[0]
        if e.n not in self.touched and id(e) not in self.new_ids:
            self.touched[e.n] = e
            self.before[e.n] = copy.deepcopy(_entry_values(e))
        if len(e.sha) < 40 and upstream.get(it.sha):
            _fill_upstream(e, it, upstream, True)
        _apply(e, it, rep, initial=False)


def import_reports(
    cfg: Config, reports: list[tuple[Path, str]], *, queue: Path | None = None, dry_run: bool = False
) -> ImportResult:
    """Read every report, then create or update the queue: one entry per upstream commit, the latest reading winning."""
    root = cfg.port_root.resolve()
    parsed = _read_all(root, reports)
    _snapshot_cited_text(root, parsed)

    qpath = _queue_destination(cfg, queue)
    created = not qpath.exists()
    qf = _open_queue(cfg, qpath, parsed)
    result = ImportResult(queue_path=qpath, created=created, reports=parsed)
    for rep in parsed:
        result.warnings += rep.warnings

    upstream: dict[str, tuple[str, str, str, list[str]]] = {}
    if cfg.upstream_repo is not None and gitio.is_git_repo(cfg.upstream_repo):
        result.upstream_checked = True
        upstream = _upstream_commits(cfg.upstream_repo, sorted({it.sha for r in parsed for it in r.items}))

    merge = _Merge(_ShaIndex(qf.queue.entries), qf.queue.next_n)
    for rep in parsed:
        for it in rep.items:
            merge.apply(rep, it, upstream, result)
    new, touched = merge.new, merge.touched

    result.added = len(new)
    result.citations = sum(len(e.citations) for e in new) + sum(len(e.citations) for e in touched.values())
    result.upstream_missing = sum(1 for e in new + list(touched.values()) if e.upstream_missing)
    changed = [e for n, e in touched.items() if _entry_values(e) != merge.before[n]]
    result.updated, result.unchanged = len(changed), len(touched) - len(changed)
    if changed:
        tables = {t.get("n"): t for t in qf.doc.get("entry", [])}
        for e in changed:
            _write_entry(tables[e.n], e)
        queuefile.rebuild(qf)
    if new:
        queuefile.append_entries(qf, new)
    if not dry_run and (new or result.updated or created):
        result.written = queuefile.save(qf)
    return result


def _fill_upstream(e: Entry, it: Item, upstream: dict, checked: bool) -> None:
    hit = upstream.get(it.sha)
    if hit:
        full, subject, date, files = hit
        e.sha = full
        e.subject = e.subject or subject
        if subject and not it.subject:
            e.subject = subject
        if date and e.date is None:
            e.date = dt.date.fromisoformat(date)
        if files and not e.files:
            e.files = files
        e.upstream_missing = False
    elif checked:
        e.upstream_missing = True


def _apply(e: Entry, it: Item, rep: Report, *, initial: bool) -> None:
    """Fold one report's reading into an entry: the later report wins, the other reading goes to history.

    A line of porttrack's own report, as porttrack wrote it, says what the queue said: it changes an
    entry the queue has in no way, and a new entry gets its verdict as audit's."""
    if it.untouched and not initial:
        return
    src = rep.where(it.line)
    if e.pr is None and it.pr is not None:
        e.pr = it.pr
    if not e.subject and it.subject:
        e.subject = it.subject
    e.issues += [n for n in it.issues if n not in e.issues]
    e.notes += [n for n in it.notes if n not in e.notes]
    # citations: one report's set replaces that report's earlier set; other reports' stay
    report_file = rep.path
    e.citations = [c for c in e.citations if c.source.rsplit(":", 1)[0] != report_file] + it.citations
    same_place = e.source == src
    later = initial or same_place or not e.source or (rep.date or "9999") >= (_date_of(e.source) or "")
    if not later:
        _remember(e, _item_reading(it, rep))
        return
    if not initial and not same_place and (e.source or e.verdict not in ("", "unclassified")):
        _remember(e, _reading(e))
    e.source = src
    if it.disposition:
        e.disposition = it.disposition
    if it.verdict is not None:
        e.verdict = it.verdict
        e.verdict_by = "audit" if it.untouched else "human"
        e.gate_text = it.gate_text
        e.parts = _parts(it)
    e.label = it.label
    if it.reason:
        e.reason = it.reason


def _remember(e: Entry, line: str) -> None:
    """Add a reading to history once per report line, however it was worded then."""
    where = line.split(": ", 1)[0] + ": "
    if not any(h.startswith(where) for h in e.history):
        e.history.append(line)


def _entry_values(e: Entry | None) -> dict:
    if e is None:
        return {}
    return {
        k: getattr(e, k)
        for k in (
            "sha",
            "subject",
            "pr",
            "date",
            "files",
            "disposition",
            "verdict",
            "verdict_by",
            "label",
            "gate_text",
            "reason",
            "source",
            "issues",
            "notes",
            "history",
            "upstream_missing",
            "citations",
            "parts",
        )
    }


def _write_entry(table, e: Entry) -> None:
    values = {k: v for k, v in _entry_values(e).items() if k not in ("citations", "parts")}
    for key in ("label", "gate_text", "source", "issues", "notes", "history", "upstream_missing", "date"):
        if not values[key] and key not in table:
            del values[key]
    queuefile.set_fields(table, values)
    queuefile.set_aot(table, "part", [queuefile.part_table(p) for p in e.parts])
    queuefile.set_aot(table, "citation", [queuefile.citation_table(c) for c in e.citations])


def _snapshot_cited_text(root: Path, reports: list[Report]) -> None:
    """Where the port repository has the tree a report read, record each cited line's text at that tree,
    so `check` can find the line again however much it moved."""
    if not gitio.is_git_repo(root):
        return
    prefix = gitio.git(root, "rev-parse", "--show-prefix").decode().strip()
    trees: dict[str, str | None] = {}
    with gitio.CatFile(root) as cat:
        blobs: dict[tuple[str, str], list[str] | None] = {}
        for rep in reports:
            for it in rep.items:
                for c in it.citations:
                    if not c.tree:
                        continue
                    if c.tree not in trees:
                        trees[c.tree] = gitio.rev_parse(root, c.tree)
                    sha = trees[c.tree]
                    if sha is None:
                        continue
                    key = (sha, c.path)
                    if key not in blobs:
                        data = cat.read(f"{sha}:{prefix}{c.path}")
                        blobs[key] = data.decode("utf-8", "replace").splitlines() if data is not None else None
                    lines = blobs[key]
                    if lines and c.line <= len(lines):
                        text = lines[c.line - 1].strip()
                        c.text = text if len(text) >= 3 else ""


def render(result: ImportResult, *, dry_run: bool) -> list[str]:
    """What the command line prints: per report what was read and how it compares with the report's own counts."""
    out = []
    for rep in result.reports:
        kinds = ", ".join(sorted(rep.formats))
        cites = sum(len(it.citations) for it in rep.items)
        facts = "; ".join(
            b
            for b in (
                f"tree {rep.tree}" if rep.tree else "tree unknown",
                f"range {rep.range}" if rep.range else "",
                f"row {rep.row}" if rep.row else "",
                f"issue #{rep.issue}" if rep.issue else "",
            )
            if b
        )
        out.append(f"{rep.path}: {len(rep.items)} entries ({kinds}), {cites} citations; {facts}")
        for key, got, stated in comparison(rep):
            mark = "ok" if got == stated else "DIFFERS"
            out.append(f"  {key}: imported {got}, report says {stated} — {mark}")
    verb = "would write" if dry_run else ("wrote" if result.written else "unchanged:")
    out.append(
        f"{verb} {result.queue_path}: {result.added} new entries, {result.updated} updated, "
        f"{result.unchanged} already up to date; {result.citations} citations on them."
    )
    if result.upstream_checked:
        out.append(
            f"{result.upstream_missing} of those entries name a sha that is not in the upstream checkout "
            "(kept, marked upstream_missing = true)."
        )
    else:
        out.append("no [upstream] repo configured: shas were matched by prefix only.")
    if not dry_run and result.citations:
        out.append("next: `porttrack check` re-verifies every imported citation against the port tree.")
    return out
