"""Each rule of porttrack/audit/registry.py alone, over facts set by hand: milliseconds a test.

One real pair is built once for the module (an upstream with three commits, a port that maps
it, the queue built with the real CLI) and the port is scanned once. Each test then makes one
Subject with the facts its case needs (the entry's symbols, its mirrored and unmapped files,
its hunk states, the entries it waits on and how this run judged them) and asks one rule
whether it fires. Probe counts, provenance pins, records and matrix rows are the real port's.
The end-to-end tests beside this file (test_rules_*.py) run the whole audit on real pairs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types

import pytest

from conftest import commit_files, git, init_repo, run_cli
from audit_pair import CONFIG, MATRIX, PORT_SCHED, SCHED

from porttrack import config as config_mod
from porttrack.audit import registry
from porttrack.audit.results import EntrySymbols, Result, _Probes
from porttrack.audit.subject import Judged, Subject, _Ctx
from porttrack.evidence import naming
from porttrack.evidence import owners as owners_mod
from porttrack.evidence.compare import HunkState
from porttrack.gitio import Hunk
from porttrack.model import Behaviour, Gate, Rule
from porttrack.queue import file as queuefile

SCHED_PY = "vllm/core/sched.py"
PAGER_PY = "vllm/engine/pager.py"  # no [[map]] or header gives it a port counterpart
PORT_EXTRA = """
int Unused(int x) { return x; }
// carries upstream #1007: a floor under each request
// free_all: deferred until the port frees in batches
// the typed free of #1008 is left to the compiler
// #1008: deferred, the port has no type checker
"""
# ported at the base, before every entry
PORT_BLOCKS = """// Ported from: vllm/core/blocks.py @ {pin}
class BlockPool { public: int Take() { return 1; } };
int UseBlocks(BlockPool& b) { return b.Take(); }
"""
ROW = "| ENG-PAUSE | pausing | `vllm/core/sched.py::Scheduler.pause` | PLANNED |\n"
# every name a test asks about, so the one scan counts them all
NAMES = [
    "Scheduler",
    "Scheduler.step",
    "Scheduler.free",
    "Scheduler.pause",
    "Scheduler.free_all",
    "Unused",
    "Pager",
    "Pager.evict",
    "Pager.grow",
    "BlockPool",
    "BlockPool.take",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("facts")
    up = init_repo(tmp / "up")
    base = commit_files(up, {SCHED_PY: SCHED}, "[Core] base (#1)", date="2026-03-01T00:00:00+00:00")
    floored = SCHED.replace("        return request\n", "        return max(request, 2)\n")
    commit_files(up, {SCHED_PY: floored}, "[Core] A floor under each request (#1007)", date="2026-03-02T00:00:00+00:00")
    typed = floored.replace("def free(self, request)", "def free(self, request: int)")
    commit_files(
        up, {SCHED_PY: typed}, "[Misc] Fix mypy errors in the scheduler (#1008)", date="2026-03-03T00:00:00+00:00"
    )
    halved = typed.replace("compute_budget(tokens, self.budget)", "compute_budget(tokens, self.budget // 2)")
    commit_files(up, {SCHED_PY: halved}, "[Core] Step in half budgets (#1009)", date="2026-03-04T00:00:00+00:00")
    head = git(up, "rev-parse", "HEAD")
    port = init_repo(tmp / "port")
    commit_files(
        port,
        {
            "porttrack.toml": CONFIG.format(owners="", extra=""),
            ".agents/engine-matrix.md": MATRIX + ROW,
            # pinned at the upstream's last commit: every entry lies at or before it
            "src/core/sched.cpp": PORT_SCHED.format(pin=head[:10]) + PORT_EXTRA,
            "src/core/blocks.cpp": PORT_BLOCKS.replace("{pin}", base[:10]),
        },
        "port",
    )
    run_cli("queue", "build", "--range", f"{base}..{head}", "--name", "c", cwd=port, check_rc=0)
    cfg = config_mod.load_config(port / "porttrack.toml")
    queue = queuefile.load(port / "queue/c.toml").queue
    names = sorted({sp for x in NAMES for sp in [x, *naming.spellings(x)]})
    probes = _Probes(cfg, {tuple(cfg.code_scope): (names, [])})
    rows = owners_mod.load_rows(cfg.port_root, cfg.matrices, id_pattern=cfg.id_pattern)
    return types.SimpleNamespace(cfg=cfg, queue=queue, probes=probes, rows=rows)


@contextlib.contextmanager
def subject(world, e, syms: EntrySymbols, files=None, *, queue=None, judged=None, **facts):
    """A fresh Subject of entry `e` in a fresh run context (`judged`: what this run already said of
    other entries, {n: (verdict, gates[, rule])}); `facts` set its fields by hand. Closed on leaving."""
    queue = queue or world.queue
    ctx = _Ctx(world.cfg, queue, world.probes, world.rows, None, queue.entries)
    for b, (verdict, gates, *rule) in (judged or {}).items():  # the rule defaults to the verdict's name
        ctx.results[b] = Result(b, None, verdict, rule[0] if rule else verdict, "", gates=list(gates))
    try:
        yield Subject(
            ctx, e, e, syms, e.files if files is None else files, Result(e.n, None, "unclassified", "", ""), **facts
        )
    finally:
        ctx.close()


def fires(
    world,
    rule_id: str,
    *,
    n: int = 1,
    added=(),
    changed=(),
    mirrored=(SCHED_PY,),
    unmapped=(),
    under=None,
    content=(),
    blockers=None,
    lacked=None,
    judged=None,
    entry=None,
    rules=(),
) -> Result | None:
    """Rule `rule_id` on entry n (or `entry`) with these facts: its result if it fires, else None.
    `judged` is what this run already said of other entries: {n: (verdict, gates)}."""
    queue = dataclasses.replace(world.queue, rules=list(rules)) if rules else world.queue
    facts = dict(
        under=list(mirrored if under is None else under),
        mirrored=list(mirrored),
        unmapped=list(unmapped),
        content=list(content),
        blockers=blockers,
        lacked=dict(lacked or {}),
    )
    syms = EntrySymbols(list(added), list(changed))
    with subject(world, entry or queue.entry(n), syms, queue=queue, judged=judged, **facts) as s:
        rule = registry.rule_by_id(rule_id)
        return s.res if rule.fires(rule, s) else None


def judged_hunk(
    kind: str, new_found=(), new_missing=(), old_found=(), old_missing=(), mapped=True, path=SCHED_PY
) -> Judged:
    hunk = Hunk(path, 14, 1, 14, 1, ["        return request"], ["        return max(request, floor)"])
    state = HunkState(kind, list(new_found), list(new_missing), list(old_found), list(old_missing))
    return Judged(hunk, kind, state, mapped)


def test_the_rules_asked_about_here_are_registered(world):
    asked = {
        "behaviour",
        "ignore",
        "path-rule",
        "mechanics-subject",
        "dead-subject",
        "untrusted",
        "cited",
        "untouched",
        "unmapped",
        "surface-absent",
        "deferred",
        "content",
        "ported",
        "inert",
        "absent-blockers",
        "blocked",
        "owned",
        "real-gap",
    }
    assert asked <= {r.id for r in registry.RULES}


def test_locate_sorts_the_entrys_files_before_any_rule(world):
    e = world.queue.entry(1)
    files = [SCHED_PY, PAGER_PY, "vllm/core/README.md", "docs/usage.md"]
    with subject(world, e, EntrySymbols(), files) as s:
        s.locate()
    assert s.under == [SCHED_PY, PAGER_PY, "vllm/core/README.md"]
    assert (s.mirrored, s.unmapped) == ([SCHED_PY, PAGER_PY], [PAGER_PY])


def test_ignore_reads_where_the_files_stand(world):
    r = fires(world, "ignore", mirrored=[], under=["vllm/core/README.md"])
    assert r is not None and r.verdict == "ignore" and "none is code" in r.reason
    r = fires(world, "ignore", mirrored=[], under=[])
    assert r is not None and r.reason.startswith("touches no mirrored path")
    assert fires(world, "ignore", mirrored=[PAGER_PY], unmapped=[PAGER_PY]) is None


def test_behaviour_decides_on_what_the_harness_answered(world):
    e = world.queue.entry(3)
    answered = Behaviour("matches", "switch-a", harness="h", impl="./h", cases=8, seed=1, agree=5, case=3)
    r = fires(world, "behaviour", entry=dataclasses.replace(e, behaviour=answered))
    assert r is not None and r.verdict == "ported" and "switch-a" in r.reason
    lacked = dataclasses.replace(answered, result="lacks", lack=5, agree=0, field="blocks", expected="1", got="2")
    r = fires(world, "behaviour", entry=dataclasses.replace(e, behaviour=lacked))
    assert r is not None and r.verdict == "real-gap" and "expected 1, got 2" in r.reason
    mixed = dataclasses.replace(answered, result="mixed")
    assert fires(world, "behaviour", entry=dataclasses.replace(e, behaviour=mixed)) is None
    assert fires(world, "behaviour", entry=e) is None


def test_a_path_rule_holds_while_its_gates_hold(world):
    holding = Rule("vllm/core/**", "surface-absent", gates=[Gate(id="pager", kind="absent", probe="Pager")])
    r = fires(world, "path-rule", rules=[holding])
    assert r is not None and (r.verdict, r.rule) == ("surface-absent", "path-rule vllm/core/**")
    assert [g.id for g in r.gates] == ["pager"]
    live = Rule("vllm/core/**", "surface-absent", gates=[Gate(id="sched", kind="absent", probe="Scheduler")])
    assert fires(world, "path-rule", rules=[live]) is None  # the port has Scheduler: the rule stands aside
    elsewhere = Rule("vllm/engine/**", "surface-absent", gates=[Gate(id="pager", kind="absent", probe="Pager")])
    assert fires(world, "path-rule", rules=[elsewhere]) is None


def test_mechanics_subject_reads_the_subject_alone(world):
    r = fires(world, "mechanics-subject", n=2)
    assert r is not None and r.verdict == "no-op" and "mypy" in r.reason
    assert fires(world, "mechanics-subject", n=1) is None


def test_dead_subject_reads_the_subject_alone(world):
    e = world.queue.entry(1)
    dead = dataclasses.replace(e, subject="[Refactor] Remove dead code in the scheduler (#9)")
    r = fires(world, "dead-subject", entry=dead)
    assert r is not None and r.verdict == "no-op" and '("Remove dead")' in r.reason
    assert fires(world, "dead-subject", entry=e) is None


def test_tests_only_needs_every_mirrored_file_to_be_the_upstreams_tests(world):
    tests = "vllm/core/tests/test_sched.py"
    r = fires(world, "tests-only", mirrored=[tests])
    assert r is not None and r.verdict == "no-op" and tests in r.reason
    assert fires(world, "tests-only", mirrored=[tests, SCHED_PY]) is None
    assert fires(world, "tests-only", mirrored=[]) is None


def test_untrusted_fires_on_a_file_the_queue_could_not_read(world):
    e = world.queue.entry(1)
    r = fires(world, "untrusted", entry=dataclasses.replace(e, unreadable=[SCHED_PY]))
    assert r is not None and r.verdict == "untrusted" and SCHED_PY in r.reason
    assert fires(world, "untrusted", changed=["Scheduler.step"]) is None  # its probe's control held


def test_cited_needs_a_port_comment_naming_the_entrys_pr(world):
    r = fires(world, "cited", n=1)
    assert r is not None and r.verdict == "ported" and "#1007" in r.reason and "src/core/sched.cpp:" in r.reason
    assert fires(world, "cited", n=2) is None  # #1008 is cited, and a record defers it: that wins


def test_unmapped_needs_every_file_unmapped_and_every_symbol_absent(world):
    r = fires(world, "unmapped", changed=["Pager.evict"], mirrored=[PAGER_PY], unmapped=[PAGER_PY])
    assert r is not None and r.verdict == "surface-absent"
    assert [(g.kind, g.probe) for g in r.gates] == [("absent", "Pager")]  # the class appears first
    assert fires(world, "unmapped", changed=["Scheduler.step"], mirrored=[PAGER_PY], unmapped=[PAGER_PY]) is None
    both = [SCHED_PY, PAGER_PY]
    assert fires(world, "unmapped", changed=["Pager.evict"], mirrored=both, unmapped=[PAGER_PY]) is None
    bare = fires(world, "unmapped", mirrored=[PAGER_PY], unmapped=[PAGER_PY])
    assert bare is not None and [(g.kind, g.probe) for g in bare.gates] == [("unmapped", PAGER_PY)]


def test_surface_absent_gives_way_to_a_member_added_to_a_class_the_port_has(world):
    r = fires(world, "surface-absent", changed=["Pager.evict"])
    assert r is not None and r.verdict == "surface-absent" and "Pager.evict" in r.reason
    assert fires(world, "surface-absent", changed=["Scheduler.step"]) is None  # the port has it
    grown = fires(world, "surface-absent", changed=["Pager.evict"], added=["Scheduler.pause"])
    assert grown is None
    only = fires(world, "surface-absent", added=["Pager.grow"])
    assert only is not None and "only to classes the port lacks (Pager)" in only.reason
    assert fires(world, "surface-absent", added=["Scheduler.pause"]) is None


def test_surface_absent_gives_way_to_content_the_port_has(world):
    ported = [judged_hunk("ported", new_found=["FloorUnder", "request_floor"])]
    assert fires(world, "surface-absent", changed=["Pager.evict"], content=ported) is None


def test_deferred_needs_a_record_of_a_member_of_a_class_the_port_has(world):
    r = fires(world, "deferred", changed=["Scheduler.free_all"])
    assert r is not None and r.verdict == "real-gap" and "src/core/sched.cpp:" in r.reason
    assert fires(world, "deferred", changed=["Scheduler.pause"]) is None  # no record names it
    absent = [judged_hunk("absent", new_missing=["free_all"], old_missing=["free"])]
    assert fires(world, "deferred", changed=["Scheduler.free_all"], content=absent) is None


def test_content_ported_and_content_absent_come_from_the_hunk_states(world):
    ported = [judged_hunk("ported", new_found=["FloorUnder", "request_floor"], old_missing=["OldCap"])]
    r = fires(world, "content", changed=["Scheduler.step"], content=ported)
    assert r is not None and (r.verdict, r.rule) == ("ported", "content-ported")
    absent = [judged_hunk("absent", new_missing=["evict_all"], old_missing=["evict_one"])]
    r = fires(world, "content", changed=["Pager.evict"], content=absent)
    assert r is not None and (r.verdict, r.rule) == ("surface-absent", "content-absent")
    assert [g.probe for g in r.gates] == ["Pager"]
    gap = [*absent, judged_hunk("gap", new_missing=["floor"], old_found=["request"])]
    assert fires(world, "content", changed=["Pager.evict"], content=gap) is None  # one hunk leaves work
    assert fires(world, "content", changed=["Scheduler.step"], content=[]) is None  # no diff: nothing said


def test_untouched_needs_every_addition_outside_the_ports_files_to_name_what_it_lacks(world):
    elsewhere = judged_hunk("gap", new_missing=["ZetaPool"], mapped=False, path=PAGER_PY)
    r = fires(world, "untouched", mirrored=[SCHED_PY, PAGER_PY], unmapped=[PAGER_PY], content=[elsewhere])
    assert r is not None and r.verdict == "surface-absent" and [g.probe for g in r.gates] == ["ZetaPool"]
    here = judged_hunk("gap", new_missing=["ZetaPool"], mapped=True)
    assert fires(world, "untouched", content=[elsewhere, here]) is None  # work left in a file the port has
    had = judged_hunk("gap", new_missing=["Scheduler"], mapped=False, path=PAGER_PY)
    both = [elsewhere, had]  # the second adds, where the port has no file, a name the port has: work
    assert fires(world, "untouched", mirrored=[SCHED_PY, PAGER_PY], unmapped=[PAGER_PY], content=both) is None
    # a part made in the port does not outweigh the part that waits on a surface the port lacks
    ported = judged_hunk("ported", new_found=["request_floor"], old_missing=["request"])
    r = fires(world, "untouched", mirrored=[SCHED_PY, PAGER_PY], unmapped=[PAGER_PY], content=[elsewhere, ported])
    assert r is not None and r.verdict == "surface-absent" and "made in the port" in r.reason
    assert fires(world, "untouched", content=[ported]) is None  # the change made, all of it: not absent


def test_ported_needs_every_added_symbol_and_a_pin_past_the_entry(world):
    r = fires(world, "ported", added=["Scheduler.step"])
    assert r is not None and r.verdict == "ported"
    assert fires(world, "ported", added=["Scheduler.pause"]) is None
    assert fires(world, "ported", added=["BlockPool.take"], mirrored=["vllm/core/blocks.py"]) is None  # pin: the base
    assert fires(world, "ported", changed=["Scheduler.step"]) is None  # nothing added: pins prove nothing


def test_inert_fires_only_on_code_nothing_reads(world):
    r = fires(world, "inert", changed=["Unused"])
    assert r is not None and r.verdict == "inert"
    assert [(g.kind, g.probe) for g in r.gates] == [("no-consumer", "Unused")]
    assert fires(world, "inert", changed=["Scheduler.step"]) is None  # Run reads it


def test_absent_blockers_follow_the_verdict_of_the_entry_waited_on(world):
    why = {1: ["uses Pager, which entry 1 adds and the port lacks"]}
    gate = Gate(id="pager-absent", kind="absent", probe="Pager", scope=["src"])
    r = fires(world, "absent-blockers", n=2, blockers=why, judged={1: ("surface-absent", [gate])})
    assert r is not None and r.verdict == "surface-absent" and [g.id for g in r.gates] == ["pager-absent"]
    assert fires(world, "absent-blockers", n=2, blockers=why, judged={1: ("real-gap", [])}) is None
    assert fires(world, "absent-blockers", n=2, blockers={}) is None
    # an entry judged ported is nothing to wait on, here as in `blocked`
    both = {**why, 3: ["uses Gizmo, which entry 3 adds and the port lacks"]}
    r = fires(world, "absent-blockers", n=2, blockers=both, judged={1: ("surface-absent", [gate]), 3: ("ported", [])})
    assert r is not None and r.reason == "waits only on surface-absent entries 1", r


def test_an_entry_the_port_records_as_left_out_is_waited_on_as_an_absent_surface(world):
    """A blocker that is work only through a deferral record: the port chose to leave it out, so an
    entry that builds on it has no surface to land on. What it uses of that entry is gated as absent,
    and a gate on the entry goes live once it is ported. Work of any other kind still blocks."""
    why, lacked = {1: ["uses Pager, which entry 1 adds and the port lacks"]}, {1: ["Pager"]}
    left_out = {1: ("real-gap", [], "deferred")}
    r = fires(world, "absent-blockers", n=2, changed=["Pager"], blockers=why, lacked=lacked, judged=left_out)
    assert r is not None and r.verdict == "surface-absent", r
    assert r.reason == "waits only on entries the port records as left out 1"
    assert [(g.kind, g.probe or g.entry) for g in r.gates] == [("absent", "Pager"), ("entry-ported", 1)]
    work = {1: ("real-gap", [], "real-gap")}
    assert fires(world, "absent-blockers", n=2, changed=["Pager"], blockers=why, lacked=lacked, judged=work) is None
    # nothing of it to gate on (a series stage names no symbol): it stays blocked
    stage = {1: ["earlier series stage [1/N][Pager] is not ported"]}
    assert fires(world, "absent-blockers", n=2, blockers=stage, judged=left_out) is None
    both = {**why, 3: ["uses Gizmo, which entry 3 adds and the port lacks"]}
    gate = Gate(id="gizmo-absent", kind="absent", probe="Gizmo", scope=["src"])
    judged = {**left_out, 3: ("surface-absent", [gate])}
    r = fires(world, "absent-blockers", n=2, blockers=both, judged=judged)
    assert r is not None and r.reason == (
        "waits only on surface-absent entries 3 and entries the port records as left out 1"
    ), r
    assert [g.kind for g in r.gates] == ["absent", "entry-ported"]


def test_blocked_waits_only_on_entries_not_settled(world):
    why = {1: ["uses Pager, which entry 1 adds and the port lacks"]}
    r = fires(world, "blocked", n=2, blockers=why, judged={1: ("real-gap", [])})
    assert r is not None and r.verdict == "blocked" and r.blocked_by == [1]
    assert [(g.kind, g.entry) for g in r.gates] == [("entry-ported", 1)]
    # ported, or nothing a port needs: no work is left to wait for
    for settled in ("ported", "no-op", "ignore"):
        assert fires(world, "blocked", n=2, blockers=why, judged={1: (settled, [])}) is None, settled
    stage = {**why, 3: ["earlier series stage [1/N][Pager] is not ported"]}
    gate = Gate(id="pager-absent", kind="absent", probe="Pager", scope=["src"])
    r = fires(world, "absent-blockers", n=2, blockers=stage, judged={1: ("surface-absent", [gate]), 3: ("no-op", [])})
    assert r is not None and r.reason == "waits only on surface-absent entries 1", r


def test_owned_needs_an_open_row_citing_the_entrys_symbol(world):
    r = fires(world, "owned", added=["Scheduler.pause"])
    assert r is not None and r.verdict == "owned" and r.owner.startswith("ENG-PAUSE")
    assert fires(world, "owned", added=["Scheduler.free_all"]) is None  # the row names only pause


def test_real_gap_says_what_makes_the_work_real(world):
    r = fires(world, "real-gap", changed=["Scheduler.step"])
    assert r is not None and r.reason == "changes code the port has and reads: Scheduler.step (1 consumer)"
    r = fires(world, "real-gap", added=["Scheduler.pause"])
    assert r is not None and r.reason == "adds Scheduler.pause, which the port does not have yet"
    assert fires(world, "real-gap").reason == "touches mirrored code and no rule defers it"


CASES = {  # entry, and the symbols it is taken to touch
    "cites its pull request": (1, EntrySymbols(changed=["Scheduler.free"])),
    "changes an annotation only": (2, EntrySymbols(changed=["Scheduler.free"])),
    "changes what the port has and reads": (3, EntrySymbols(changed=["Scheduler.step"])),
    "changes what nothing reads": (3, EntrySymbols(changed=["Unused"])),
    "adds to a class the port has": (3, EntrySymbols(added=["Scheduler.pause"])),
    "changes a class the port lacks": (3, EntrySymbols(changed=["Pager.evict"])),
    "adds only to a class the port lacks": (3, EntrySymbols(added=["Pager.grow"])),
    "records a deferral of it": (3, EntrySymbols(changed=["Scheduler.free_all", "Scheduler.step"])),
}


def _ask(world, case: str, rules) -> tuple[str, str, str] | None:
    """Rules in turn on a case's entry and symbols, on a fresh subject: the first that fires says."""
    n, syms = CASES[case]
    with subject(world, world.queue.entry(n), syms) as s:
        s.locate()
        return next(((r.id, s.res.verdict, s.res.reason) for r in rules if r.fires(r, s)), None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_rule_asked_alone_says_what_it_says_in_the_table(world, case):
    """The rule that decides an entry in table order fires alone on the same facts, with the same
    verdict and reason, and no rule before it fires alone: no rule leans on another having run."""
    decided = _ask(world, case, registry.RULES)
    assert decided is not None
    deciding = registry.rule_by_id(decided[0])
    before = registry.RULES[: registry.RULES.index(deciding)]
    assert [r.id for r in before if _ask(world, case, [r]) is not None] == []
    assert _ask(world, case, [deciding]) == decided
