"""audit: classify queue entries by the first-pass rules (docs/audit.md), recording the rule and its evidence.

The queue-only parts (the blocked-by graph from symbols and series, path rules) need
no port; the rest reads the port through ONE probe scan for every symbol of the audit.
Human verdicts are never replaced: audit only says where it would differ.
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from collections.abc import Callable

from porttrack import gates, gitio, globs, headers as headers_mod, hunks as hunks_mod
from porttrack import naming
from porttrack import owners as owners_mod
from porttrack import records as records_mod
from porttrack import refactor
from porttrack import paths as pathrules
from porttrack.config import Config
from porttrack.errors import UserError
from porttrack.visible import visible
from porttrack.model import NEEDS_GATE, UNPROBED_GATES, Entry, Gate, Part, Queue, Rule

HIT_LIMIT = 5  # hits cited per probe in evidence; the count says how many there are in all


# ---------------------------------------------------------------- selection


def entries_label(numbers: list[int]) -> str:
    """[121, 122, 123, 150] -> "121-123, 150"."""
    numbers = sorted(set(numbers))
    spans: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        spans.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ", ".join(spans)


# ---------------------------------------------------------------- series and the blocked-by graph

_SERIES = [
    re.compile(r"\[\s*(?P<k>\d+)\s*/\s*(?P<of>\d+|[Nn])\s*\]\s*\[(?P<name>[^\]\d][^\]]*)\]"),
    re.compile(r"\[(?P<name>[^\]\d][^\]]*)\]\s*\[\s*(?P<k>\d+)\s*/\s*(?P<of>\d+|[Nn])\s*\]"),
]


@dataclass
class Stage:
    series: str  # the name as first written
    k: int
    of: str  # "N" or a number
    n: int  # the entry


def series_of(subject: str) -> tuple[str, int, str] | None:
    """("KV-Cache Layout Refactor", 6, "N") for "[6/N][KV-Cache Layout Refactor] ..."."""
    for rx in _SERIES:
        m = rx.search(subject)
        if m:
            return m.group("name").strip(), int(m.group("k")), m.group("of").upper()
    return None


def series(queue: Queue) -> dict[str, list[Stage]]:
    """Series name -> its stages in the queue, by stage number (names compare case-insensitively)."""
    out: dict[str, list[Stage]] = {}
    names: dict[str, str] = {}
    for e in queue.entries:
        s = series_of(e.subject)
        if s is None:
            continue
        key = re.sub(r"\s+", " ", s[0].lower())
        name = names.setdefault(key, s[0])
        out.setdefault(name, []).append(Stage(name, s[1], s[2], e.n))
    return {k: sorted(v, key=lambda st: (st.k, st.n)) for k, v in sorted(out.items())}


def adders(queue: Queue) -> dict[str, int]:
    """Symbol -> the first entry (in queue order) that adds it."""
    out: dict[str, int] = {}
    for e in queue.entries:
        for s in e.symbols.added:
            out.setdefault(s, e.n)
    # a later entry's added lines use a new member by its bare name (`spec.tokens_per_state`),
    # so `Class.member` is also found under `member`; dunders are too common to link anything
    for e in queue.entries:
        for s in e.symbols.added:
            bare = re.split(r"\.|::", s)[-1]
            if bare != s and not bare.startswith("__"):
                out.setdefault(bare, e.n)
    return out


def _needs(syms: EntrySymbols) -> set[str]:
    """Symbols an entry (or part) needs to exist already: those it uses or changes. What it removes
    it does not wait for: deleting a name an earlier entry added needs nothing of that entry."""
    return (set(syms.uses) | set(syms.changed)) - set(syms.removed)


def symbol_edges(queue: Queue) -> dict[int, dict[int, list[str]]]:
    """n -> {earlier entry that adds a symbol n needs: those symbols}. Queue order decides "earlier"."""
    add = adders(queue)
    pos = {e.n: i for i, e in enumerate(queue.entries)}
    out: dict[int, dict[int, list[str]]] = {}
    for e in queue.entries:
        for s in sorted(_needs(_entry_symbols(e))):
            a = add.get(s)
            if a is not None and a != e.n and pos[a] < pos[e.n]:
                out.setdefault(e.n, {}).setdefault(a, []).append(s)
    return out


def series_edges(queue: Queue) -> dict[int, dict[int, str]]:
    """n -> {earlier stage of its series in the queue: "name k/N"}, by stage number, not queue order."""
    out: dict[int, dict[int, str]] = {}
    for name, stages in series(queue).items():
        for st in stages:
            for earlier in stages:
                if earlier.k < st.k:
                    out.setdefault(st.n, {})[earlier.n] = f"[{earlier.k}/{earlier.of}][{name}]"
    return out


def blocked_graph(queue: Queue) -> dict[int, list[int]]:
    """Entry -> the entries it waits on directly: symbol adders and earlier series stages that are not
    ported, plus recorded blocked_by (of the entry or its parts). Use `closure` for the transitive set."""
    ported = {e.n for e in queue.entries if e.verdict == "ported"}
    out: dict[int, set[int]] = {}
    for n, adders in symbol_edges(queue).items():
        out.setdefault(n, set()).update(b for b in adders if b not in ported)
    for n, stages in series_edges(queue).items():
        out.setdefault(n, set()).update(b for b in stages if b not in ported)
    for e in queue.entries:
        rec = set(e.blocked_by).union(*(p.blocked_by for p in e.parts)) if e.parts else set(e.blocked_by)
        out.setdefault(e.n, set()).update(b for b in rec if b not in ported)
    return {n: sorted(v) for n, v in sorted(out.items()) if v}


def closure(graph: dict[int, list[int]], n: int) -> list[int]:
    """Every entry `n` waits on, directly or through others (cycles are cut)."""
    seen: set[int] = set()
    stack = list(graph.get(n, []))
    while stack:
        b = stack.pop()
        if b in seen or b == n:
            continue
        seen.add(b)
        stack.extend(graph.get(b, []))
    return sorted(seen)


def actionable(queue: Queue) -> list[tuple[int, list[int]]]:
    """Blocked entries (or entries with a blocked part) whose recorded blockers are all ported now."""
    ported = {e.n for e in queue.entries if e.verdict == "ported"}
    out = []
    for e in queue.entries:
        blockers: set[int] = set()
        for obj in e.and_parts:
            if obj.verdict == "blocked":
                blockers.update(obj.blocked_by)
        if blockers and blockers <= ported:
            out.append((e.n, sorted(blockers)))
    return out


# ---------------------------------------------------------------- path rules


def rule_matches(rule: Rule, files: list[str]) -> bool:
    """A path rule covers an entry when every mirrored file it touches matches the rule's glob."""
    return bool(files) and all(globs.match(rule.upstream, f) for f in files)


# ---------------------------------------------------------------- results


@dataclass
class EntrySymbols:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)


def _entry_symbols(e: Entry) -> EntrySymbols:
    return EntrySymbols(list(e.symbols.added), list(e.symbols.changed), list(e.symbols.removed), list(e.symbols.uses))


def _part_symbols(e: Entry, p: Part) -> EntrySymbols:
    """A part's symbols, sorted into the entry's categories; a name the entry never listed counts as changed."""
    if not p.symbols:
        return _entry_symbols(e)
    mine = set(p.symbols)
    known = set(e.symbols.added) | set(e.symbols.changed) | set(e.symbols.removed) | set(e.symbols.uses)
    return EntrySymbols(
        [s for s in e.symbols.added if s in mine],
        [s for s in e.symbols.changed if s in mine] + [s for s in p.symbols if s not in known],
        [s for s in e.symbols.removed if s in mine],
        [s for s in e.symbols.uses if s in mine],
    )


@dataclass
class Result:
    """What audit concludes for one entry, or one part of it."""

    n: int
    part: str | None
    verdict: str
    rule: str  # e.g. "8.5 surface-absent" or "path-rule vllm/v1/kv_offload/**"
    reason: str
    evidence: list[str] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    owner: str = ""
    blocked_by: list[int] = field(default_factory=list)
    recorded: str = "unclassified"  # the verdict the queue holds now
    recorded_by: str = ""
    probes: list[str] = field(default_factory=list)  # symbols probed for this result

    @property
    def label(self) -> str:
        return f"entry {self.n}" + (f" part {self.part!r}" if self.part else "")

    @property
    def human(self) -> bool:
        """A verdict a person set: verdict_by = "human", or a verdict written with no verdict_by at all."""
        return self.recorded_by == "human" or (not self.recorded_by and self.recorded not in ("", "unclassified"))

    @property
    def disagrees(self) -> bool:
        return self.human and self.recorded != self.verdict

    def as_json(self) -> dict:
        return {
            "entry": self.n,
            "part": self.part,
            "verdict": self.verdict,
            "rule": self.rule,
            "reason": self.reason,
            "owner": self.owner,
            "blocked_by": self.blocked_by,
            "gates": [{k: v for k, v in g.__dict__.items() if v not in (None, "", [], False)} for g in self.gates],
            "evidence": self.evidence,
            "recorded": self.recorded,
            "recorded_by": self.recorded_by,
        }


@dataclass
class Audit:
    results: list[Result]
    tree: str  # port commit probed, plus " (dirty)"
    scope: list[str]
    probes: list[Any]  # every probe.Probe judged, by scope then symbol
    counts: dict[str, Any]  # symbol -> probe.Count (code scope first)
    rows: list[owners_mod.Row]
    entries: list[int]  # the entries judged
    prepin: Any = None  # prepin.Outcome: pre-pin gaps and net-zero pairs (docs/audit.md)
    notices: list[str] = field(default_factory=list)  # said once, loudly: e.g. pins the upstream lacks


# ---------------------------------------------------------------- probing


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower() or "probe"


def _code(count) -> int:
    return int(getattr(count, "code", 0) or 0) if count is not None else 0


def _hits(count, kinds: tuple[str, ...] | None = None) -> list:
    if count is None:
        return []
    return [h for h in getattr(count, "hits", []) if kinds is None or h.kind in kinds]


def _definition(count) -> str:
    """path:line of a definition hit, else of the first code hit outside tests."""
    for kinds in (("definition",), ("consumer", "delegation"), ("test",), None):
        hs = _hits(count, kinds)
        if hs:
            return f"{hs[0].path}:{hs[0].line}"
    return ""


class _Probes:
    """One scan per distinct scope (the whole audit normally has one), judged lazily per symbol."""

    def __init__(self, cfg: Config, scans: dict[tuple[str, ...], tuple[list[str], list[str]]], progress=None):
        from porttrack import probe

        self._probe = probe
        self.cfg = cfg
        self.scans = {}
        self.judged: dict[tuple[tuple[str, ...], str, str], Any] = {}
        for scope, (symbols, regexes) in scans.items():
            try:
                self.scans[scope] = probe.scan(
                    cfg.port_root,
                    sorted(set(symbols)),
                    regexes=tuple(sorted(set(regexes))),
                    scope=list(scope),
                    **probe.config_options(cfg),
                    progress=progress,
                )
            except re.error as e:
                raise UserError(f"a gate regex in scope {' '.join(scope)} does not compile ({e}).") from None

    def judge(self, symbol: str, control: str | None = None, scope: tuple[str, ...] | None = None):
        scope = scope or tuple(self.cfg.code_scope)
        key = (scope, symbol, control or "")
        if key not in self.judged:
            self.judged[key] = self._probe.judge(self.scans[scope], symbol, control or None)
        return self.judged[key]

    def count(self, symbol: str, scope: tuple[str, ...] | None = None):
        scan = self.scans[scope or tuple(self.cfg.code_scope)]
        return scan.counts.get(symbol)

    @property
    def tree(self) -> str:
        scan = self.scans.get(tuple(self.cfg.code_scope)) or next(iter(self.scans.values()), None)
        return tree_text(scan.tree) if scan is not None else ""


def tree_text(tree) -> str:
    """The port commit probed, in full, plus "+dirty" for a modified working tree."""
    if getattr(tree, "commit", None) is None:
        return str(tree)
    return tree.commit + ("+dirty" if tree.dirty else "")


def probe_line(symbol: str, p, c, scope: tuple[str, ...], tree: str) -> str:
    """One re-checkable evidence line: tree, scope, probe, counts, and the control's count."""
    ctl = f"control {p.control}: code {_code(p.control_count)}" if p.control else "no control"
    how = f" ({p.control_how})" if p.control_how else ""
    extra = ""
    if c is not None:
        extra = f", raw {c.raw}, files {c.files}, definitions {c.definitions}, consumers {c.consumers}, tests {c.tests}"
    return f"probe {symbol} @ {tree} in {' '.join(scope)}: {p.status}, code {_code(c)}{extra}; {ctl}{how}"


_CODE_KINDS = ("definition", "consumer", "delegation")
_KIND_ORDER = {"definition": 0, "consumer": 1, "delegation": 2, "test": 3, "comment": 4}


def hit_lines(symbol: str, c) -> list[str]:
    hs = sorted(_hits(c), key=lambda h: (_KIND_ORDER.get(h.kind, 5), h.path, h.line))
    lines = [f"  {symbol} {h.kind} {h.path}:{h.line}" for h in hs[:HIT_LIMIT]]
    if len(hs) > HIT_LIMIT:
        lines.append(f"  {symbol}: {len(hs) - HIT_LIMIT} more hits")
    return lines


# ---------------------------------------------------------------- the rules


def _mirrored(cfg: Config, queue: Queue, files: list[str]) -> list[str]:
    prefixes = cfg.upstream_paths or queue.meta.paths
    return [f for f in files if pathrules.mirrored(f, prefixes)]


def _pin_position(pin: str, queue: Queue, cfg: Config, entry: Entry) -> bool | None:
    """Is an upstream pin at or past `entry`? None when neither the queue nor the upstream repo can place it."""
    pos = {e.n: i for i, e in enumerate(queue.entries)}
    me = pos[entry.n]
    for i, e in enumerate(queue.entries):
        if headers_mod.pin_matches(pin, e.sha):
            return i >= me
    if headers_mod.pin_matches(pin, queue.meta.target):
        return True
    if headers_mod.pin_matches(pin, queue.meta.pin):
        return False
    if cfg.upstream_repo and entry.sha and Path(cfg.upstream_repo).is_dir():
        placed = gitio.ancestry(Path(cfg.upstream_repo), entry.sha, pin)
        if placed is not None:
            return placed
    return None


def pin_at_or_past(pin: str, queue: Queue, cfg: Config, entry: Entry) -> bool:
    """True when a header's pin is placed at or past the entry (False when before, or not placeable)."""
    return bool(_pin_position(pin, queue, cfg, entry))


class _Ctx:
    def __init__(self, cfg: Config, queue: Queue, probes: _Probes, rows, where: Callable[[int], str] | None):
        self.cfg = cfg
        self.queue = queue
        self.probes = probes
        self.rows = rows
        self.where = functools.lru_cache(maxsize=None)(where) if where else None  # line_of rescans the file
        self.scope = tuple(cfg.code_scope)
        self.tree = probes.tree
        self.adders = adders(queue)
        self.series_edges = series_edges(queue)
        self.graph = blocked_graph(queue)
        self._provs: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None
        self._hunks: dict[tuple[str, tuple[str, ...]], list | None] = {}
        self.results: dict[int, Result] = {}  # entry-level results of this run so far, by entry
        self._records: records_mod.Records | None = None
        self._port_tokens: dict[str, set[str]] = {}
        self._siblings: dict[str, list[str]] | None = None
        self._port_files: dict[str, list[str]] = {}  # upstream path -> its port counterparts
        self._blobs: gitio.CatFile | None = None
        # the files of the last few entries, read for tokens, members and messages: bounded, since a
        # long queue touches thousands of file versions and each is needed only while its entry is judged
        self.upstream_text = functools.lru_cache(maxsize=64)(self._read_upstream)
        self.upstream_tokens = functools.lru_cache(maxsize=64)(self._read_tokens)
        self.upstream_members = functools.lru_cache(maxsize=64)(self._read_members)
        self._lacks: dict[str, bool] = {}
        self._greps = 0
        self._all_tokens: set[str] | None = None
        self._tree = pathrules.Tree(cfg.port_root)

    def siblings(self, upstream: str) -> list[str]:
        """Symbols (and their classes) that entries of this queue add or change in one upstream file."""
        if self._siblings is None:
            idx: dict[str, set[str]] = {}
            for e in self.queue.entries:
                names = [*e.symbols.added, *e.symbols.changed]
                names += [c for c in map(_owner_class, names) if c]
                for f in e.files:
                    idx.setdefault(f, set()).update(names)
            self._siblings = {f: sorted(v) for f, v in idx.items()}
        return self._siblings.get(upstream, [])

    def queue_files(self) -> list[str]:
        """Every upstream file an entry of this queue changes."""
        self.siblings("")
        return list(self._siblings or {})

    def _read_upstream(self, rev: str, path: str) -> str | None:
        """One upstream file at `rev`, through one `git cat-file --batch`; None when git cannot show it."""
        repo = self.cfg.upstream_repo
        if repo is None or not Path(repo).is_dir():
            return None
        if self._blobs is None:
            self._blobs = gitio.CatFile(Path(repo))
        data = self._blobs.read(f"{rev}:{path}")
        return data.decode("utf-8", "replace") if data is not None else None

    def _read_tokens(self, rev: str, path: str) -> frozenset[str] | None:
        """hunks.file_tokens of one upstream file at `rev`; None when git cannot show it."""
        text = self.upstream_text(rev, path)
        return None if text is None else hunks_mod.file_tokens(text)

    def _read_members(self, rev: str, path: str) -> dict[str, set[str]]:
        """hunks.class_members of one upstream file at `rev` (empty when unreadable or no Python)."""
        text = self.upstream_text(rev, path) if path.endswith(".py") else None
        return hunks_mod.class_members(text) if text is not None else {}

    def port_lacks(self, name: str) -> bool:
        """Has the port's code scope no code mention of `name` in any spelling (comments left out)?
        One `git grep` finds the candidate lines; their files' code tokens decide."""
        if name not in self._lacks:
            pattern = spelling_pattern(name)
            if not pattern:
                return False
            self._greps += 1
            tokens = self._code_tokens() if self._greps > _GREPS_BEFORE_INDEX else None
            if tokens is not None:
                self._lacks[name] = naming.norm(name) not in tokens
                return self._lacks[name]
            found = gitio.grep_lines(self.cfg.port_root, pattern, list(self.cfg.code_scope))
            if found is None:  # no git work tree: nothing to say the port lacks it
                self._lacks[name] = False
            else:
                self._lacks[name] = not any(naming.norm(name) in self.port_tokens(f) for f in found)
        return self._lacks[name]

    def close(self) -> None:
        if self._blobs is not None:
            self._blobs.close()

    def port_tokens(self, rel: str) -> set[str]:
        """hunks.port_tokens of one port file (read once, never through a link or out of the root)."""
        if rel not in self._port_tokens:
            try:
                real = self._tree.resolve_file(rel)
                raw = pathrules.read_file(real) if real is not None else b""
            except (OSError, pathrules.Outside):
                raw = b""
            self._port_tokens[rel] = hunks_mod.port_tokens(raw.decode("utf-8", "replace"))
        return self._port_tokens[rel]

    def _code_tokens(self) -> set[str] | None:
        """Every code token of every file in the code scope (built once, after the first few greps have
        shown the audit asks often: each `git grep` of a real port costs tens of milliseconds)."""
        if self._all_tokens is None:
            proc = gitio.run(
                self.cfg.port_root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                *self.cfg.code_scope,
            )  # fmt: skip
            if proc.returncode != 0:
                return None
            names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
            self._all_tokens = set().union(*(self.port_tokens(n) for n in names))
        return self._all_tokens

    @property
    def records(self):
        """Deferral records and prior triage in the port's code scope and docs (read once)."""
        if self._records is None:
            folders = sorted({*self.cfg.code_scope, "docs"})
            self._records = records_mod.scan(self.cfg.port_root, folders, self.cfg.deferral_words)
        return self._records

    def hunks(self, e: Entry, paths: list[str]):
        """The entry's hunks in `paths` (gitio.Hunk), or None when no upstream checkout shows the commit."""
        key = (e.sha, tuple(paths))
        if key not in self._hunks:
            repo = self.cfg.upstream_repo
            ok = repo is not None and Path(repo).is_dir() and bool(e.sha)
            self._hunks[key] = gitio.diff_hunks(Path(repo), e.sha, list(paths)) if ok and repo is not None else None
        return self._hunks[key]

    def is_code(self, upstream: str) -> bool:
        """A source file that is not a test, doc, CI or benchmark file (`[audit] non_code`)."""
        if any(globs.match(g, upstream) for g in self.cfg.non_code):
            return False
        return any(upstream.endswith(x) for x in self.cfg.source_suffixes)

    def provenance(self):
        if self._provs is None:
            scopes = sorted({s for paths in self.cfg.scopes.values() for s in paths})
            provs = headers_mod.scan_headers(self.cfg.port_root, scan_lines=self.cfg.header_scan_lines, scopes=scopes)
            self._provs = (headers_mod.upstream_map(provs), headers_mod.pins_of(provs))
        return self._provs

    def maps_to_port(self, upstream: str) -> bool:
        """Has the upstream file a port counterpart: a [[map]] template, or a header naming it?

        A port that declares neither maps every file under the mirrored paths.
        """
        if any(m.apply(upstream) is not None for m in self.cfg.maps):
            return True
        umap, _ = self.provenance()
        if upstream in umap:
            return True
        return not self.cfg.maps and not umap

    def port_files(self, upstream: str) -> list[str]:
        """Port files for an upstream path: provenance headers first, then [[map]] templates that exist."""
        if upstream not in self._port_files:
            self._port_files[upstream] = headers_mod.counterparts(self.cfg, self.provenance()[0], upstream)
        return self._port_files[upstream]


_GREPS_BEFORE_INDEX = 16  # past this, one read of the whole code scope is cheaper than a grep a name


def spelling_pattern(name: str) -> str:
    """An extended regex (for `git grep -i`) of every spelling `naming` knows for `name`; no word
    boundaries, so that `canvasMode_` and `kCanvasMode` are candidates too (their tokens decide)."""
    ws = naming.words(name)
    return "_?".join(re.escape(w) for w in ws)


def _gate_for_rule(g: Gate, p) -> Gate:
    """A path rule's gate copied onto an entry, citing what its probe found when the rule cites nothing."""
    out = Gate(**g.__dict__)
    out.scope = list(g.scope)
    if not out.established_at and p is not None:
        out.established_at = _definition(p.control_count if g.kind == "absent" else p.count)
    return out


def _rule_gate_holds(ctx: _Ctx, g: Gate) -> tuple[bool | None, str, Any]:
    """(holds, evidence line, probe) for one of a path rule's gates; holds None when it cannot be judged.

    What a gate means is `gates`' to say, as for check."""
    if g.kind == "entry-ported":
        waited = ctx.queue.entry(g.entry) if g.entry is not None else None
        holds = gates.entry_state(g, waited).state == gates.HOLDS
        return holds, f"gate {g.id}: entry {g.entry} is {'not ' if holds else ''}ported", None
    if g.kind == "unmapped":
        st = gates.counterpart_state(g, ctx.port_files(g.probe))
        holds = st.state == gates.HOLDS
        return holds, f"gate {g.id}: " + (f"{g.probe} has no port counterpart" if holds else st.why), None
    scope = tuple(g.scope or ctx.cfg.code_scope)
    try:
        p = ctx.probes.judge(g.probe, g.control or None, scope)
    except ValueError as e:  # a word control for a regex probe, or the reverse
        raise UserError(f"path rule gate {g.id!r}: {e}; a control must have the probe's form.") from None
    c = ctx.probes.count(g.probe, scope)
    line = probe_line(g.probe, p, c, scope, ctx.tree)
    st = gates.probe_state(g, c, p.status, p.control, _code(p.control_count), " ".join(scope))
    if st.state in (gates.UNTRUSTED, gates.INCOMPLETE):
        return None, line, p
    holds = st.state == gates.HOLDS
    return holds, f"gate {g.id} ({g.kind}) {'holds' if holds else 'is LIVE'}: {line}", p


@dataclass
class Subject:
    """One entry (or part) under judgement: what every rule's predicate reads, and the result it fills."""

    ctx: _Ctx
    e: Entry
    obj: Entry | Part
    syms: EntrySymbols
    files: list[str]
    res: Result
    under: list[str] = field(default_factory=list)  # files under the mirrored paths
    mirrored: list[str] = field(default_factory=list)  # of those, the ones with a port counterpart, and code
    unmapped: list[str] = field(default_factory=list)  # of `mirrored`, code files with no port counterpart
    linked: dict[str, int] = field(default_factory=dict)  # needed symbol -> the earlier entry adding it
    probed: list[str] = field(default_factory=list)
    judged: dict[str, Any] = field(default_factory=dict)  # symbol -> probe.Probe
    counts: dict[str, Any] = field(default_factory=dict)  # symbol -> probe.Count
    present: set[str] = field(default_factory=set)  # probed symbols with a code hit
    blockers: dict[int, list[str]] | None = None  # entry -> why it waits on it (computed once)
    content: list[Judged] | None = None  # _content_states (computed once)
    spelled: dict[str, str] = field(default_factory=dict)  # probed symbol -> the spelling the port has it in
    _probed: bool = False

    @property
    def ev(self) -> list[str]:
        return self.res.evidence

    def probe(self) -> None:
        """Probe every symbol the entry adds, changes, removes, or needs from an earlier entry (once)."""
        if self._probed:
            return
        self._probed = True
        ctx, syms, e = self.ctx, self.syms, self.e
        self.linked = {s: ctx.adders[s] for s in sorted(_needs(syms)) if s in ctx.adders and ctx.adders[s] != e.n}
        self.probed = sorted(set(syms.added) | set(syms.changed) | set(syms.removed) | set(self.linked))
        self.res.probes = self.probed
        self.present = set()
        for x in self.probed:
            # the first spelling (as written, then snake/Pascal/camel/kPascal) found where it would be
            spelled = next(
                (
                    sp
                    for sp in naming.spellings(x)
                    if ctx.probes.count(sp) is not None
                    and _code(ctx.probes.count(sp)) > 0
                    and self._in_place(sp, ctx.probes.count(sp))
                ),
                x,
            )
            self.judged[x], self.counts[x] = ctx.probes.judge(spelled), ctx.probes.count(spelled)
            self.spelled[x] = spelled
            if spelled != x:
                self.ev.append(f"{x} is spelled {spelled.split('.')[-1]} in the port")
            self.ev.append(probe_line(spelled, self.judged[x], self.counts[x], ctx.scope, ctx.tree))
            self.ev.extend(hit_lines(spelled, self.counts[x]))
            if _code(self.counts[x]) > 0 and (spelled != x or self._in_place(x, self.counts[x], say=True)):
                self.present.add(x)

    def _in_place(self, symbol: str, count, say: bool = False) -> bool:
        """A `Class.member` counts where the class is: in a file that also names the class (its
        declaration, or `Class::member` definitions), or, when the port has no such class at all,
        in the port counterparts of the entry's files. A bare name counts anywhere."""
        cls = _owner_class(symbol)
        if cls is None or symbol.endswith(".__init__"):
            return True
        ctx = self.ctx
        files = {h.path for h in _hits(count, _CODE_KINDS)}
        ccount = ctx.probes.count(cls)
        if _code(ccount) > 0:
            where = {h.path for h in _hits(ccount, _CODE_KINDS)}
            how = f"files that name {cls}"
        else:
            where = {pf for up in self.mirrored for pf in ctx.port_files(up)}
            how = f"the port counterparts of {', '.join(self.mirrored)}, as the port has no {cls}"
            owner = self._other_owner(symbol, cls)
            if owner is not None and files & where:
                if say:
                    self.ev.append(
                        f"{symbol}: the port has no {cls}; its {symbol.split('.')[-1]} hits are those of {owner}, "
                        "which the upstream file also defines it on and the port has, so it counts as absent"
                    )
                return False
        if files & where:
            return True
        if say:
            self.ev.append(
                f"{symbol}: its {len(files)} file(s) with code hits are none of {how}, so it counts as absent"
            )
        return False

    def _other_owner(self, symbol: str, cls: str) -> str | None:
        """Another class of the entry's upstream files that defines the same member and that the
        port's counterpart of that file names in code: then a port hit on the bare member there is
        that class's, not the absent one's."""
        bare = re.split(r"\.|::", symbol)[-1]
        ctx = self.ctx
        for up in self.mirrored:
            named = set().union(*(ctx.port_tokens(pf) for pf in ctx.port_files(up)))
            for other in sorted(ctx.upstream_members(self.e.sha, up).get(bare, set()) - {cls}):
                if naming.norm(other) in named:
                    return f"{other}.{bare}"
        return None

    def fire(self, rule: AuditRule, reason: str, *, verdict: str | None = None, rule_text: str | None = None) -> bool:
        self.res.verdict, self.res.rule, self.res.reason = verdict or rule.verdict, rule_text or rule.id, reason
        return True


@dataclass(frozen=True)
class AuditRule:
    """One first-pass rule: tried in table order, the first whose predicate fires decides.

    `fires(rule, subject)` returns True when it applies, after filling the subject's result
    (verdict, reason, evidence, gates); `when` and `records` are what docs/audit.md says of it.
    """

    id: str
    verdict: str  # the verdict it gives ("(the rule's)" for path rules)
    fires: Callable[[AuditRule, Subject], bool]
    when: str
    records: str


def _behaviour(rule: AuditRule, s: Subject) -> bool:
    """What the port's own code did (validate kv --record) decides before any static probe.

    An entry whose commit is a kvref switch carries [entry.behaviour]: the harness answered
    the cases that tell the switch apart as with it (ported) or as without it (real-gap).
    Mixed answers decide nothing and leave the entry to the static rules.
    """
    b = s.e.behaviour
    if b is None or s.obj is not s.e:
        return False
    s.ev.append(
        f"behaviour: harness {b.harness!r} ({b.impl}), validate kv --as-of {b.semantics} --cases {b.cases} "
        f"--seed {b.seed}: {b.agree} case(s) as with kvref switch {b.switch}, {b.lack} as without, "
        f"{b.other} as neither" + (f" (recorded {b.recorded})" if b.recorded else "")
    )
    if b.result == "matches":
        return s.fire(
            rule,
            f"the port's harness answers as with kvref switch {b.switch} ({b.agree} cases, case {b.case})",
            verdict="ported",
        )
    if b.result == "lacks":
        return s.fire(
            rule,
            f"the port's harness answers as without kvref switch {b.switch}: case {b.case} "
            f"{b.field} expected {b.expected}, got {b.got}",
            verdict="real-gap",
        )
    return False


def _ignore(rule: AuditRule, s: Subject) -> bool:
    """Nothing a port could need: outside the mirrored subtrees, or files under them that no
    [[map]] or provenance header gives a counterpart and that are no code (CI config, docs, tests)."""
    ctx = s.ctx
    s.under = _mirrored(ctx.cfg, ctx.queue, s.files)
    mapped = [f for f in s.under if ctx.maps_to_port(f)]
    s.unmapped = [f for f in s.under if f not in mapped and ctx.is_code(f)]
    s.mirrored = mapped + s.unmapped
    if s.mirrored:
        return False
    paths = ", ".join(pathrules.folder(p) for p in ctx.cfg.upstream_paths or ctx.queue.meta.paths)
    if s.under:
        s.ev.append(
            f"files {', '.join(s.under)} lie under the mirrored paths {paths}, but nothing maps them into the port "
            "and none is code ([audit] non_code, source_suffixes)"
        )
        return s.fire(
            rule, f"no [[map]] or provenance header gives {', '.join(s.under)} a port counterpart, and none is code"
        )
    s.ev.append(f"files {', '.join(s.files) or '(none)'} lie outside the mirrored paths {paths}")
    return s.fire(rule, f"touches no mirrored path ({paths})")


def _no_op(rule: AuditRule, s: Subject) -> bool:
    """Every changed line of the mirrored code is a comment, a docstring, a language-only construct,
    or code that carries no behaviour (porttrack/refactor.py: moved, reworded, renamed, unused)."""
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if not hunks:
        return False
    ctx, sha = s.ctx, s.e.sha
    texts = refactor.Texts(lambda p: ctx.upstream_text(f"{sha}^", p), lambda p: ctx.upstream_text(sha, p))
    every = ctx.hunks(s.e, s.e.files) or hunks
    lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, refactor.explain(hunks, texts, every, messages=False))
    if not lo.only and all(map(refactor.maybe_message, lo.behaviour)):  # parse the files only when it may pay
        lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, refactor.explain(hunks, texts, every))
    if not lo.only:
        return False
    what = ", ".join(lo.constructs) or "comments and docstrings"
    s.ev.append(
        f"upstream diff {s.e.short} in {', '.join(s.mirrored)}: {len(hunks)} hunk(s), every changed line is "
        f"{what} (or a comment, docstring or blank); `[audit] language_only` lists the constructs, "
        "docs/audit.md the code that carries no behaviour"
    )
    return s.fire(rule, f"language-only change: {what}")


def _deferred(rule: AuditRule, s: Subject) -> bool:
    """The port has the surface and records this change's symbol (or its PR) as deliberately left
    out: porting work exists, by the port's own account. A member counts when the port has its
    class; a top-level name when its file has a counterpart. (A deferral of a whole class the port
    lacks is no gap in a surface it has: the surface rules decide those.)"""
    if s.unmapped == s.mirrored:
        return False
    if _content_absent(s):  # recorded as left out, and the port has none of what the change edits
        return False
    s.probe()
    names: list[str] = []
    for x in sorted(set(s.syms.added) | set(s.syms.changed) | set(s.syms.removed)):
        bare = re.split(r"\.|::", x)[-1]
        cls = _owner_class(x)
        if bare.startswith("__") or (cls is not None and _code(s.ctx.probes.count(cls)) == 0):
            continue
        if x in s.present:  # an omission is of something the port lacks; a name it has is another thing
            continue
        names.append(bare)
    if not s.ctx.records.deferrals:
        return False
    near = {pf for up in s.mirrored for pf in s.ctx.port_files(up)}
    for x in s.probed:  # and where the port defines the entry's symbols
        near.update(h.path for h in _hits(s.counts[x], ("definition",)))
    qualified = [
        x
        for x in sorted(set(s.syms.added) | set(s.syms.changed) | set(s.syms.removed))
        if _owner_class(x) and not x.endswith("__") and x not in s.present
    ]
    found = s.ctx.records.deferral_for(names, [s.e.pr] if s.e.pr is not None else [], near, qualified)
    if found is None:
        return False
    rec, what = found
    s.ev.append(f"deferral record {rec.where} ({rec.deferral!r}) names {what}: {rec.text}")
    return s.fire(rule, f"the port records {what} as left out ({rec.deferral}) at {rec.where}")


def _unmapped(rule: AuditRule, s: Subject) -> bool:
    """Every mirrored code file lacks a port counterpart, and none of the entry's own symbols is in the port."""
    if not s.unmapped or s.unmapped != s.mirrored:
        return False
    s.probe()
    own = sorted(set(s.syms.added) | set(s.syms.changed) | set(s.syms.removed))
    if any(x in s.present for x in own):
        return False
    s.ev.append(f"no [[map]] or provenance header gives {', '.join(s.unmapped)} a port counterpart")
    _absent_gates(s, own)
    if not own:
        s.ev.append("the entry names no symbol to gate on; its files' lack of a counterpart is the evidence")
        # the day a header or [[map]] gives a file a counterpart, check says the entry is to re-judge
        s.res.gates += [Gate(id=f"{_slug(up)}-unmapped", kind="unmapped", probe=up) for up in s.unmapped]
    return s.fire(
        rule,
        f"the port has no counterpart of {', '.join(s.unmapped)}" + (f" and none of {', '.join(own)}" if own else ""),
    )


def _path_rule(rule: AuditRule, s: Subject) -> bool:
    """A standing disposition holds while all of its gates hold."""
    ctx, res = s.ctx, s.res
    for prule in ctx.queue.rules:
        if not rule_matches(prule, s.mirrored):
            continue
        lines, verdicts, judged_gates = [], [], []
        for g in prule.gates:
            holds, line, p = _rule_gate_holds(ctx, g)
            lines.append(line)
            verdicts.append(holds)
            judged_gates.append(p)
        if any(h is None for h in verdicts):
            s.ev.extend(lines)
            return s.fire(
                rule_by_id("untrusted"),
                f"a gate of the path rule {prule.upstream} could not be judged: its positive control failed",
            )
        if all(verdicts):
            res.gates = [_gate_for_rule(g, p) for g, p in zip(prule.gates, judged_gates, strict=False)]
            s.ev.append(f"files {', '.join(s.mirrored)} all match the path rule {prule.upstream}")
            s.ev.extend(lines)
            return s.fire(
                rule,
                prule.reason or f"every file matches the path rule {prule.upstream}",
                verdict=prule.verdict,
                rule_text=f"{rule.id} {prule.upstream}",
            )
        s.ev.append(f"path rule {prule.upstream} does not apply: a gate is live")
        s.ev.extend(lines)
    return False


def _untrusted(rule: AuditRule, s: Subject) -> bool:
    unread = [f for f in s.e.unreadable if f in s.files]
    if unread:  # queue build --skip-missing: their symbols were never extracted, so nothing can be judged
        s.ev.append(
            f"files {', '.join(unread)} could not be read when the queue was built (missing from the upstream clone)"
        )
        return s.fire(rule, f"cannot judge: {', '.join(unread)} could not be read from the upstream clone")
    s.probe()
    bad = [x for x in s.probed if s.judged[x].status in ("untrusted", "incomplete")]
    if not bad:
        return False
    why = "; ".join(f"{x}: {s.judged[x].reason or s.judged[x].status}" for x in bad)
    return s.fire(rule, f"cannot judge: {why}")


_CODE_ONLY = re.compile(r"#.*$" r'|"{3}.*?"{3}' r"|'{3}.*?'{3}" r'|"(?:[^"\\]|\\.)*"' r"|'(?:[^'\\]|\\.)*'")


def _named_in_code(s: Subject, symbol: str) -> bool:
    """Do the entry's added lines name `symbol` in code, not only in a comment or a docstring?
    True when the diff cannot be read: then the queue's `uses` stands."""
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if hunks is None:
        return True
    bare = re.split(r"\.|::", symbol)[-1]
    word = re.compile(r"(?<![\w])" + re.escape(bare) + r"(?![\w])")
    in_doc = False
    for h in hunks:
        for line in h.new:
            quotes = line.count('"""') + line.count("'''")
            if in_doc or (quotes == 1):
                if quotes % 2 == 1:
                    in_doc = not in_doc
                continue
            if word.search(_CODE_ONLY.sub("", line)):
                return True
    return False


def _blockers(s: Subject) -> dict[int, list[str]]:
    """The entries this one waits on, from `blocked_graph` (symbol adders and earlier series stages
    not ported), kept where the port lacks the symbol and the entry names it in code."""
    if s.blockers is not None:
        return s.blockers
    ctx, e = s.ctx, s.e
    s.probe()
    waits = set(ctx.graph.get(e.n, []))
    out: dict[int, list[str]] = {}
    for sym, a in s.linked.items():
        if a in waits and sym not in s.present and (sym in s.syms.changed or _named_in_code(s, sym)):
            out.setdefault(a, []).append(f"uses {sym}, which entry {a} adds and the port lacks")
    for b, stage in ctx.series_edges.get(e.n, {}).items():
        if b in waits:
            out.setdefault(b, []).append(f"earlier series stage {stage} is not ported")
    s.blockers = out
    return out


def _verdict_of(ctx: _Ctx, n: int) -> tuple[str, list[Gate]]:
    """An entry's verdict as this run judged it (else as recorded), with its gates."""
    r = ctx.results.get(n)
    if r is not None:
        return r.verdict, r.gates
    other = ctx.queue.entry(n)
    return (other.verdict, other.gates) if other is not None else ("", [])


def _absent_blockers(rule: AuditRule, s: Subject) -> bool:
    """Blocked only on entries whose surface the port lacks: the entry's surface is absent too."""
    blockers = _blockers(s)
    if not blockers:
        return False
    ctx = s.ctx
    judged = {b: _verdict_of(ctx, b) for b in blockers}
    if any(v != "surface-absent" for v, _ in judged.values()):
        return False
    for b, (_, gs) in sorted(judged.items()):
        s.ev.append(f"waits on entry {b}, which is surface-absent: {'; '.join(blockers[b])}")
        for g in gs:
            if g.kind == "absent" and all(x.id != g.id for x in s.res.gates):
                s.res.gates.append(Gate(**{**g.__dict__, "scope": list(g.scope)}))
    return s.fire(rule, "waits only on surface-absent entries " + ", ".join(map(str, sorted(judged))))


def _blocked(rule: AuditRule, s: Subject) -> bool:
    """Needs a symbol an earlier unported entry adds and the port lacks; or an earlier series stage."""
    ctx, res = s.ctx, s.res
    # an entry this run judged ported waits on nothing: check would find its entry-ported gate live
    blockers = {b: why for b, why in _blockers(s).items() if _verdict_of(ctx, b)[0] != "ported"}
    if not blockers:
        return False
    res.blocked_by = sorted(blockers)
    for b, why in sorted(blockers.items()):
        other = ctx.queue.entry_of(b)
        s.ev.append(f"blocked by entry {b} ({other.short}, not ported): {'; '.join(why)}")
        res.gates.append(
            Gate(id=f"entry-{b}-ported", kind="entry-ported", entry=b, established_at=ctx.where(b) if ctx.where else "")
        )
    return s.fire(rule, "; ".join(f"entry {b}: {', '.join(why)}" for b, why in sorted(blockers.items())))


def _owned(rule: AuditRule, s: Subject) -> bool:
    ctx, syms, e, res = s.ctx, s.syms, s.e, s.res
    symbols = sorted(set(syms.changed) | set(syms.added) | set(syms.removed))
    hunks = ctx.hunks(e, s.mirrored)
    changed_lines = None if hunks is None else _changed_lines(hunks)
    row = owners_mod.find_owner(
        ctx.rows,
        paths=s.mirrored,
        symbols=symbols,
        pr=e.pr,
        done_states=ctx.cfg.done_states,
        parked_states=ctx.cfg.parked_states,
        changed_lines=changed_lines,
    )
    if row is None:
        return False
    res.owner = owners_mod.owner_text(row)
    cite = _what_row_cites(row, s.mirrored, syms, e.pr, changed_lines)
    s.ev.append(f"matrix row {row.id} at {row.where} ({row.state}) cites {cite}")
    return s.fire(rule, f"tracked by matrix row {row.id} ({row.state})")


def _changed(s: Subject) -> list[str]:
    return sorted(set(s.syms.changed) | set(s.syms.removed))


def _absent_gates(s: Subject, symbols: list[str]) -> None:
    """An absent gate per symbol; members of a class the port lacks share one gate on the class,
    which is what would appear first."""
    ctx = s.ctx
    gated: dict[str, object] = {}
    for x in symbols:
        cls = _owner_class(x)
        if cls and ctx.probes.judge(cls).status == "absent":
            gated.setdefault(cls, ctx.probes.judge(cls))
        else:
            gated.setdefault(x, s.judged[x])
    for x, p in gated.items():
        cls = _owner_class(x)
        if cls and _code(ctx.probes.count(cls)) > 0:
            # audit counts a member only where its class is (Subject._in_place), which a probe of the
            # bare name does not: the gate holds its count as it is now, and goes live when it moves
            gate = _member_gate(ctx, x, cls)
            s.ev.append(
                f"control for {x}: {cls}, its class, defined at {_definition(ctx.probes.count(cls))}: a zero "
                "means not in the place it would be"
                + (f"; the name counts {gate.expect} elsewhere, which the gate holds to" if gate.expect else "")
            )
            s.res.gates.append(gate)
            continue
        sibling = _sibling_control(s, x)
        if sibling is not None:
            try:
                p = ctx.probes.judge(x, sibling[0])
                s.ev.append(f"control for {x}: {sibling[0]}, {sibling[1]}: a zero means not in the place it would be")
            except ValueError:  # not part of this scan's words: keep the automatic control
                pass
        s.res.gates.append(_absent_gate(ctx, x, p))


def _member_gate(ctx: _Ctx, member: str, cls: str) -> Gate:
    """The gate on `Class.member` where the port has the class but not the member in it: absent while
    the name has no code hit at all, else a count gate that holds the hits it has elsewhere. Either
    is what check's probe of the name sees today; the class is the control."""
    ccount, count = ctx.probes.count(cls), ctx.probes.count(member)
    n = _code(count)
    return Gate(
        id=f"{_slug(member)}-{'count' if n else 'absent'}",
        kind="count" if n else "absent",
        probe=member,
        scope=list(ctx.scope),
        control=cls,
        established_at=_definition(count if n else ccount),  # check cites the probe's hit, or the control's
        expect=n if n else None,
    )


def _sibling_control(s: Subject, symbol: str) -> tuple[str, str] | None:
    """A control for one absent probe, chosen for it: its class when the port has the class; else a
    sibling (a symbol of the same upstream file, from this queue) that the port defines in that
    file's counterpart. None when neither is found: the scan's automatic control stands."""
    ctx = s.ctx
    cls = _owner_class(symbol)
    if cls and _code(ctx.probes.count(cls)) > 0:
        return cls, f"its class, defined at {_definition(ctx.probes.count(cls))}"
    # the same upstream file first; then, where it has no counterpart, the nearest files of its folder
    for near, how in [*((up, "a sibling") for up in s.mirrored), *((f, "a neighbour") for f in _neighbours(s))]:
        counterparts = set(ctx.port_files(near))
        # a member stands for its class: the class is one definition, the bare member name many
        for cand in dict.fromkeys(_owner_class(c) or c for c in (ctx.siblings(near) if counterparts else ())):
            if cand == symbol or _owner_class(symbol) == cand:
                continue
            hits = [h for h in _hits(ctx.probes.count(cand), ("definition",)) if h.path in counterparts]
            if hits:
                return cand, f"{how} from {near}, defined in its port counterpart at {hits[0].path}:{hits[0].line}"
    return None


_NEIGHBOURS = 8  # files of the nearest folder tried for a control; a folder's first few say where it lives


def _neighbours(s: Subject) -> list[str]:
    """For an entry whose files have no port counterpart: the queue's files nearest to them in upstream's
    tree (the same folder, else each parent in turn) that have one, where the port would put them."""
    ctx = s.ctx
    out: list[str] = []
    for up in s.mirrored:
        if ctx.port_files(up):
            continue
        folder = up
        while "/" in folder and not out:
            folder = folder.rsplit("/", 1)[0]
            near = [f for f in ctx.queue_files() if f != up and f.startswith(folder + "/")]
            out = [f for f in sorted(near, key=lambda f: (f.count("/"), f)) if ctx.port_files(f)][:_NEIGHBOURS]
    return out


def _surface_absent(rule: AuditRule, s: Subject) -> bool:
    """None of the changed/removed symbols exists, and the entry adds no member to a class the port has
    (a new member of a class the port has is new behaviour on a surface it has). An entry that only
    adds members to classes the port lacks grows a surface the port lacks."""
    changed = _changed(s)
    if not changed:
        added = sorted(set(s.syms.added))
        classes = sorted({c for x in added if (c := _owner_class(x))})
        if not added or any(_owner_class(x) is None for x in added):
            return False
        if any(_code(s.ctx.probes.count(c)) > 0 for c in classes) or any(x in s.present for x in added):
            return False
        _absent_gates(s, added)
        return s.fire(rule, f"adds {', '.join(added)} only to classes the port lacks ({', '.join(classes)})")
    if any(x in s.present for x in changed):
        return False
    if _content_ported(s):  # the names are spelled otherwise, but the change's new side is there
        return False
    waiting = [x for x in changed if x in s.linked]
    if waiting:  # an earlier entry of the queue adds it: the entry waits on that one, see blocked
        return False
    grows = [x for x in s.syms.added if (cls := _owner_class(x)) and _code(s.ctx.probes.count(cls)) > 0]
    if grows:
        s.ev.append(f"adds {', '.join(grows)} to a class the port has, so the surface is there")
        return False
    _absent_gates(s, changed)
    return s.fire(rule, f"the port has none of {', '.join(changed)}")


class Judged(NamedTuple):
    """One hunk of a change against the port: its kind (hunks.compare's state, or `guarded` /
    `plumbing`, see `_guards`) and what compare found."""

    hunk: gitio.Hunk
    kind: str
    state: hunks_mod.HunkState
    mapped: bool  # compared with port files (a counterpart, or files defining the entry's symbols)


def _content_states(s: Subject) -> list[Judged]:
    """Hunk by hunk (once per subject), the change's telling tokens (identifiers in any spelling,
    literals) against the port files that map its file and the files defining its symbols; each
    hunk's state goes into the evidence. Neutral hunks (nothing telling) are left out."""
    if s.content is not None:
        return s.content
    s.content = []
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if not hunks:
        return s.content
    s.probe()
    defining = {h.path for x in s.probed for h in _hits(s.counts[x], ("definition",))}
    for h in hunks:
        if not s.ctx.is_code(h.path):
            continue
        files = sorted(set(s.ctx.port_files(h.path)) | defining) if h.path not in s.unmapped else []
        port: set[str] = set().union(*(s.ctx.port_tokens(f) for f in files)) if files else set()
        # a file the change adds or deletes has no other side: its every token is new (or gone)
        before = s.ctx.upstream_tokens(f"{s.e.sha}^", h.path) or frozenset()
        after = s.ctx.upstream_tokens(s.e.sha, h.path) or frozenset()
        st = hunks_mod.compare(h, port, s.ctx.cfg.language_only, before, after)
        if st.state != "neutral":
            s.content.append(Judged(h, st.state, st, bool(files)))
        where = f"{h.path}:{h.new_start}" + (f" vs {', '.join(files[:4])}" if files else " (no port counterpart)")
        s.ev.append(
            f"hunk {where}: {st.state}; new side found {st.new_found[:6]} missing {st.new_missing[:6]}; "
            f"old side still there {st.old_found[:6]} gone {st.old_missing[:6]}"
        )
    s.content = _guards(s, s.content)
    return s.content


def _guards(s: Subject, judged: list[Judged]) -> list[Judged]:
    """Gap hunks that are no work for this port: a block guarded by a name that this change does
    not define and the port has nowhere (`guarded`: it can never run here); then hunks whose every
    new name the port lacks serves only such blocks or hunks the port lacks altogether (`plumbing`)."""
    ctx, e = s.ctx, s.e
    added = [x for h in (ctx.hunks(e, e.files) or []) for x in h.new]
    out: list[Judged] = []
    for j in judged:
        names = [] if j.kind != "gap" else hunks_mod.guard_names(j.hunk)
        # a guard the change defines itself is a new switch: the port may need it, with its block
        lacking = [] if any(hunks_mod.defines(added, n) for n in names) else [n for n in names if ctx.port_lacks(n)]
        if lacking:
            greps = "; ".join(
                f"git grep -i -E '{spelling_pattern(n)}' -- {' '.join(ctx.cfg.code_scope)}" for n in lacking
            )
            holder = next((x for x in _changed(s) if x in s.present), None)
            control = (
                f" (control: {holder}, which the change edits, is at {_definition(s.counts[holder])})" if holder else ""
            )
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} only adds (or rewrites) a block guarded by {', '.join(lacking)}, "
                f"which this change does not define and the port's code names nowhere ({greps}: no line outside "
                f"comments){control}: it can never run here"
            )
            j = j._replace(kind="guarded")
        out.append(j)
    # code in a file the port has no counterpart of may live elsewhere in the port: only what the
    # port's own files lack, or can never run, makes a name plumbing
    unreachable = set().union(
        *(hunks_mod.tokens(j.hunk.new) for j in out if j.mapped and j.kind in ("guarded", "absent"))
    )
    for i, j in enumerate(out):
        names = _names(j.state.new_missing)
        serves = names and all(t in unreachable for t in names)
        if j.kind == "gap" and serves and not j.state.old_found:
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} adds {', '.join(names)} only for code the port "
                "lacks or can never run"
            )
            out[i] = j._replace(kind="plumbing")
    for i, j in enumerate(out):
        if j.kind == "gap" and _foreign(s, j):
            names = _names(j.state.new_missing)
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} touches only {', '.join(names)}, which the port's code "
                "names nowhere: the lines it changes belong to something the port lacks"
            )
            out[i] = j._replace(kind="foreign")
    return out


def _names(tokens: list[str]) -> list[str]:
    """The identifiers among a hunk's telling tokens (a literal is a value a name takes)."""
    return [t for t in tokens if t[0].isalpha() or t[0] == "_"]


def _foreign(s: Subject, j: Judged) -> bool:
    """A gap hunk whose every telling name, on the changed lines, the port's code names nowhere, in
    any spelling, and no entry of the queue adds, while nothing of its old side is there: the
    enclosing function may be the port's, but the lines changed serve something the port lacks. A name the change itself defines on a
    surface the port has (a new field of a class it has, a function in a file it maps) is new
    behaviour for that surface: work, not foreign."""
    names = _names(j.state.new_missing)
    if not names or j.state.new_found or j.state.old_found:
        return False
    # a name an entry of this queue adds is one the port may be about to get: the blocked rule's
    return all(n not in s.ctx.adders and s.ctx.port_lacks(n) and not _defined_on_port_surface(s, n) for n in names)


def _defined_on_port_surface(s: Subject, name: str) -> bool:
    """Does this change define `name` where the port has the surface: in a class the port has, or at
    the top of a file with a port counterpart?"""
    ctx = s.ctx
    for h in ctx.hunks(s.e, s.e.files) or []:
        if not hunks_mod.defines(h.new, name):
            continue
        owners = ctx.upstream_members(s.e.sha, h.path).get(name, set())
        if owners:
            if any(not ctx.port_lacks(c) for c in owners):
                return True
        elif h.path not in s.unmapped and ctx.maps_to_port(h.path):
            return True
    return False


def _content_ported(s: Subject) -> bool:
    """Every telling hunk is ported, with enough telling tokens over the whole change."""
    states = _content_states(s)
    telling = sum(hunks_mod.weight(t) for j in states for t in [*j.state.new_found, *j.state.old_missing])
    # an old side gone alone is also what a port that never had the code shows: some new side must be there
    found = any(j.state.new_found for j in states)
    return bool(states) and {j.kind for j in states} == {"ported"} and found and telling >= hunks_mod.MIN_TELLING


def _content_absent(s: Subject) -> bool:
    """No hunk leaves work, and at least one is absent or guarded (see `_guards`)."""
    kinds = {j.kind for j in _content_states(s)}
    return bool(kinds & {"absent", "guarded", "foreign"}) and "gap" not in kinds and not _content_ported(s)


def _content(rule: AuditRule, s: Subject) -> bool:
    """New side there and old side gone, in every hunk, is ported; neither side there means the port
    lacks the code it edits; a hunk with work left (or too little to tell) decides nothing."""
    states = _content_states(s)
    if _content_ported(s):
        return s.fire(
            rule,
            f"every changed hunk's new side is in the port and its old side is gone ({len(states)} hunk(s))",
            verdict="ported",
            rule_text=f"{rule.id}-ported",
        )
    if not _content_absent(s):
        return False
    _absent_gates(s, [x for x in _changed(s) if x not in s.present] or [x for x in s.syms.added if x not in s.present])
    if not s.res.gates:  # the edited code is the port's: gate on what its changed lines lack instead
        _lacking_gates(s, states)
    if not s.res.gates:  # nothing the port lacks can be named (only text changed): no surface is absent
        return False
    said = []
    for kind, what in (
        ("absent", "the port has neither side of {n} hunk(s) in {files}"),
        ("guarded", "{n} hunk(s) in {files} can never run here"),
        ("foreign", "{n} hunk(s) in {files} change only lines that serve what the port lacks"),
    ):
        files = sorted({j.hunk.path for j in states if j.kind == kind})
        if files:
            said.append(what.format(n=sum(j.kind == kind for j in states), files=", ".join(files)))
    return s.fire(
        rule,
        "; ".join(said) + ": it lacks the code the change edits",
        verdict="surface-absent",
        rule_text=f"{rule.id}-absent",
    )


def _lacking_gates(s: Subject, states: list[Judged]) -> None:
    """An `absent` gate per name the port lacks that made a hunk absent, guarded or foreign (at most
    three), controlled by a symbol the entry names that the port has (else the scan's automatic
    control): the day the port names one, check says the entry is real."""
    ctx = s.ctx
    names: list[str] = []
    for j in states:
        if j.kind == "guarded":
            names += [n for n in hunks_mod.guard_names(j.hunk) if ctx.port_lacks(n)]
        elif j.kind in ("foreign", "absent"):
            names += [t for t in _names(j.state.new_missing) if ctx.port_lacks(t)]
    holder = _holder(s)
    count = (s.counts.get(holder) or ctx.probes.count(holder)) if holder is not None else None
    for n in list(dict.fromkeys(names))[:3]:
        s.res.gates.append(
            Gate(
                id=f"{_slug(n)}-absent",
                kind="absent",
                probe=n,
                scope=list(ctx.scope),
                control=holder or "",
                established_at=_definition(count) if count is not None else "",
            )
        )


def _holder(s: Subject) -> str | None:
    """A name the entry changes or probes that the port has, to control its gates: a member's class
    (a bare member name has hits in other classes too, so its first definition proves nothing and is
    no citation check can re-find), never a member of a class the port lacks."""
    for x in [*_changed(s), *s.probed]:
        if x not in s.present:
            continue
        cls = _owner_class(x)
        if cls is None:
            return x
        if _code(s.ctx.probes.count(cls)) > 0:
            return cls
    return None


def _ported(rule: AuditRule, s: Subject) -> bool:
    """The added symbols exist and the mapped files' pins are at or past the entry."""
    added = sorted(set(s.syms.added))
    if not added or not all(x in s.present for x in added):
        return False
    placed, lines = _pins_at_or_past(s.ctx, s.e, s.mirrored)
    s.ev.extend(lines)
    if not placed:
        return False
    return s.fire(rule, f"{', '.join(added)} exist and the port's pins are at or past {s.e.short}")


def _inert(rule: AuditRule, s: Subject) -> bool:
    """Changed symbols exist but nothing consumes them."""
    ctx, res = s.ctx, s.res
    changed = _changed(s)
    existing = [x for x in changed if x in s.present]
    if not existing or any(int(getattr(s.counts[x], "consumers", 0) or 0) for x in existing):
        return False
    for x in existing:
        res.gates.append(
            Gate(
                id=f"{_slug(x)}-consumer",
                kind="no-consumer",
                probe=s.spelled.get(x, x),  # what check probes must be what audit counted
                scope=list(ctx.scope),
                control=s.judged[x].control or "",
                established_at=_definition(s.counts[x]),
            )
        )
    _absent_gates(s, [x for x in changed if x not in s.present])
    return s.fire(
        rule,
        f"{', '.join(existing)} {'is' if len(existing) == 1 else 'are'} read by nothing outside tests and delegations",
    )


def _real_gap(rule: AuditRule, s: Subject) -> bool:
    existing = [x for x in _changed(s) if x in s.present]
    added = sorted(set(s.syms.added))
    used = [x for x in existing if int(getattr(s.counts[x], "consumers", 0) or 0) > 0]
    if used:
        reason = "changes code the port has and reads: " + ", ".join(
            f"{x} ({s.counts[x].consumers} consumer{'' if s.counts[x].consumers == 1 else 's'})" for x in used
        )
    elif added:
        missing = [x for x in added if x not in s.present]
        reason = (
            f"adds {', '.join(missing or added)}, which the port does not have yet"
            if missing
            else (f"adds {', '.join(added)}; the port has the names but its pins do not place it past {s.e.short}")
        )
    else:
        reason = "touches mirrored code and no rule defers it"
    return s.fire(rule, reason)


# The rules in the order they are tried. docs/audit.md lists them in this order (a test checks).
RULES: tuple[AuditRule, ...] = (
    AuditRule(
        "behaviour",
        "ported or real-gap",
        _behaviour,
        "the entry's commit is a kvref switch and `validate kv --record` saw the port's harness answer as "
        "with it (ported) or as without it (real-gap); above every static probe",
        "the harness, the run that repeats it, the case counts and the case that decides",
    ),
    AuditRule(
        "ignore",
        "ignore",
        _ignore,
        "no file of the entry lies under the mirrored paths, or those that do have no port counterpart and are no code",
        "the files and the mirrored paths",
    ),
    AuditRule(
        "path-rule",
        "(the rule's)",
        _path_rule,
        "every mirrored file matches a `[[rule]]` glob and all of the rule's gates hold",
        "the rule's gates, each with its probe line",
    ),
    AuditRule(
        "no-op",
        "no-op",
        _no_op,
        "every changed line of the mirrored code is a comment, a docstring or a construct of `[audit] language_only`",
        "the constructs met",
    ),
    AuditRule(
        "untrusted",
        "untrusted",
        _untrusted,
        "a probe of the entry (or a gate of a matching path rule) is untrusted or incomplete, "
        "or queue build --skip-missing could not read one of its files",
        "the probe's reason",
    ),
    AuditRule(
        "unmapped",
        "surface-absent",
        _unmapped,
        "every mirrored code file lacks a port counterpart and none of the entry's symbols is in the port",
        "the files and an `absent` gate per symbol",
    ),
    AuditRule(
        "surface-absent",
        "surface-absent",
        _surface_absent,
        "none of the changed/removed symbols has a code hit where it would be and content evidence does not find "
        "the change ported; or the entry only adds members to classes the port lacks",
        "an `absent` gate per symbol (one per class the port lacks)",
    ),
    AuditRule(
        "deferred",
        "real-gap",
        _deferred,
        "a deferral record (a comment or doc line with a deferral word) names one of the entry's symbols, a class the port lacks, or its PR; "
        "unless content evidence finds the port has none of what the change edits",
        "the record, by path:line",
    ),
    AuditRule(
        "content",
        "ported or surface-absent",
        _content,
        "hunk by hunk, the new side's telling tokens are in the port files that map it and the old side's are gone (`content-ported`), or a hunk has neither side there, is guarded by a name the port lacks, or changes only lines that serve what the port lacks (`content-absent`); no hunk leaves work",
        "each hunk's state with the tokens found and missing, and the port files compared",
    ),
    AuditRule(
        "ported",
        "ported",
        _ported,
        "every added symbol exists and the mapped port files' pins are at or past the entry",
        "each pin and where it stands",
    ),
    AuditRule(
        "inert", "inert", _inert, "the changed symbols that exist have no consumers", "a `no-consumer` gate per symbol"
    ),
    AuditRule(
        "absent-blockers",
        "surface-absent",
        _absent_blockers,
        "every entry it would be blocked on is surface-absent",
        "the blockers and their `absent` gates",
    ),
    AuditRule(
        "blocked",
        "blocked",
        _blocked,
        "the entry needs a symbol an earlier unported entry adds and the port lacks, or an earlier series stage is not ported",
        "`blocked_by` and an `entry-ported` gate per blocker",
    ),
    AuditRule(
        "owned",
        "owned",
        _owned,
        "an open matrix row cites the entry's PR, one of its symbols, or a line range overlapping the change",
        "`owner` and what the row cites",
    ),
    AuditRule("real-gap", "real-gap", _real_gap, "otherwise", "the consumers that make it real"),
)


def rule_by_id(rule_id: str) -> AuditRule:
    return next(r for r in RULES if r.id == rule_id)


def judge(ctx: _Ctx, e: Entry, obj: Entry | Part, syms: EntrySymbols, files: list[str]) -> Result:
    """Try the rules in table order on one entry or part; the first that fires decides."""
    label_part = obj.name if isinstance(obj, Part) else None
    res = Result(e.n, label_part, "unclassified", "", "", recorded=obj.verdict, recorded_by=obj.verdict_by)
    subject = Subject(ctx, e, obj, syms, files, res)
    for rule in RULES:
        if rule.fires(rule, subject):
            break
    if res.verdict in NEEDS_GATE and not res.gates:  # check requires one: gate on what the lines lack
        _lacking_gates(subject, _content_states(subject))
    # prior triage: the port's own citation of this PR or commit, for the person reading the verdict
    cited = ctx.records.triage_for(e.pr, e.sha) if res.verdict not in ("ignore",) else None
    if cited is not None:
        res.evidence.append(
            f"prior triage: the port cites {'#' + str(e.pr) if e.pr in cited.prs else e.short} "
            f"at {cited.where}: {cited.text}"
        )
    if label_part is None:
        ctx.results[e.n] = res
    return res


def _owner_class(symbol: str) -> str | None:
    """`KVBlockZeroer` for `KVBlockZeroer.zero_block_ids` (or `A::b`), None for a bare name."""
    parts = re.split(r"\.|::", symbol)
    return parts[-2] if len(parts) > 1 else None


def _absent_gate(ctx: _Ctx, s: str, p) -> Gate:
    """An absent gate cites where its control is defined: the proof that the scope holds code."""
    control = p.control or ""
    c = p.control_count
    return Gate(
        id=f"{_slug(s)}-absent",
        kind="absent",
        probe=s,
        scope=list(ctx.scope),
        control=control,
        established_at=_definition(c),
    )


def _changed_lines(hunks) -> dict[str, list[tuple[int, int]]]:
    """path -> the line spans a change touches, on its old side and its new side (a row's line
    numbers may be read at an older or a newer upstream than the change)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for h in hunks:
        spans = out.setdefault(h.path, [])
        spans.append((h.old_start, h.old_start + max(h.old_len, 1) - 1))
        spans.append((h.new_start, h.new_start + max(h.new_len, 1) - 1))
    return out


def _what_row_cites(
    row,
    paths: list[str],
    syms: EntrySymbols,
    pr: int | None,
    changed_lines: dict[str, list[tuple[int, int]]] | None = None,
) -> str:
    if pr is not None and owners_mod.cites_pr(row.upstream, pr):
        return f"PR #{pr}"
    for s in [*syms.changed, *syms.added, *syms.removed]:
        if owners_mod.cites_symbol(row.upstream, s):
            return s
    for p in paths:
        if changed_lines is not None:
            got = owners_mod.cites_change(
                row.upstream, p, changed_lines.get(p, []), [*syms.changed, *syms.added, *syms.removed]
            )
            if got:
                return f"{got}, which overlaps the change"
        elif owners_mod.cites_path(row.upstream, p):
            return f"{p} (no upstream diff to compare line ranges with)"
    return "the entry"


def _pins_at_or_past(ctx: _Ctx, e: Entry, mirrored: list[str]) -> tuple[bool, list[str]]:
    _, pins = ctx.provenance()
    lines: list[str] = []
    placed: list[bool] = []
    for up in mirrored:
        for pf in ctx.port_files(up):
            for pin in pins.get(pf, []):
                at = _pin_position(pin, ctx.queue, ctx.cfg, e)
                where = "at or past" if at else ("before" if at is False else "not placeable against")
                lines.append(f"pin {pf} @ {pin} ({up}) is {where} {e.short}")
                placed.append(bool(at))
    if not placed:
        lines.append(f"no mapped port file of {', '.join(mirrored)} states a pin")
    return bool(placed) and all(placed), lines


# ---------------------------------------------------------------- driver


def _plan(cfg: Config, queue: Queue, chosen: list[Entry]) -> dict[tuple[str, ...], tuple[list[str], list[str]]]:
    """Every symbol and regex the audit will probe, grouped by scope, so each scope is scanned once."""
    code = tuple(cfg.code_scope)
    add = adders(queue)
    symbols: set[str] = set()
    plan: dict[tuple[str, ...], tuple[list[str], list[str]]] = {code: ([], [])}
    for e in chosen:
        for syms in [_entry_symbols(e)] + [_part_symbols(e, p) for p in e.parts]:
            symbols.update(syms.added, syms.changed, syms.removed)
            symbols.update(s for s in _needs(syms) if s in add)
            # the classes of added members too: the pre-pin check asks whether the whole class is absent
            symbols.update(filter(None, map(_owner_class, [*syms.changed, *syms.removed, *syms.added])))
    # every other spelling a port may use (snake, Pascal, camel, kPascal), in the same one scan
    symbols.update(sp for x in list(symbols) for sp in naming.spellings(x))
    plan[code][0].extend(sorted(symbols))
    # gates already recorded on the chosen entries are probed too, so reports can show their counts
    recorded = [g for e in chosen for obj in e.and_parts for g in obj.gates]
    for g in [*recorded, *(g for rule in queue.rules for g in rule.gates)]:
        if g.kind in UNPROBED_GATES or not g.probe:
            continue
        sym, rx = plan.setdefault(tuple(g.scope or code), ([], []))
        (rx if g.regex else sym).append(g.probe)
        if g.control:
            sym.append(g.control)
    return plan


def audit(
    cfg: Config,
    queue: Queue,
    *,
    entries: set[int] | None = None,
    where: Callable[[int], str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Audit:
    """Judge the chosen entries (all by default) and each of their parts.

    `where(n)` gives the queue path:line of entry n, cited by entry-ported gates; `progress(done,
    total)` hears about the files a cold probe scan indexes (the long part of a first audit).
    """
    if entries is not None:
        missing = sorted(entries - {e.n for e in queue.entries})
        if missing and not (entries & {e.n for e in queue.entries}):
            raise UserError(f"--entries names no entry of this queue (asked for {entries_label(missing)}).")
    chosen = [e for e in queue.entries if entries is None or e.n in entries]
    rows = owners_mod.load_rows(cfg.port_root, cfg.matrices, id_pattern=cfg.id_pattern)
    probes = _Probes(cfg, _plan(cfg, queue, chosen), progress)
    ctx = _Ctx(cfg, queue, probes, rows, where)
    results: list[Result] = []
    try:
        for e in chosen:
            results.append(judge(ctx, e, e, _entry_symbols(e), e.files))
            for p in e.parts:
                results.append(judge(ctx, e, p, _part_symbols(e, p), p.files or e.files))
    finally:
        ctx.close()
    # recorded gates are judged here so that reports can cite their counts
    for e in chosen:
        for obj in e.and_parts:
            for g in obj.gates:
                if g.kind not in UNPROBED_GATES and g.probe:
                    # a word control for a regex probe is a ValueError: check reports that mismatch
                    with contextlib.suppress(ValueError):
                        probes.judge(g.probe, g.control or None, tuple(g.scope or ctx.scope))
    counts: dict[str, Any] = {}
    for scope in sorted(probes.scans, key=lambda sc: sc != ctx.scope):
        for k, v in probes.scans[scope].counts.items():
            counts.setdefault(k, v)
    judged = [p for _, p in sorted(probes.judged.items(), key=lambda kv: (kv[0][0] != ctx.scope, kv[0]))]
    out = Audit(results, ctx.tree, list(ctx.scope), judged, counts, rows, [e.n for e in chosen])
    out.prepin = _prepin(cfg, queue, out, ctx)
    out.notices = unplaced_pins(ctx)
    return out


def unplaced_pins(ctx: _Ctx) -> list[str]:
    """One sentence for the port's header pins that neither the queue nor the upstream checkout can
    place: until they are fetched, `ported` rests on content evidence, never on those pins."""
    if ctx._provs is None:  # no rule needed the headers: no pin was relied on
        return []
    _, pins = ctx.provenance()
    files: dict[str, list[str]] = {}
    for pf, ps in sorted(pins.items()):
        for pin in ps:
            files.setdefault(pin, []).append(pf)
    # one pin written at several lengths (e24d1b24, e24d1b24fe96, ...) is one pin, named in full
    for pin in sorted(files, key=len):
        longer = next((p for p in sorted(files, key=len, reverse=True) if p != pin and p.startswith(pin)), None)
        if longer is not None:
            files[longer] = sorted(set(files[longer]) | set(files.pop(pin)))
    q = ctx.queue
    known = [e.sha for e in q.entries] + [q.meta.pin, q.meta.target]
    repo = ctx.cfg.upstream_repo
    missing = []
    for pin, pfs in sorted(files.items()):
        if any(k and headers_mod.pin_matches(pin, k) for k in known):
            continue
        if repo is not None and Path(repo).is_dir() and gitio.rev_parse(Path(repo), pin) is not None:
            continue
        missing.append((pin, pfs))
    if not missing:
        return []
    shown = "; ".join(f"{pin} (stated by {len(pfs)} port file(s), e.g. {pfs[0]})" for pin, pfs in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    where = f"the upstream checkout {repo}" if repo is not None else "this queue (no [upstream] repo is set)"
    fetch = (
        f"fetch {'it' if len(missing) == 1 else 'them'} into {repo} (git -C {repo} fetch <remote> {missing[0][0]})"
        if repo is not None
        else "set [upstream] repo to a checkout that has them"
    )
    return [
        f"PINS NOT PLACED: {shown}{more} cannot be found in {where}; {fetch}. "
        "Until then no entry is called ported by its pins; content evidence decides."
    ]


def _prepin(cfg: Config, queue: Queue, out: Audit, ctx: _Ctx):
    """The pre-pin pass over the results (porttrack/prepin.py): verdicts stay, evidence grows."""
    from porttrack import prepin

    def pins_for(upstream: str) -> list[str]:
        pins = ctx.provenance()[1]
        return [pin for pf in ctx.port_files(upstream) for pin in pins.get(pf, [])]

    def absent(symbol: str) -> bool:
        """Probed in the code scope with a working control, and no code hit."""
        if ctx.probes.count(symbol) is None:
            return False
        return ctx.probes.judge(symbol).status == "absent" and _code(ctx.probes.count(symbol)) == 0

    return prepin.run(cfg, queue, out, pins_for=pins_for, absent=absent, rows=ctx.rows)


# ---------------------------------------------------------------- --write

# The sync report's section for an audit verdict: CI/docs go to IGNORE, surface the port
# lacks entirely is inventoried for a roadmap row, everything else is work for this cycle.
DISPOSITION = {"ignore": "IGNORE", "surface-absent": "INVENTORY"}


def _table(qf, n: int, part: str | None):
    from porttrack import queuefile

    table = queuefile.edit_entry(qf, n)
    if table is not None and part is not None:
        table = next((p for p in table.get("part", []) if p.get("name") == part), None)
    if table is None:
        raise UserError(f"{qf.path}:{queuefile.line_of(qf, n)}: entry {n} has no part named {part!r}.")
    return table


def write(qf, result: Audit, qrel: str) -> tuple[int, list[str]]:
    """Store audit verdicts where none is set or audit set it; never over a human verdict.

    `qrel` is the queue path relative to the port root, for entry-ported gates' citations.
    Returns (how many entries/parts changed, messages for the human verdicts audit disagrees with).
    Edits go key by key into the document (queuefile's own field writer), and the model is
    rebuilt once at the end rather than after every entry: 300 rebuilds would cost seconds.
    """
    from porttrack import queuefile

    notes: list[str] = []
    changed = 0
    mine = [r for r in result.results if not r.human]
    for r in result.results:
        if r.disagrees:
            notes.append(
                f"{r.label}: audit would say {r.verdict} ({r.rule}: {r.reason}); the human verdict {r.recorded} stands."
            )
    for r in mine:
        table = _table(qf, r.n, r.part)
        before = table.as_string()
        fields = dict(
            verdict=r.verdict,
            verdict_by="audit",
            rule=r.rule,
            reason=r.reason,
            owner=r.owner,
            blocked_by=r.blocked_by,
            gates=r.gates,
            evidence=r.evidence,
        )
        if r.part is None:
            fields["disposition"] = DISPOSITION.get(r.verdict, "PORT-NOW")
        queuefile.set_fields(table, fields)
        changed += table.as_string() != before
    # Entry-ported gates cite the waited-on entry's line, which the writes above may have moved;
    # rewriting one-line values moves no line, so one more pass settles them.
    view = queuefile.QueueFile(qf.path, None, qf.queue, queuefile.dumps(qf), data=qf.data)  # numbering unchanged
    line = functools.lru_cache(maxsize=None)(lambda n: queuefile.line_of(view, n))
    for r in mine:
        for g in r.gates:
            if g.kind == "entry-ported" and g.entry is not None:
                g.established_at = f"{qrel}:{line(g.entry)}"
    queuefile.follow_citations(qf)  # the file's copies, human-owned entries' gates included
    queuefile.rebuild(qf)
    return changed, notes


def disagreements(result: Audit) -> list[str]:
    return [
        f"{r.label}: audit would say {r.verdict} ({r.rule}: {r.reason}); the human verdict {r.recorded} stands."
        for r in result.results
        if r.disagrees
    ]


def table(result: Audit):
    """A rich table of the results for people."""
    from rich.table import Table
    from rich.text import Text

    t = Table(show_lines=False)
    for col in ("entry", "verdict", "rule", "reason", "owner / blocked by", "gates"):
        t.add_column(col, overflow="fold")
    for r in result.results:
        verdict = r.verdict + (f" (human: {r.recorded})" if r.disagrees else "")
        who = r.owner or (", ".join(map(str, r.blocked_by)) if r.blocked_by else "")
        cells = [
            str(r.n) + (f" {r.part}" if r.part else ""),
            verdict,
            r.rule,
            r.reason,
            who,
            ", ".join(f"{g.id} @ {g.established_at}" if g.established_at else g.id for g in r.gates),
        ]
        t.add_row(*(Text(visible(c)) for c in cells))  # plain text: "[[map]]" is no markup; no control character
    return t
