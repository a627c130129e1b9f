"""The queue-only facts: selection labels, series, the blocked-by graph, path rules and pin placement."""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from pathlib import Path

from porttrack import gitio, globs
from porttrack.evidence import headers as headers_mod, naming
from porttrack import paths as pathrules
from porttrack.config import Config
from porttrack.model import SETTLED, Entry, Queue, Rule
from porttrack.audit.results import EntrySymbols, _entry_symbols


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


# a name runs to the next bracket, so an unclosed run of `[` is read once, not from each of them
_SERIES = [
    re.compile(r"\[\s*(?P<k>\d+)\s*/\s*(?P<of>\d+|[Nn])\s*\]\s*\[(?P<name>[^\]\d][^\][]*)\]"),
    re.compile(r"\[(?P<name>[^\]\d][^\][]*)\]\s*\[\s*(?P<k>\d+)\s*/\s*(?P<of>\d+|[Nn])\s*\]"),
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
            bare = naming.parts(s)[-1]
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
    settled (ported, no-op, ignore), plus recorded blocked_by (of the entry or its parts). Use
    `closure` for the transitive set."""
    settled = {e.n for e in queue.entries if e.verdict in SETTLED}
    out: dict[int, set[int]] = {}
    for n, adders in symbol_edges(queue).items():
        out.setdefault(n, set()).update(b for b in adders if b not in settled)
    for n, stages in series_edges(queue).items():
        out.setdefault(n, set()).update(b for b in stages if b not in settled)
    for e in queue.entries:
        rec = set(e.blocked_by).union(*(p.blocked_by for p in e.parts)) if e.parts else set(e.blocked_by)
        out.setdefault(e.n, set()).update(b for b in rec if b not in settled)
    return {n: sorted(v) for n, v in sorted(out.items()) if v}


def waited_on_first(graph: dict[int, list[int]], order: list[int]) -> list[int]:
    """`order` (entry numbers in queue order) rearranged so that each entry comes after the entries
    of `order` it waits on, else in queue order: a series stage queued after a later stage is judged
    before it. Where entries wait on each other, the earliest queued goes first."""
    pos = {n: i for i, n in enumerate(order)}
    waits = {n: {b for b in graph.get(n, []) if b in pos and b != n} for n in order}
    waiters: dict[int, list[int]] = {}
    for n, bs in waits.items():
        for b in bs:
            waiters.setdefault(b, []).append(n)
    ready = [pos[n] for n in order if not waits[n]]
    heapq.heapify(ready)
    out: list[int] = []
    left = set(order)
    while left:
        if not ready:  # a cycle: its earliest queued entry goes first
            heapq.heappush(ready, min(pos[n] for n in left))
        n = order[heapq.heappop(ready)]
        if n not in left:
            continue
        left.discard(n)
        out.append(n)
        for w in waiters.get(n, []):
            waits[w].discard(n)
            if not waits[w] and w in left:
                heapq.heappush(ready, pos[w])
    return out


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
    """Blocked entries (or entries with a blocked part) whose recorded blockers are all settled now
    (ported, no-op, ignore)."""
    settled = {e.n for e in queue.entries if e.verdict in SETTLED}
    out = []
    for e in queue.entries:
        blockers: set[int] = set()
        for obj in e.and_parts:
            if obj.verdict == "blocked":
                blockers.update(obj.blocked_by)
        if blockers and blockers <= settled:
            out.append((e.n, sorted(blockers)))
    return out


def rule_matches(rule: Rule, files: list[str]) -> bool:
    """A path rule covers an entry when every mirrored file it touches matches the rule's glob."""
    return bool(files) and all(globs.match(rule.upstream, f) for f in files)


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


def pin_before(pin: str, queue: Queue, cfg: Config, entry: Entry) -> bool:
    """True when a header's pin is placed before the entry (False when at or past, or not placeable)."""
    return _pin_position(pin, queue, cfg, entry) is False
