"""The rules in the order they are tried (docs/audit.md is this table), and judging one entry by them."""

from __future__ import annotations


from porttrack.model import NEEDS_GATE, Entry, Part
from porttrack.audit.results import EntrySymbols, Result
from porttrack.audit.subject import AuditRule, Subject, _Ctx
from porttrack.audit.rules_blocked import _absent_blockers, _blocked, _owned
from porttrack.audit.facts import _content_states
from porttrack.audit.gating import _lacking_gates
from porttrack.audit.rules_content import _content, _inert, _ported, _real_gap, _surface_absent, _untouched
from porttrack.audit.rules_records import (
    _behaviour,
    _cited,
    _deferred,
    _echoed,
    _quoted,
    _written_from,
    _replaced,
    _ignore,
    _tests_only,
    _mechanics_subject,
    _dead_subject,
    _no_op,
    _path_rule,
    _unmapped,
    _untrusted,
)


# The rules in the order they are tried; docs/audit.md's table is rendered from this (`rules_table`).
RULES: tuple[AuditRule, ...] = (
    AuditRule(
        "behaviour",
        "ported or real-gap",
        _behaviour,
        "the entry carries `[entry.behaviour]` (written by `validate kv --record`: its commit is a kvref "
        "semantics switch, docs/harness.md) and the port's harness answered the cases that tell the switch "
        "apart only as with it (`matches`) or only as without it (`lacks`); `mixed` decides nothing. It comes"
        " first because it is what the port's own code did, which no static probe can overrule",
        "the harness and its command, the `validate kv` run that repeats it (`--as-of`, `--cases`, `--seed`),"
        " the counts as with / without / neither, and the case that decides (for `lacks`: the field, expected"
        " and got)",
        says="`ported` for `matches`, `real-gap` for `lacks`",
    ),
    AuditRule(
        "ignore",
        "ignore",
        _ignore,
        "no file of the entry lies under `[upstream] paths` (or the queue's `paths`), or every file that does"
        " has no port counterpart (no `[[map]]` matches it, no provenance header names it) **and is neither "
        "code nor data**: it matches `[audit] non_code` (tests, docs, CI, benchmarks by default) or lacks both a "
        "`[audit] source_suffixes` and a `[audit] data_suffixes` suffix. A port with neither maps nor headers maps"
        " everything under its paths",
        "the files and the mirrored paths",
    ),
    AuditRule(
        "tests-only",
        "no-op",
        _tests_only,
        "every mirrored file matches `[audit] non_code` (the upstream's tests, docs, benchmarks) and the port "
        "maps it: a port writes its own tests, so a change to the upstream's is nothing it could need, and "
        "what only those files define (a test, a fixture, a test's helper) is no evidence for any rule",
        "the files",
    ),
    AuditRule(
        "path-rule",
        "(the rule's)",
        _path_rule,
        "every mirrored file matches a `[[rule]]`'s `upstream` glob and all of the rule's gates hold "
        "(recorded as `path-rule GLOB`)",
        "the rule's gates, each with its probe line; a rule with a live gate is skipped, and the evidence says so",
        says="the rule's verdict",
    ),
    AuditRule(
        "no-op",
        "no-op",
        _no_op,
        "the upstream diff can be read, and every changed line of the mirrored code is blank, a comment, a "
        "docstring, or one of the constructs of `[audit] language_only` (read without its trailing comment; decorators, `__slots__`, imports, "
        "typing, log text, `torch.compile`, `pin_memory`, device asserts, garbage collector calls, library "
        "version checks by default), or code that carries no behaviour (see No-op below: moved code, message "
        "text, renamed names, unused parameters, signature annotations, copies, properties that became "
        "methods, trailing comments, export lists, removed code nothing in the tree reads, `if`/`else` branches "
        "of the same code merged into one copy, the same code broken over other lines, removed deprecation "
        "shims, calls pointed at code that does the same, expressions written as the call of a function that "
        "only returns them or back, assignments the code makes again unread, parameters that only turn log lines on or off, values "
        "wrapped in a call that only warns)",
        "the constructs met, by name",
    ),
    AuditRule(
        "mechanics-subject",
        "no-op",
        _mechanics_subject,
        "the entry's subject matches `[audit] mechanics_subject` (by default one that names `mypy`, the docs "
        "(a `[Doc]` tag, `docs:`, the docs build), the garbage collector, pinned memory, autotuning, monkey "
        "patches or an eager, lazy or guarded import, or the libtorch stable ABI its kernels move onto, or "
        "carries a PyTorch compiler tag, `[compile]`, `[torch.compile]`, `[Inductor]`, `[vLLM IR]` and the "
        "like, with no word of fusing after it): by the upstream's own account the change serves its tooling "
        "(a type checker's demands, its docs), the Python runtime's mechanics or its binding to PyTorch (its "
        "ABI, or the graph passes and op IR torch.compile runs), which a port neither runs nor links. A fusion "
        "pass is left to the code: it makes the compiled graph call a fused kernel. It comes after `no-op`, "
        "which names the constructs where it can read every line as one",
        "the word of the subject that matched, and the pattern",
    ),
    AuditRule(
        "dead-subject",
        "no-op",
        _dead_subject,
        "the entry's subject matches `[audit] dead_subject` (by default one that removes, drops or cleans up "
        "code it calls `dead` or `unused`, a dead lock being no dead code, or carries a `[V0 Deprecation]` tag, "
        "what is left of an engine the upstream has retired): by the upstream's own account nothing "
        "runs the code the change removes, so a port that has it loses nothing by keeping it, and one that "
        "lacks it has nothing to do. It comes after `no-op`, whose dead-code finder names the removed code "
        "nothing in the tree reads where it can show it",
        "the words of the subject that matched, and the pattern",
    ),
    AuditRule(
        "untrusted",
        "untrusted",
        _untrusted,
        "a probe of the entry (or a gate of a matching path rule) is untrusted or incomplete: its positive "
        "control failed, the scope is missing, a file could not be read; or `queue build --skip-missing` "
        "recorded one of the entry's files as `unreadable` (its blob is missing from the upstream clone, so "
        "its symbols are unknown)",
        "the probe's reason, or the unreadable files",
    ),
    AuditRule(
        "cited",
        "ported",
        _cited,
        "a comment in the port's code scope cites the entry's PR (`#N`, or `NAME#N` or `NAME/pull/N` where NAME is "
        "the last part of the queue's upstream name; another project's `other#N` cites nothing) on a line that "
        "carries no word of `[audit] deferral_words`, and no deferral record names the PR: the port names the "
        "change it carries, however it spells the code, so this comes before the rules that judge by names",
        "the citing line, by path:line",
    ),
    AuditRule(
        "echoed",
        "ported",
        _echoed,
        "more than half of the comment blocks the change adds to its mirrored code (runs of added whole-line"
        " comments of at least 8 words, links left out) have 8 words in a row that the comments of the port's "
        "code scope repeat, on a line no source file of its folder held before the change (a moved comment, a "
        "licence header), with no deferral record within 3 lines of the port's: the port copied the change "
        "with its explanation, however it named the code",
        "each repeated block, with the upstream line, the port's path:line and the words",
    ),
    AuditRule(
        "quoted",
        "ported",
        _quoted,
        "more than half of the messages the change's mirrored code writes new (the sentences of the string "
        "literals its added code lines hold, cut where a value is put in, of at least 4 words and 24 "
        "characters; docstrings left out; none that an upstream source file held before the change) stand word"
        " for word in the port's code scope, not within 3 lines of a deferral record: the port carries the "
        "change's checks with their wording, however it named the code",
        "each message the port holds, with the upstream line, the port's path:line and the text",
    ),
    AuditRule(
        "written-from",
        "ported",
        _written_from,
        "the change creates mirrored code files (not tests) that port files name as their source in a provenance "
        "header (none of whose pins is placed before the entry), and the created files hold more than half of "
        "the non-blank code lines the change adds to its mirrored code files, and no deferral record in those port "
        "files (a deviation is none: it carries the part its own way) names a symbol the change adds or changes (nor its PR): a file that exists only from this change on was the port's "
        "source, so the port was written from it as this change left it or later, however it named the code",
        "each created file and the port files that name it",
    ),
    AuditRule(
        "replaced",
        "ported",
        _replaced,
        "every mirrored code file lacks a port counterpart, and a later upstream commit (after the entry, up to "
        "the upstream clone's `HEAD`) deleted it and added, in its folder, a file whose name shares its leading"
        " word (`foo_parser.py` then `foo_engine_parser.py`, git's rename detection aside: a rewrite shares too "
        "few lines for it), which port files name as their source in a provenance header, none pinned before "
        "the entry, and no deferral record in those port files (deviations aside) names a symbol the change adds or changes (nor"
        " its PR): the new file exists only from that commit on, so the port was written from the upstream "
        "past this change, and what became of the change is in the file the port follows",
        "each replaced file, the commit that replaced it, its successor and the port files that name it",
    ),
    AuditRule(
        "unmapped",
        "surface-absent",
        _unmapped,
        "every mirrored code file lacks a port counterpart, and none of the entry's own symbols is in the port. A "
        "data file the code reads (`[audit] data_suffixes`: a kernel's tuned configs) counts as code here: a port "
        "without its counterpart lacks it",
        "the files, and an `absent` gate per symbol (one per class the port lacks); where the entry names no "
        "symbol, an `unmapped` gate per file, live once a header or `[[map]]` gives it a counterpart",
    ),
    AuditRule(
        "surface-absent",
        "surface-absent",
        _surface_absent,
        "none of the changed/removed symbols has a code hit where it would be (a member inside its class, see"
        " Naming), the entry adds no member to a class the port has, and content evidence does not find the "
        "change ported; or the entry changes nothing and only adds members to classes the port lacks",
        "an `absent` gate per symbol, citing where its positive control is defined; members of a class the "
        "port lacks as a whole share one gate on the class, since the class is what appears first",
    ),
    AuditRule(
        "deferred",
        "real-gap",
        _deferred,
        "the port has the surface, and a deferral record names one of the entry's symbols (a member only when"
        " the port has its class) or its PR: a comment in the counterpart files or in a file defining the "
        "symbol it names (for a member, one whose code names its class: another class's record of a member "
        "of the same name is no record of this one), or a line of the port's `docs/`, carrying a word of "
        "`[audit] deferral_words`; unless "
        "content evidence finds the port has none of what the change edits (`content-absent`, below), which "
        "makes it `surface-absent`",
        "the record, by path:line, and the name it matched",
    ),
    AuditRule(
        "content",
        "ported or surface-absent",
        _content,
        "the upstream diff can be read, and hunk by hunk the telling tokens (identifiers in any spelling, "
        "numbers, strings) of the new side are in the port files that map it (or define the entry's symbols, "
        "or, for a file with no counterpart, hold its twin: see Content evidence) "
        "and the old side's are gone, hunks a later commit of the queue rewrote set aside (and, beside a "
        "ported hunk, hunks with neither side in the port): recorded as "
        "`content-ported`; or at least one hunk has neither side in the port, is guarded by a name the port "
        "lacks, or changes only lines that serve what the port lacks (see Content evidence), and none leaves "
        "work: `content-absent`",
        "each hunk's state, the tokens found and missing, and the port files compared",
        says="`ported` / `surface-absent`",
    ),
    AuditRule(
        "ported",
        "ported",
        _ported,
        "every added symbol exists, and the provenance pins of the port files that map the entry's paths are "
        "at or past the entry",
        "each pin and where it stands",
    ),
    AuditRule(
        "inert",
        "inert",
        _inert,
        "the changed symbols that exist have no consumers (only definitions, tests and delegations read them), and "
        "none is a program's entry point (`main`: the runtime calls it, and no code reads it)",
        "a `no-consumer` gate per symbol, citing its definition (plus `absent` gates for changed symbols the "
        "port lacks)",
    ),
    AuditRule(
        "untouched",
        "surface-absent",
        _untouched,
        "the upstream diff can be read, no hunk in a file the port maps leaves work (each only removes code "
        "the port lacks, or serves what the port lacks: see Content evidence), and every hunk that adds code "
        "lies in a file with no port counterpart and names something the port lacks, or lies in a class or "
        "function the port lacks. Hunks whose new side is in the port may stand beside such a hunk: the "
        "part the port made does not outweigh the part that waits on a surface it lacks (a reader labels a "
        "change by the part that needs the most), but a change with no such hunk is no surface-absent one",
        "each hunk's state, and an `absent` gate per name the port lacks (at most three)",
    ),
    AuditRule(
        "absent-blockers",
        "surface-absent",
        _absent_blockers,
        "the entry would be blocked, and every entry it waits on is `surface-absent`, or `real-gap` by "
        "`deferred`: the port records that change as left out, so nothing schedules this one until the choice "
        "is undone (in this run, or as recorded; a settled entry is nothing to wait on, as in `blocked`)",
        "the blockers, a copy of their `absent` gates, an `absent` gate per name it uses of an entry the port "
        "left out (with none, nothing gates it and it stays `blocked`), and an `entry-ported` gate on that "
        "entry, live once it is ported",
    ),
    AuditRule(
        "blocked",
        "blocked",
        _blocked,
        "the entry uses or changes (not removes) a symbol that an earlier entry *adds* (an added "
        "`Class.member` is also matched by its bare `member`), names it in code on its added lines (not only "
        "in a comment or docstring), the port lacks it, and that entry is not settled (`ported`, `no-op`, "
        "`ignore`: no work is left to wait for); or an earlier stage of its series is in the queue and not "
        "settled. A module's logger (`logger`, `_logger`) blocks nothing: it is plumbing a port spells its "
        "own way. The candidates come from `blocked_graph`",
        "`blocked_by`, and an `entry-ported` gate per blocker citing the blocker's line in the queue",
    ),
    AuditRule(
        "owned",
        "owned",
        _owned,
        "an open matrix row (state in neither `done_states` nor `parked_states`) cites, in its upstream cell,"
        " the entry's PR, one of its symbols, or a line range of one of its files that overlaps the change's "
        "lines (`path:396,640-707`, `path#L12-L20`, `path::Symbol`); a row naming only the whole file owns "
        "nothing. Without an upstream checkout to read the diff, a path citation is enough, as the evidence "
        "says",
        '`owner = "ROW-ID (matrix.md:line)"` and what the row cites',
    ),
    AuditRule(
        "real-gap",
        "real-gap",
        _real_gap,
        "otherwise",
        "the consumers that make it real",
    ),
)


TABLE_START = "<!-- the rules table: scripts/update-rule-docs.py writes it from audit.RULES -->"
TABLE_END = "<!-- end of the rules table -->"


def rules_table() -> str:
    """docs/audit.md's table of the rules, from RULES: the docs cannot drift from the code."""
    rows = ["| rule | fires when | verdict | what is recorded |", "|---|---|---|---|"]
    rows += [f"| `{r.id}` | {r.when} | {r.says or f'`{r.verdict}`'} | {r.records} |" for r in RULES]
    return "\n".join([TABLE_START, *rows, TABLE_END])


def write_rules_table(doc: str) -> str:
    """`doc` with the text between the table's markers replaced by `rules_table()`."""
    head, rest = doc.split(TABLE_START, 1)
    return head + rules_table() + rest.split(TABLE_END, 1)[1]


def rule_by_id(rule_id: str) -> AuditRule:
    return next(r for r in RULES if r.id == rule_id)


def judge(ctx: _Ctx, e: Entry, obj: Entry | Part, syms: EntrySymbols, files: list[str]) -> Result:
    """Try the rules in table order on one entry or part; the first that fires decides."""
    label_part = obj.name if isinstance(obj, Part) else None
    res = Result(e.n, label_part, "unclassified", "", "", recorded=obj.verdict, recorded_by=obj.verdict_by)
    subject = Subject(ctx, e, obj, syms, files, res)
    subject.locate()
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
