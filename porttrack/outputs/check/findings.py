"""The stable catalogue of finding codes, and what a finding and a whole check carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


# The stable catalogue: code -> (severity, one-line title). docs/ci.md documents each code;
# codes are never renamed or reused, so config filters and acknowledgements keep working.
CODES: dict[str, tuple[str, str]] = {
    "untriaged": ("error", "An entry added since the base has no verdict yet"),
    "verdict-incomplete": ("error", "A verdict lacks what docs/design.md §5 says it must carry"),
    "gate-live": ("error", "A gate's condition no longer holds: its entry is real now"),
    "gate-untrusted": ("error", "A gate's positive control found nothing, so its zero proves nothing"),
    "scan-incomplete": ("error", "Part of a gate's scope could not be read, so its count is not known"),
    "citation-stale": (
        "warning",
        (
            "A citation moved: what it cites (a gate's probe, or an imported citation's"
            " text or symbols) is on another line of the file now"
        ),
    ),
    "citation-vanished": ("error", "A citation's file is gone, or no longer mentions what it cites anywhere"),
    "citation-unanchored": (
        "warning",
        (
            "Imported citations were read at a tree that is not an ancestor of the tree"
            " checked (or is unknown here), so they are checked best-effort"
        ),
    ),
    "landing-stale": ("warning", "A landing note moved: its anchor is on another line now"),
    "landing-vanished": ("warning", "A landing note points at a file or line that no longer has its anchor"),
    "owner-missing": ("error", "An entry's owner is no row of any matrix"),
    "owner-done": ("warning", "An entry's owner row is in a done state while the entry is still deferred"),
    "actionable": (
        "warning",
        "Every blocker of a blocked entry is settled (ported, no-op or ignore): the entry can be ported now",
    ),
    "pre-pin-gap-unowned": ("warning", "Two or more entries point at a pre-pin gap and no matrix row owns it"),
    "ack-expired": ("error", "An acknowledgement is past its expiry date"),
    "ack-unused": ("warning", "An acknowledgement matches no finding any more"),
    "behaviour-behind-pin": (
        "error",
        "A port header claims a pin at or past a kvref switch its harness was seen to lack",
    ),
}


@dataclass
class Finding:
    code: str
    severity: str
    message: str  # what is wrong, with the evidence (path:line of hits, counts)
    action: str  # one sentence: what to do about it
    path: str  # file to look at, relative to the port root
    line: int
    entry: int | None = None
    part: str = ""
    gate: str = ""
    related: list[str] = field(default_factory=list)  # further path:line places (hits, the queue line)
    check: str = ""  # the check that failed, e.g. "entry 142 gate x citation" (one junit test case each)

    @property
    def subject(self) -> str:
        """The thing checked, as a reader would name it: `entry 142 part (b) gate x`."""
        bits = [f"entry {self.entry}" if self.entry is not None else ""]
        bits += [f"part {self.part!r}" if self.part else "", f"gate {self.gate}" if self.gate else ""]
        return " ".join(b for b in bits if b) or "queue"

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "entry": self.entry,
            "part": self.part or None,
            "gate": self.gate or None,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "action": self.action,
            "related": self.related,
            "check": self.check,
        }


@dataclass
class CheckResult:
    root: Path
    queue_path: str  # relative to the port root
    tree: str  # the tree checked: commit sha (+ " dirty"), or "working tree (not a git repository)"
    base: str | None  # --base ref and the sha it resolved to
    findings: list[Finding]
    acknowledged: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, ack reason)
    ignored: int = 0  # dropped by [check] ignore / min_severity
    checks: list[str] = field(default_factory=list)  # every subject checked, failing or not (junit)
    evidence: dict[str, str] = field(default_factory=dict)  # gate check -> counts, control and tree it rests on
    stats: dict = field(default_factory=dict)
    repo_prefix: str = ""  # the port root's path inside its git repository ("" when they are the same)
    reanchors: list[Reanchor] = field(default_factory=list)  # imported citations found again, for --reanchor

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0


def finding(code: str, message: str, action: str, path: str, line: int, **kw) -> Finding:
    return Finding(code=code, severity=CODES[code][0], message=message, action=action, path=path, line=line, **kw)


@dataclass
class Reanchor:
    """An imported citation found again in the checked tree: where it is now, for `check --reanchor --write`."""

    entry: int
    index: int  # position among the entry's citations
    old: str  # "path:l1-l2 @ tree"
    line: int
    end: int
    tree: str
    moved: bool = False
