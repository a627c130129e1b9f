"""What every finding producer reads: config, root, the queue, its line index, and a cache of port files' lines."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable
from pathlib import Path

from porttrack import gitio, tomlmap
from porttrack.queue import file as queuefile
from porttrack import paths as pathrules
from porttrack.config import Config, inside
from porttrack.model import Entry, Part
from porttrack.outputs.check.findings import Finding, finding


class _Ctx:
    """What every stage reads: config, root, the queue and its text, and a cache of port files' lines."""

    def __init__(self, cfg: Config, root: Path, qf: queuefile.QueueFile, qrel: str):
        self.cfg, self.root, self.qf, self.q, self.qrel = cfg, root, qf, qf.queue, qrel
        self.checks: set[str] = set()
        self.scans: dict[tuple[str, ...], Any] = {}  # scope -> probe.Scan, reused by the citation checks
        self.evidence: dict[str, str] = {}  # check -> the counts behind its verdict, pass or fail
        self.controls: dict[str, str] = {}  # gate check -> the control its judgement used (explicit or chosen)
        self._lines: dict[str, list[str] | None] = {}
        self.index = _QueueIndex(qf.text)
        self.progress: Callable[[int, int], None] | None = None
        self._provs: list | None = None  # the port's provenance headers (read once, see provs)
        self.umap: dict[str, list[str]] | None = None  # upstream path -> port files, from the headers
        self.moves = self.q.moves()  # the renames the queue's entries record: a moved file keeps its counterpart
        # what one producer leaves for the later ones (the registry's order in check/run.py)
        self.found: list = []  # the findings so far
        self.jobs: list = []  # every recorded gate, for the gate and citation producers
        self.base: tuple[Any, str] | None = None  # (the queue at --base, its label) when --base was given
        self.head: str | None = None  # the port's HEAD commit, None outside git
        self.scans_run = 0
        self.reanchors: list = []  # imported citations that moved, for `check --reanchor`

    def lines(self, rel: str, what: str) -> list[str] | None:
        """The lines of a port file (None when missing or unreadable); escaping the root is refused."""
        if rel not in self._lines:
            path = inside(self.root, rel, what)
            try:
                self._lines[rel] = pathrules.read_file(path).decode("utf-8", "replace").splitlines()
            except (OSError, ValueError):
                self._lines[rel] = None
        return self._lines[rel]

    def provs(self) -> list:
        """The port's provenance headers, scanned once per check run whichever producer asks first."""
        if self._provs is None:
            from porttrack.evidence import headers

            self._provs = headers.scan_port(self.cfg)
        return self._provs

    def entry_line(self, n: int, key: str | None = None, part: str | None = None) -> int:
        return self.index.line(("entry", n, part), key)

    def gate_line(self, owner: tuple, gate_id: str) -> int:
        return self.index.gate(owner, gate_id)

    def citation_line(self, n: int, k: int) -> int:
        lines = self.index.citations.get(n, [])
        return lines[k] if k < len(lines) else self.entry_line(n)

    def ack_line(self, index: int) -> int:
        return self.index.line(("ack", index, None), "code")

    def verdict_finding(self, code: str, e: Entry, label: str, part: str | None, message: str, action: str) -> Finding:
        """A finding on the verdict of an entry or one of its parts, at the verdict's line."""
        return finding(
            code,
            message,
            action,
            self.qrel,
            self.entry_line(e.n, "verdict", part),
            entry=e.n,
            part=part or "",
            check=f"{label} verdict",
        )


class _QueueIndex:
    """Line numbers of every entry, part, rule, ack, key and gate id, from the queue text's one source map.

    Findings cite queue lines by the hundred; looking each one up from scratch would make
    check quadratic in the queue's size.
    """

    def __init__(self, text: str):
        # (kind, n-or-index, part name or None) -> {"": header line, key: line}; gates -> {id: line}
        self.keys: dict[tuple, dict[str, int]] = {}
        self.gates: dict[tuple, dict[str, int]] = {}
        self.citations: dict[int, list[int]] = {}  # entry n -> line of each [[entry.citation]]
        sm = tomlmap.source_map(text)
        for kind in ("rule", "ack"):
            for k, t in enumerate(sm.named(kind)):
                self._add((kind, k, None), t)
        for t in sm.named("entry"):
            n = t.value("n")
            if not isinstance(n, int) or isinstance(n, bool):
                continue
            self._add(("entry", n, None), t)
            self.citations.setdefault(n, []).extend(c.line for c in t.named("citation"))
            for part in t.named("part"):
                name = part.value("name")
                self._add(("entry", n, name if isinstance(name, str) else ""), part)

    def _add(self, owner: tuple, t: tomlmap.Table) -> None:
        keys = self.keys.setdefault(owner, {"": t.line})
        for key, line in t.keys.items():
            keys.setdefault(key, line)
        for g in t.named("gate"):
            gid = g.value("id")
            if isinstance(gid, str) and "id" in g.keys:
                self.gates.setdefault(owner, {}).setdefault(gid, g.keys["id"])

    def line(self, owner: tuple, key: str | None = None) -> int:
        keys = self.keys.get(owner) or self.keys.get((owner[0], owner[1], None)) or {"": 1}
        return keys.get(key or "", keys.get("", 1))

    def gate(self, owner: tuple, gate_id: str) -> int:
        return self.gates.get(owner, {}).get(gate_id) or self.line(owner)


def _rel(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _toplevel(root: Path) -> Path | None:
    return gitio.toplevel(root)


def _subject_order(s: str):
    m = re.match(r"entry (\d+)", s)
    return (0, int(m.group(1)), s) if m else (1, 0, s)


def _owners(e: Entry) -> list[tuple[str, Entry | Part, str | None]]:
    """(label, judged object, part name) for an entry and each of its parts."""
    return [(f"entry {e.n}", e, None)] + [(f"entry {e.n} part {p.name!r}", p, p.name) for p in e.parts]
