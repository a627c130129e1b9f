"""Which upstream behaviour kvref reproduces: one switch per upstream commit.

Every behaviour change kvref models is a row of SWITCHES, in upstream order.
`semantics="<sha prefix>"` turns on every row at or before that commit;
a preset name ("G1", "G2", "G3", "latest") names one such point; an iterable
of switch names picks rows by hand (what `validate kv --as-of` uses when it
has placed an arbitrary upstream revision with git).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable


@dataclass(frozen=True)
class Switch:
    name: str  # stable identifier used in code and in reports
    sha: str  # upstream commit prefix ("" when the commit is not recorded)
    pr: int | None
    date: str  # upstream commit date (UTC)
    change: str  # what turns on, in one line

    @property
    def label(self) -> str:
        sha = self.sha or "sha unknown"
        pr = f"vllm#{self.pr}" if self.pr else "PR unknown"
        return f"{sha} ({pr}, {self.date})"


# Upstream order. Dates are the upstream commit dates; the rows marked
# "inferred" are attributions docs/design.md §13 does not state outright (docs/kvref.md).
SWITCHES: tuple[Switch, ...] = (
    Switch(
        "record-new-block-ids",
        "4ff8c3c8f",
        35219,
        "2026-03-10",
        "single-type managers record new block ids; take_new_block_ids drains; KVBlockZeroer exists",
    ),
    Switch(
        "zeroer-full-attention-subclasses",
        "f4b42df04",
        38479,
        "2026-04-15",
        "the zeroer takes full-attention subclasses (MLA) too, not only the exact FullAttentionSpec",
    ),
    Switch(
        "resolve-block-sizes",
        "4d51588e2",
        40860,
        "2026-04-26",
        "resolve_kv_cache_block_sizes returns (scheduler, hash) block sizes",
    ),
    Switch(
        "mla-records",
        "d2889722f",
        43961,
        "2026-05-29",
        "MLA managers record new block ids too (exact types: full attention, MLA)",
    ),
    Switch(
        "free-uncached-first",
        "520828789",
        42656,
        "2026-06-16",
        "freed blocks without a block hash go to the head of the free queue (evicted first), not the tail",
    ),
    Switch("g1-pin", "fa36f86d7", 45772, "2026-06-23", "marker only: the G1 generation (no behaviour change)"),
    Switch(
        "mamba-mode-backoff",
        "",
        None,
        "2026-06/08",
        "G2: knob renamed prefix_match_unit; Mamba back-off tests mamba_cache_mode != 'align' "
        "(commit not recorded; placed right after G1)",
    ),
    Switch(
        "zeroer-fresh-staging",
        "1cd75b3dd4",
        48085,
        "2026-07-09",
        "zeroer stages ids from a fresh buffer per call (race fix; not observable single-threaded)",
    ),
    Switch(
        "zeroer-segment-stride",
        "d6af803f43",
        50276,
        "2026-08-06",
        "zeroer steps by each segment's block stride and zeroes only the page, not the whole stride",
    ),
    Switch(
        "attention-zeroing",
        "e3fe212eaf",
        51749,
        "2026-08-11",
        "record iff zeroing is needed and the spec is any attention spec; zeroer covers every "
        "attention spec; (inferred) mixed KV precision needs zeroing; drain every step; "
        "drop ids an async KV load will write",
    ),
    Switch(
        "zeroer-bounded-grid",
        "79f3183f86",
        52058,
        "2026-08-13",
        "bounded launch grid with masked stores; (inferred) non-uniform page sizes allowed",
    ),
    Switch(
        "tokens-per-state",
        "8bdc70ec7b",
        51718,
        "2026-08-21",
        "tokens_per_state on every spec (prerequisite of per-state prefix alignment)",
    ),
    Switch(
        "dcp-attention-only",
        "2ba984a5d0",
        53598,
        "2026-08-31",
        "DCP scales only attention groups; pcp no factor; multi-group context-parallel error gone",
    ),
    Switch(
        "prefix-cacheable",
        "e126687a9a",
        53896,
        "2026-08-31",
        "CircularBufferSpec not prefix-cacheable; hash size over prefix-cacheable groups; "
        "Mamba check looks inside wrappers; per-state prefix alignment (cache_hit_alignment)",
    ),
)

PRESETS = {"G1": "g1-pin", "G2": "mamba-mode-backoff", "G3": "prefix-cacheable", "latest": SWITCHES[-1].name}
_NAMES = [s.name for s in SWITCHES]


@dataclass(frozen=True)
class Semantics:
    """A set of switched-on behaviour changes, with the name it was asked by."""

    on: frozenset[str]
    label: str

    def __contains__(self, name: str) -> bool:
        if name not in _NAMES:
            raise KeyError(f"unknown semantics switch {name!r}")
        return name in self.on

    @property
    def last(self) -> Switch | None:
        """The latest switch that is on (None before the first)."""
        on = [s for s in SWITCHES if s.name in self.on]
        return on[-1] if on else None


SemanticsLike = str | Semantics | Iterable[str]


def upto(name: str, label: str | None = None) -> Semantics:
    """Every switch at or before the named one."""
    i = _NAMES.index(name)
    return Semantics(frozenset(_NAMES[: i + 1]), label or name)


def resolve_semantics(semantics: SemanticsLike = "latest") -> Semantics:
    """A preset name, an upstream sha prefix from SWITCHES, or switch names -> Semantics."""
    if isinstance(semantics, Semantics):
        return semantics
    if isinstance(semantics, str):
        key = semantics.strip()
        for preset, name in PRESETS.items():
            if key.lower() == preset.lower():
                return upto(name, preset)
        if key in _NAMES:
            return upto(key, key)
        low = key.lower()
        if len(low) >= 7 and all(c in "0123456789abcdef" for c in low):
            hits = [s for s in SWITCHES if s.sha and (s.sha.startswith(low) or low.startswith(s.sha))]
            if len(hits) == 1:
                return upto(hits[0].name, key)
        known = ", ".join([*PRESETS, *(s.sha for s in SWITCHES if s.sha)])
        raise ValueError(f"unknown semantics {semantics!r}: use a preset or one of the commits kvref knows ({known})")
    if semantics is None or isinstance(semantics, (bytes, int, float)) or not hasattr(semantics, "__iter__"):
        raise ValueError(f"semantics must be a preset, an upstream sha prefix or switch names, got {semantics!r}")
    names = list(semantics)
    bad = [n for n in names if n not in _NAMES]
    if bad:
        raise ValueError(f"unknown semantics switches {bad}: known are {_NAMES}")
    return Semantics(frozenset(names), "+".join(names) or "none")


def table() -> list[dict]:
    """SWITCHES as plain rows (for docs, JSON and reports)."""
    return [{"name": s.name, "sha": s.sha, "pr": s.pr, "date": s.date, "change": s.change} for s in SWITCHES]
