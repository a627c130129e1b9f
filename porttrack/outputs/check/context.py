"""What every finding producer reads: config, root, the queue, its line index, and a cache of port files' lines."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable
from pathlib import Path

from porttrack import gitio
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
        self.umap: dict[str, list[str]] | None = None  # upstream path -> port files, from the headers (read once)
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


_TABLE = re.compile(r"^\s*\[(\[)?\s*([A-Za-z0-9_.\s]+?)\s*\]")
_KEYLINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(.*)")


class _QueueIndex:
    """Line numbers of every entry, part, rule, ack, key and gate id, from ONE pass over the queue text.

    Findings cite queue lines by the hundred; looking each one up from scratch would make
    check quadratic in the queue's size.
    """

    def __init__(self, text: str):
        # (kind, n-or-index, part name or None) -> {"": header line, key: line}; gates -> {id: line}
        self.keys: dict[tuple, dict[str, int]] = {}
        self.gates: dict[tuple, dict[str, int]] = {}
        self.citations: dict[int, list[int]] = {}  # entry n -> line of each [[entry.citation]]
        counters = {"rule": -1, "ack": -1}
        owner: tuple | None = None  # whose keys the following lines are
        entry: tuple | None = None
        in_gate = False
        pending: list[tuple[int, str]] = []  # an entry's lines before its `n = ` is seen
        for i, line in enumerate(text.splitlines(), 1):
            m = _TABLE.match(line)
            if m:
                name = re.sub(r"\s+", "", m.group(2))
                in_gate = name.endswith(".gate")
                if name == "entry":
                    entry = owner = ("entry", None, None)
                    pending = [(i, "")]
                elif name in counters:
                    counters[name] += 1
                    owner = (name, counters[name], None)
                    self.keys[owner] = {"": i}
                    entry = None
                elif name == "entry.part" and entry is not None:
                    owner = ("entry", entry[1], "\0part")
                    self.keys.setdefault(owner, {})[""] = i
                elif name == "entry.gate":
                    owner = entry
                elif name == "entry.citation" and entry is not None and entry[1] is not None:
                    self.citations.setdefault(entry[1], []).append(i)
                    owner = None
                elif not in_gate:
                    owner = None  # [entry.symbols] and friends: their keys are not the entry's
                continue
            k = _KEYLINE.match(line)
            if not k or owner is None:
                continue
            key, value = k.group(1), k.group(2)
            if in_gate:
                gid = re.match(r"[\"']([^\"']*)[\"']", value) if key == "id" else None
                if gid:
                    self.gates.setdefault(owner, {}).setdefault(gid.group(1), i)
                continue
            if owner[0] == "entry" and owner[1] is None:
                if key == "n" and value.strip().split("#")[0].strip().isdigit():
                    n = int(value.strip().split("#")[0].strip())
                    entry = owner = ("entry", n, None)
                    self.keys.setdefault(owner, {})
                    for pl, pk in [*pending, (i, "n")]:
                        self.keys[owner].setdefault(pk, pl)
                else:
                    pending.append((i, key))
                continue
            if owner[2] == "\0part" and key == "name":
                pname = re.match(r"[\"']((?:[^\"'\\]|\\.)*)[\"']", value.strip())
                named = ("entry", owner[1], pname.group(1) if pname else "")
                self.keys[named] = {**self.keys.pop(owner), "name": i}
                owner = named
                continue
            self.keys.setdefault(owner, {}).setdefault(key, i)

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
