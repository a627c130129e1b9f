"""What an imported report is made of: the vocabulary (labels, dispositions, the model's verdicts), items and their halves."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from porttrack.model import DISPOSITIONS, VERDICTS, Citation


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
DISPOSITION_WORDS = {**{d: d for d in DISPOSITIONS}, "UNCLASSIFIED": None}
# Where halves disagree, the entry carries the verdict of the half needing the most work.
_WORK_ORDER = ("real-gap", "inert", "surface-absent", "ported", "no-op", "ignore")
_VERDICT_WORDS = VERDICTS  # a label word that is one of the model's verdicts is that verdict

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
    untouched: bool = False  # a line of porttrack's own report, as porttrack wrote it (porttrack/outputs/marks.py)


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


# A team's sync report runs to a few hundred entries and well under 1 MiB; a report past this
# limit is refused in one sentence rather than parsed into memory it may not have (docs/import.md).
MAX_REPORT_BYTES = 4 * 2**20


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # CommonMark's code fence


def _plain(text: str) -> str:
    return re.sub(r"\*\*|__", "", text).strip()


def parse_label(cell: str) -> list[Half] | None:
    """`ALREADY_SATISFIED **+** NA surface-absent (the batch half)` -> two halves; None when not understood."""
    text = cell.replace("†", "").replace("‡", "").strip()
    # the spaces around a `+` are taken from the start of their run, not again from each of them
    segments = [s for s in re.split(r"(?:(?<!\s)\s+)?\*\*\+\*\*\s*|(?<!\s)\s+\+\s+", text) if s.strip()]
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
