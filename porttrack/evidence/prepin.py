"""prepin: the pre-pin check. Did upstream already have, at the pin, a symbol the port lacks?

The team runs `git show PIN:path` before reading a diff: a symbol an entry finds absent may
have been upstream long before the entry, so the gap is older than every entry that points
at it and wants a roadmap row, not one issue per entry. This module answers that from git
objects at the pin (one `ls-tree` per pin, the blobs of the entries' files through one
`cat-file`, definitions cached by blob id), never from a working tree. It also finds
net-zero pairs: a symbol added and later removed inside the queue that upstream lacked at
the pin, so both entries are skipped rather than ported and un-ported.

Audit runs it as a pass over its results: verdicts stay what the rules said; lines are
added to the evidence and the gaps are returned as records (docs/audit.md "Pre-pin gaps").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from porttrack import gitio, globs
from porttrack.evidence import naming, owners as owners_mod
from porttrack.errors import UserError
from porttrack.model import Entry, Queue
from porttrack.parse import language_for

# Every verdict but these has its absent symbols checked: surface-absent, blocked and gated
# entries, and also owned ones (a row owning an entry need not own the older gap) and entries
# ignored because their mirrored file has no port counterpart (the port lacks that surface).
SETTLED = frozenset({"ported", "no-op", "untrusted", "unclassified"})

# The evidence lines this module writes; check reads the first one back from a queue.
PREPIN_LINE = "pre-pin: {symbol} defined at {pin}:{path}:{line} upstream, absent here"
PREPIN_RE = re.compile(
    r"^pre-pin: (?P<symbol>\S+) defined at (?P<pin>[0-9a-f]+):(?P<path>.+):(?P<line>\d+) upstream, absent here$"
)
NETZERO_LINE = (
    "net-zero: {symbol} is added by entry {added} and removed by entry {removed}, "
    "and upstream did not have it at the pin {pin}: skip both"
)
NETZERO_RE = re.compile(
    r"^net-zero: (?P<symbol>\S+) is added by entry (?P<added>\d+) and removed by entry (?P<removed>\d+), "
    r"and upstream did not have it at the pin (?P<pin>\S+): skip both$"
)
PIN_CHARS = 10  # enough to name a commit in evidence; `git show` takes the prefix
# `Name = Other` (a placeholder such as `X = Any` beside a TYPE_CHECKING import, or a re-export):
# the name is an alias of something defined elsewhere, not a feature of this module
_ALIAS = re.compile(r"^\s*[A-Za-z_]\w*\s*(?::[^=]+)?=\s*[A-Za-z_][\w.]*\s*(?:#.*)?$")


@dataclass
class Site:
    """Where upstream defined a symbol at a pin."""

    pin: str
    path: str
    line: int
    kind: str = "symbol"  # "class" when members are defined under it; "alias" for `Name = Other`

    def __str__(self) -> str:
        return f"{self.pin[:PIN_CHARS]}:{self.path}:{self.line}"


@dataclass
class Gap:
    """A pre-pin gap: a symbol (or a whole class) upstream had at the pin and the port never got."""

    symbol: str
    kind: str  # "class" when the symbol is a class upstream (its members are not gaps of their own)
    site: Site
    entries: list[int] = field(default_factory=list)  # the entries (or parts') that point at it
    owner: str = ""  # "ROW (matrix.md:line)" of an open row citing it, "" when a row is owed

    def text(self) -> str:
        """ "`C` (class) at `pin:path:line`: entries 3, 5, 7; a row is owed" (the seed's shape)."""
        who = f"owned by {self.owner}" if self.owner else "a row is owed"
        ns = ", ".join(map(str, self.entries))
        return (
            f"`{self.symbol}` ({self.kind}) at `{self.site}`, absent here: "
            + (f"entry {ns} points" if len(self.entries) == 1 else f"entries {ns} point")
            + f" at it; {who}"
        )

    def as_json(self) -> dict:
        return {
            "symbol": self.symbol,
            "kind": self.kind,
            "where": {"pin": self.site.pin, "path": self.site.path, "line": self.site.line},
            "entries": self.entries,
            "owned": bool(self.owner),
            "owner": self.owner or None,
        }


@dataclass
class Feature:
    """A pre-pin gap at feature level: one upstream module whose classes and public functions the port
    lacks, with every entry pointing at any of them. A team writes one row for it, not one per name."""

    path: str  # the upstream module at the pin
    gaps: list[Gap] = field(default_factory=list)

    @property
    def entries(self) -> list[int]:
        return sorted({n for g in self.gaps for n in g.entries})

    @property
    def owner(self) -> str:
        """The open row citing any of its names ("" when none does: a row is owed)."""
        return next((g.owner for g in self.gaps if g.owner), "")

    @property
    def pin(self) -> str:
        return self.gaps[0].site.pin

    def names(self, most: int | None = None) -> str:
        shown = self.gaps[:most] if most else self.gaps
        more = len(self.gaps) - len(shown)
        return ", ".join(f"`{g.symbol}` ({g.kind}, line {g.site.line})" for g in shown) + (
            f" and {more} more" if more else ""
        )

    def text(self, most: int | None = None) -> str:
        """ "`path` at pin: `C` (class, line 3), `f` (symbol, line 9) absent here; entries 3, 5 point at it; a row is owed"
        (with `most`, that many names and entries, then how many more: a line for a terminal)."""
        who = f"owned by {self.owner}" if self.owner else "a row is owed"
        ns = self.entries
        listed = ", ".join(map(str, ns[:most] if most else ns)) + (
            f" and {len(ns) - most} more" if most and len(ns) > most else ""
        )
        point = f"entry {ns[0]} points" if len(ns) == 1 else f"entries {listed} point"
        return f"`{self.path}` at `{self.pin[:PIN_CHARS]}`: {self.names(most)} absent here; {point} at it; {who}"

    def as_json(self) -> dict:
        return {
            "path": self.path,
            "pin": self.pin,
            "symbols": [g.symbol for g in self.gaps],
            "entries": self.entries,
            "owned": bool(self.owner),
            "owner": self.owner or None,
        }


def features(gaps: list[Gap]) -> list[Feature]:
    """Gaps grouped by the upstream module that defined them, the ones most entries point at first."""
    by_path: dict[str, Feature] = {}
    for g in sorted(gaps, key=lambda g: (g.site.path, g.site.line, g.symbol)):
        by_path.setdefault(g.site.path, Feature(g.site.path)).gaps.append(g)
    return sorted(by_path.values(), key=lambda f: (-len(f.entries), f.path))


@dataclass
class NetZero:
    symbol: str
    added: int  # the entry that adds it
    removed: int  # the later entry that removes it
    pin: str
    between: list[int] = field(default_factory=list)  # entries in between that change it

    def text(self) -> str:
        ns = ", ".join(map(str, self.between))
        mid = (
            (f", entry {ns} changes it" if len(self.between) == 1 else f", entries {ns} change it")
            if self.between
            else ""
        )
        return (
            f"{self.symbol}: entries {self.added} and {self.removed} add and remove it inside the queue{mid}, "
            f"and upstream did not have it at the pin: skip both"
        )

    def as_json(self) -> dict:
        return {
            "symbol": self.symbol,
            "added_by": self.added,
            "removed_by": self.removed,
            "changed_by": self.between,
            "pin": self.pin,
        }


@dataclass
class Outcome:
    gaps: list[Gap] = field(default_factory=list)
    net_zero: list[NetZero] = field(default_factory=list)
    candidates: dict[str, list[str]] = field(default_factory=dict)  # feature path -> open rows citing the path
    note: str = ""  # why the check could not run, said once ("" when it ran)
    trees: int = 0  # tree listings read
    blobs: int = 0  # blobs whose definitions were needed (parsed or from the cache)

    @property
    def features(self) -> list[Feature]:
        return features(self.gaps)

    def count(self) -> str:
        """ "3 features (7 names), 2 with no owning row" """
        fs = self.features
        unowned = sum(not f.owner for f in fs)
        n = len(self.gaps)
        return (
            f"{len(fs)} feature{'' if len(fs) == 1 else 's'} ({n} name{'' if n == 1 else 's'}), "
            f"{unowned} with no owning row"
        )

    def summary(self, most: int = 5) -> list[str]:
        """Lines for people: how many gaps, the `most` features with the most entries pointing at them, the
        net-zero pairs, or why the check did not run. The deferral report lists every gap."""
        fs = self.features
        top = fs[:most]
        out = []
        if fs:
            more = f"; the {len(top)} with the most entries:" if len(fs) > len(top) else ":"
            out.append(f"pre-pin gaps: {self.count()} (report deferral lists them){more}")
            out += [f"  pre-pin gap {f.text(most=4)}" for f in top]
        out += [f"net-zero {z.text()}" for z in self.net_zero[:most]]
        if len(self.net_zero) > most:
            out.append(f"net-zero: {len(self.net_zero) - most} more in the sync report")
        return out + ([self.note] if self.note else [])

    def as_json(self) -> dict:
        return {
            "gaps": [g.as_json() for g in self.gaps],
            "features": [f.as_json() for f in self.features],
            "net_zero": [z.as_json() for z in self.net_zero],
            "note": self.note or None,
        }


def owner_class(symbol: str) -> str | None:
    """`C` for `C.m` (or `A::b`), None for a bare name."""
    parts = naming.parts(symbol)
    return ".".join(parts[:-1]) if len(parts) > 1 else None


class Upstream:
    """Definitions of upstream files at a pin, read from git objects only."""

    def __init__(self, repo: Path, cache_dir: str | None):
        from porttrack.symbols.extractor import Extractor

        self.repo = repo
        self.cat = gitio.CatFile(repo)
        self.ex = Extractor(self._read, cache_dir)
        self._trees: dict[str, dict[str, str]] = {}
        self._resolved: dict[str, str | None] = {}
        self._found: dict[tuple, Site | None] = {}
        self._before: dict[tuple[str, str], bool] = {}
        self.blobs: set[str] = set()

    def _read(self, sha: str) -> bytes:
        data = self.cat.read(sha)
        if data is None:
            raise UserError(
                f"object {sha} is missing from {self.repo} (a shallow or partial clone?): fetch it and retry."
            )
        return data

    def resolve(self, pin: str) -> str | None:
        if pin not in self._resolved:
            self._resolved[pin] = gitio.rev_parse(self.repo, pin) if pin else None
        return self._resolved[pin]

    def resolve_all(self, pins: list[str]) -> None:
        """Resolve many pins with one git process (a port states dozens of header pins)."""
        self._resolved.update(gitio.resolve_commits(self.repo, [p for p in pins if p not in self._resolved]))

    def before(self, pin: str, sha: str) -> bool:
        """Is `pin` a strict ancestor of commit `sha` (both resolved)?"""
        key = (pin, sha)
        if key not in self._before:
            self._before[key] = pin != sha and gitio.is_ancestor(self.repo, pin, sha)
        return self._before[key]

    def tree(self, pin: str, paths: list[str]) -> dict[str, str]:
        """path -> blob id at `pin`, from one `ls-tree` over the mirrored prefixes."""
        if pin not in self._trees:
            out = gitio.git(self.repo, "--literal-pathspecs", "ls-tree", "-r", "-z", pin, "--", *(paths or ["."]))
            listing: dict[str, str] = {}
            for rec in out.split(b"\0"):
                if not rec:
                    continue
                meta, _, path = rec.partition(b"\t")
                bits = meta.split()
                if len(bits) == 3 and bits[1] == b"blob":
                    listing[path.decode("utf-8", "replace")] = bits[2].decode()
            self._trees[pin] = listing
        return self._trees[pin]

    def find(self, pin: str, prefixes: list[str], files: list[str], symbol: str) -> Site | None:
        """Where `symbol` is defined at `pin` in one of `files`, or None; `Site.kind` says class or symbol."""
        key = (pin, symbol, tuple(files))
        if key not in self._found:
            self._found[key] = self._find(pin, prefixes, files, symbol)
        return self._found[key]

    def _find(self, pin: str, prefixes: list[str], files: list[str], symbol: str) -> Site | None:
        tree = self.tree(pin, prefixes)
        for path in files:
            blob = tree.get(path)
            lang = language_for(path)
            if blob is None or lang is None:
                continue
            self.blobs.add(blob)
            defs = self.ex.definition_lines(lang, blob)
            line = defs.get(symbol)
            if line is not None:
                members = any(k.startswith((symbol + ".", symbol + "::")) for k in defs)
                if not members and _ALIAS.match(self._line(blob, line)):
                    return Site(pin, path, line, "alias")
                return Site(pin, path, line, "class" if members else "symbol")
        return None

    def _line(self, blob: str, line: int) -> str:
        lines = self._read(blob).split(b"\n", line)
        return lines[line - 1].decode("utf-8", "replace") if len(lines) >= line else ""

    def close(self) -> None:
        self.ex.close()
        self.cat.close()


def _dunder(symbol: str) -> bool:
    """`__repr__`, `C.__init__`: Python's own protocol, which a port in another language has no name for."""
    last = naming.parts(symbol)[-1]
    return last.startswith("__") and last.endswith("__")


def _under(path: str, prefixes: list[str]) -> bool:
    return not prefixes or any(path == p or path.startswith(p + "/") for p in prefixes)


def _files_by_symbol(queue: Queue) -> dict[str, list[str]]:
    """Symbol (and each member's class) -> the files of the entries that name it, old paths too."""
    out: dict[str, dict[str, None]] = {}
    for e in queue.entries:
        files = [*e.files, *e.renames.values()]
        for s in [*e.symbols.added, *e.symbols.changed, *e.symbols.removed]:
            for key in filter(None, (s, owner_class(s))):
                for f in files:
                    out.setdefault(key, {})[f] = None
    return {k: list(v) for k, v in out.items()}


def _first_mention(queue: Queue) -> dict[str, tuple[str, int]]:
    """Symbol -> (how the first queue entry naming it treats it: added/changed/removed, that entry)."""
    out: dict[str, tuple[str, int]] = {}
    for e in queue.entries:
        for how in ("added", "changed", "removed"):
            for s in getattr(e.symbols, how):
                out.setdefault(s, (how, e.n))
    return out


def _pins_for_entry(
    up: Upstream,
    queue_pin: str | None,
    files_of: dict[str, list[str]],
    pins_for: Callable[[str], list[str]],
    e: Entry,
    symbol: str,
) -> list[str]:
    """The queue's pin, then the pins of port files mapping the symbol's files, if before the entry."""
    found = [queue_pin] if queue_pin else []
    for f in files_of.get(symbol, []):
        for pin in pins_for(f):
            full = up.resolve(pin)
            here = up.resolve(e.sha) if e.sha else None
            if full and here and full not in found and up.before(full, here):
                found.append(full)
    return found


def is_feature(symbol: str, path: str = "", non_code: Sequence[str] = ()) -> bool:
    """Whether a pre-pin gap is one a team writes a row for: a class, or a public top-level function,
    defined in upstream code (not in a file `non_code` matches: tests, docs, benchmarks).

    A private helper (`_free_inputs`), a test function or fixture, a constant (`CUDA_DEVICES`) or a
    method of a class the port has is evidence inside an entry, not a gap: a port often folds such a
    name into a function it has, and a row per helper would bury the features.
    """
    if path and any(globs.match(g, path) for g in non_code):
        return False
    member = "." in symbol or "::" in symbol
    return not (member or symbol.startswith("_") or symbol.lower().startswith("test") or symbol.isupper())


def _candidates(s: str, absent: Callable[[str], bool], first: dict[str, tuple[str, int]]) -> list[str]:
    """What may be a pre-pin gap for an absent symbol: its class when absent as a whole, then the symbol
    itself unless the queue adds it (then it was not at the pin) or it is a Python protocol name."""
    out = []
    cls = owner_class(s)
    if cls and absent(cls):
        out.append(cls)
    if first.get(s, ("changed", 0))[0] != "added" and not _dunder(s):
        out.append(s)
    return out


def _find_sites(
    r,
    e: Entry,
    absent: Callable[[str], bool],
    first: dict[str, tuple[str, int]],
    files_of: dict[str, list[str]],
    prefixes: list[str],
    up: Upstream,
    pins: Callable[[Entry, str], list[str]],
    sites: dict[str, Site],
    pointing: dict[str, list[int]],
) -> None:
    """One audit result's pre-pin gaps: evidence lines on the result, sites and pointing entries recorded."""
    gated = [g.probe for g in r.gates if g.kind == "absent" and g.probe and not g.regex]
    # rule 8.1 decides before anything is probed; the audit's scan still counted the entry's symbols
    mine = r.probes or [*e.symbols.changed, *e.symbols.removed, *e.symbols.added]
    for s in dict.fromkeys([*mine, *gated]):
        if not absent(s):
            continue
        for key in _candidates(s, absent, first):
            # the first pin that had it; which pins count depends on the entry (a header pin must precede it)
            site = next(
                filter(None, (up.find(pin, prefixes, files_of.get(key, []), key) for pin in pins(e, key))), None
            )
            if site is None or site.kind == "alias":
                continue
            sites.setdefault(key, site)
            line = PREPIN_LINE.format(symbol=key, pin=site.pin[:PIN_CHARS], path=site.path, line=site.line)
            if line not in r.evidence:
                r.evidence.append(line)
            if r.n not in pointing.setdefault(key, []):
                pointing[key].append(r.n)
            break  # the class, when absent as a whole, is the gap; its members are not gaps of their own


def _owned_gaps(
    sites: dict[str, Site],
    pointing: dict[str, list[int]],
    rows: list[owners_mod.Row],
    done_states: list[str],
    non_code: Sequence[str],
) -> list[Gap]:
    """Each gap with the open matrix row that cites it, if any."""
    done = {s.upper() for s in done_states}
    open_rows = [row for row in rows if row.state.upper() not in done]
    out = []
    for key in sorted(pointing):
        site = sites[key]
        if not is_feature(key, site.path, non_code):
            continue
        last = naming.parts(key)[-1]  # every form a row may cite contains it: a cheap filter first
        row = next(
            (row for row in open_rows if last in row.upstream and owners_mod.cites_symbol(row.upstream, key)), None
        )
        out.append(Gap(key, site.kind, site, sorted(pointing[key]), owners_mod.owner_text(row) if row else ""))
    return out


def run(
    cfg,
    queue: Queue,
    result,
    *,
    pins_for: Callable[[str], list[str]],
    absent: Callable[[str], bool],
    rows: list[owners_mod.Row],
) -> Outcome:
    """The pre-pin check over an audit's results; appends evidence lines to those results.

    `pins_for(upstream_path)` gives the provenance pins of the port files that map it;
    `absent(symbol)` says whether the audit's probe found it missing from the port, with a working control.
    """
    out = Outcome()
    repo = cfg.upstream_repo
    if repo is None or not Path(repo).is_dir() or not gitio.is_git_repo(Path(repo)):
        out.note = (
            "pre-pin check not run: no [upstream] repo is configured"
            if repo is None
            else f"pre-pin check not run: [upstream] repo {repo} is not a git repository"
        )
        return out
    prefixes = [p.strip("/") for p in (cfg.upstream_paths or queue.meta.paths) if p.strip("/")]
    files_of = _files_by_symbol(queue)
    first = _first_mention(queue)
    up = Upstream(Path(repo), cfg.cache_dir or None)
    try:
        up.resolve_all(
            [
                queue.meta.pin,
                *(e.sha for e in queue.entries),
                *(pin for fs in files_of.values() for f in fs for pin in pins_for(f)),
            ]
        )
        queue_pin = up.resolve(queue.meta.pin)
        if queue.meta.pin and queue_pin is None:
            out.note = (
                f"pre-pin check at the queue's pin skipped: {queue.meta.pin[:PIN_CHARS]} is not in the upstream "
                f"checkout {repo}; fetch it there (header pins are still checked)"
            )

        def pins(e: Entry, symbol: str) -> list[str]:
            return _pins_for_entry(up, queue_pin, files_of, pins_for, e, symbol)

        sites: dict[str, Site] = {}  # gap key -> where a pin had it
        pointing: dict[str, list[int]] = {}
        for r in result.results:
            e = queue.entry(r.n)
            if r.verdict in SETTLED or e is None:
                continue
            if r.verdict == "ignore" and not any(_under(f, prefixes) and language_for(f) for f in e.files):
                continue  # CI, docs, files outside the mirrored paths: nothing the port could lack
            _find_sites(r, e, absent, first, files_of, prefixes, up, pins, sites, pointing)
        out.gaps = _owned_gaps(sites, pointing, rows, cfg.done_states, cfg.non_code)
        out.candidates = _candidates_by_path(out, owners_mod.open_rows(rows, cfg.done_states))
        out.net_zero = _net_zero(queue, result, absent, up, queue_pin, prefixes, files_of)
        out.trees = len(up._trees)
        out.blobs = len(up.blobs)
    finally:
        up.close()
    return out


def _net_zero(queue, result, absent, up: Upstream, pin: str | None, prefixes, files_of) -> list[NetZero]:
    """Symbols added and later removed inside the queue, absent at the pin and from the port."""
    chosen = set(result.entries)
    order = [e for e in queue.entries]
    found: list[NetZero] = []
    covered: set[tuple[str, int, int]] = set()
    for i, e in enumerate(order):
        for s in sorted(set(e.symbols.added)):
            if any(
                x.n != e.n and (s in x.symbols.added or s in x.symbols.changed or s in x.symbols.removed)
                for x in order[:i]
            ):
                continue  # named before this entry: not new inside the queue
            later = next((x for x in order[i + 1 :] if s in x.symbols.removed), None)
            if later is None or not ({e.n, later.n} & chosen):
                continue
            cls = owner_class(s)
            if cls and (cls, e.n, later.n) in covered:
                continue  # the class's own pair says it for its members
            if s in result.counts and not absent(s):
                continue  # the port has it: skipping the removal would leave it behind
            if pin and up.find(pin, prefixes, files_of.get(s, []), s) is not None:
                continue
            between = [x.n for x in order[i + 1 : order.index(later)] if s in x.symbols.changed]
            covered.add((s, e.n, later.n))
            found.append(NetZero(s, e.n, later.n, pin or queue.meta.pin, between))
    for z in found:
        line = NETZERO_LINE.format(
            symbol=z.symbol, added=z.added, removed=z.removed, pin=(z.pin or "unknown")[:PIN_CHARS]
        )
        for r in result.results:
            if r.n in (z.added, z.removed, *z.between) and line not in r.evidence:
                r.evidence.append(line)
    return found


def recorded_net_zero(queue: Queue) -> list[NetZero]:
    """From a queue's written evidence: the net-zero pairs audit found, each with the entries between."""
    found: dict[tuple[str, int, int], NetZero] = {}
    for e in queue.entries:
        for line in e.evidence:
            m = NETZERO_RE.match(line)
            if m is None:
                continue
            key = (m["symbol"], int(m["added"]), int(m["removed"]))
            z = found.setdefault(key, NetZero(key[0], key[1], key[2], m["pin"]))
            if e.n not in key[1:] and e.n not in z.between:
                z.between.append(e.n)
    return list(found.values())


def recorded_gaps(queue: Queue, non_code: Sequence[str] = ()) -> dict[str, tuple[str, list[int]]]:
    """From a queue's written evidence: gap symbol -> (site text, entries), for unsettled entries."""
    out: dict[str, tuple[str, list[int]]] = {}
    for e in queue.entries:
        if e.verdict in SETTLED:
            continue
        for line in e.evidence:
            m = PREPIN_RE.match(line)
            if m and is_feature(m["symbol"], m["path"], non_code):
                _, ns = out.setdefault(m["symbol"], (f"{m['pin']}:{m['path']}:{m['line']}", []))
                if e.n not in ns:
                    ns.append(e.n)
    return out


def recorded(cfg, queue: Queue) -> Outcome:
    """The pre-pin gaps audit recorded in a queue's evidence, each with the open row citing it: what
    `check` warns about and what a report of a written queue lists, judged alike."""
    rows = owners_mod.open_rows(
        owners_mod.load_rows(cfg.port_root, cfg.matrices, id_pattern=cfg.id_pattern), cfg.done_states
    )
    out = Outcome()
    for symbol, (site, ns) in sorted(recorded_gaps(queue, cfg.non_code).items()):
        pin, rest = site.split(":", 1)
        path, line = rest.rsplit(":", 1)
        kind = "class" if symbol[:1].isupper() else "symbol"
        row = next((r for r in rows if owners_mod.cites_symbol(r.upstream, symbol)), None)
        owner = owners_mod.owner_text(row) if row else ""
        out.gaps.append(Gap(symbol, kind, Site(pin, path, int(line), kind), sorted(ns), owner))
    out.net_zero = recorded_net_zero(queue)
    out.candidates = _candidates_by_path(out, rows)
    return out


def _candidates_by_path(out: Outcome, rows: list[owners_mod.Row]) -> dict[str, list[str]]:
    """The open rows that cite a feature's module without citing its names: where its row may belong."""
    return {
        f.path: [owners_mod.owner_text(r) for r in rows if owners_mod.cites_path(r.upstream, f.path)]
        for f in out.features
    }
