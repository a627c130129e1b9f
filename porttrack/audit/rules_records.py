"""Rules that decide from records, paths and the queue: behaviour, ignore, no-op, deferred, cited, echoed, quoted, written-from, replaced, unmapped, path rules, untrusted."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from porttrack import gates, gitio
from porttrack.evidence import hunks as hunks_mod, naming
from porttrack.evidence import deprecations, echoes, equivalents, reflow, refactor, repeats, switches, wrappers
from porttrack import paths as pathrules
from porttrack.errors import UserError
from porttrack.model import Gate
from porttrack.audit.results import _code, _definition, _owner_class, _slug, probe_line
from porttrack.audit.graph import pin_before, rule_matches
from porttrack.audit.subject import AuditRule, Subject, _Ctx
from porttrack.audit.gating import _absent_gates
from porttrack.audit.facts import _content_absent, _defining_by_symbol, _defining_files


DECORATOR = "decorator"  # the `[audit] language_only` construct whose arguments run over lines


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
        state = "not settled" if holds or waited is None else waited.verdict
        return holds, f"gate {g.id}: entry {g.entry} is {state}", None
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
    if s.mirrored:
        return False
    paths = ", ".join(pathrules.folder(p) for p in ctx.cfg.upstream_paths or ctx.queue.meta.paths)
    if s.under:
        s.ev.append(
            f"files {', '.join(s.under)} lie under the mirrored paths {paths}, but nothing maps them into the port "
            "and none is code or data ([audit] non_code, source_suffixes, data_suffixes)"
        )
        return s.fire(
            rule,
            f"no [[map]] or provenance header gives {', '.join(s.under)} a port counterpart, and none is code or data",
        )
    s.ev.append(f"files {', '.join(s.files) or '(none)'} lie outside the mirrored paths {paths}")
    return s.fire(rule, f"touches no mirrored path ({paths})")


def _tests_only(rule: AuditRule, s: Subject) -> bool:
    """Every mirrored file is the upstream's own test, doc or benchmark (`[audit] non_code`), which
    the port maps: the port writes its own, so the change is nothing it could need."""
    if not s.mirrored or not all(s.ctx.is_non_code(f) for f in s.mirrored):
        return False
    s.ev.append(f"files {', '.join(s.mirrored)} are the upstream's tests, docs or benchmarks ([audit] non_code)")
    return s.fire(
        rule,
        f"changes only the upstream's tests, docs or benchmarks ({', '.join(s.mirrored[:3])}{' …' if len(s.mirrored) > 3 else ''})",
    )


def _opened_above(s: Subject, hunks) -> tuple[frozenset[refactor.Line], dict[refactor.Line, str]]:
    """(hunk index, side, line index) of the changed lines that a statement opened above the hunk
    holds: inside a docstring (the first set), or continuing a parenthesised import or a decorator
    written over several lines (the second, by construct; a decorator only where `[audit]
    language_only` counts decorators)."""
    ctx, sha = s.ctx, s.e.sha
    strings: set[refactor.Line] = set()
    opened: dict[refactor.Line, str] = {}
    decorators = DECORATOR in ctx.cfg.language_only
    for k, h in enumerate(hunks):
        before, after = ctx.upstream_text(f"{sha}^", h.path) or "", ctx.upstream_text(sha, h.path) or ""
        for side, lines, start, text in (("old", h.old, h.old_start, before), ("new", h.new, h.new_start, after)):
            strings |= {(k, side, i) for i in hunks_mod.string_lines(lines, start, text)}
            opened |= {(k, side, i): "import" for i in hunks_mod.import_lines(lines, start, text)}
            if decorators:
                opened |= {(k, side, i): DECORATOR for i in hunks_mod.decorator_lines(lines, start, text)}
    return frozenset(strings), opened


def _no_op(rule: AuditRule, s: Subject) -> bool:
    """Every changed line of the mirrored code is a comment, a docstring, a language-only construct,
    or code that carries no behaviour (porttrack/evidence/refactor.py: moved, reworded, renamed, unused)."""
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if not hunks:
        return False
    ctx, sha = s.ctx, s.e.sha
    texts = refactor.Texts(lambda p: ctx.upstream_text(f"{sha}^", p), lambda p: ctx.upstream_text(sha, p))
    # a renamed file's old path is diffed too: `--no-renames` shows its content as removed there
    every = ctx.hunks(s.e, [*s.e.files, *sorted(set(s.e.renames.values()))]) or hunks
    strings, imports = _opened_above(s, hunks)
    whole_diff = functools.cache(lambda: _whole_diff(s, every))  # one git diff, for two finders at most
    explained = {
        **imports,
        **deprecations.explain(hunks, texts, every),
        **refactor.explain(hunks, texts, every, messages=False),
    }
    lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, explained, strings)
    if not lo.only and (whole := _whole_change(hunks, whole_diff)) is not None:
        # code moved to or from a file outside the queue's paths is moved all the same; the other
        # finders keep to the queue's files (a reader there that the change removes is live code)
        explained = {**refactor.moved(hunks, texts, whole), **explained}
        lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, explained, strings)
    if not lo.only and refactor.may_be_messages(hunks, texts, lo.unexplained):  # parse only where it may pay
        explained = {**refactor.explain_messages(hunks, texts, every), **explained}
        lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, explained, strings)
    # the finders that read only what the ones before left unexplained, each asked while lines remain
    finders: tuple[Callable[[], dict], ...] = (
        lambda: equivalents.explain(hunks, texts, lo.unexplained),  # calls pointed elsewhere
        lambda: equivalents.explain_inlined(hunks, texts, lo.unexplained),  # calls of what they return
        lambda: {} if lo.added else repeats.explain(hunks, texts, lo.unexplained),  # assignments made again
        lambda: switches.explain(hunks, texts, lo.unexplained, every, whole_diff),  # parameters that quiet logs
        lambda: wrappers.explain(hunks, texts, lo.unexplained),  # values wrapped to warn
        lambda: reflow.explain(hunks, ctx.cfg.language_only, lo.unexplained, texts, strings),  # code over other lines
    )
    for finder in finders:
        if not lo.only and (found := finder()):
            explained = {**found, **explained}
            lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, explained, strings)
    if not lo.only and not lo.added:  # only removals left: search the tree for their readers (a git grep)
        code = ctx.cfg.source_pathspecs
        texts = texts._replace(readers=lambda names: ctx.upstream_readers(f"{sha}^", names, code))
        explained = {**refactor.explain_removals(hunks, texts, every), **explained}
        lo = hunks_mod.language_only(hunks, ctx.cfg.language_only, explained, strings)
    if not lo.only:
        return False
    what = ", ".join(lo.constructs) or "comments and docstrings"
    s.ev.append(
        f"upstream diff {s.e.short} in {', '.join(s.mirrored)}: {len(hunks)} hunk(s), every changed line is "
        f"{what} (or a comment, docstring or blank); `[audit] language_only` lists the constructs, "
        "docs/audit.md the code that carries no behaviour"
    )
    return s.fire(rule, f"language-only change: {what}")


# An upstream subject is one line of under two hundred characters; a queue file is the checkout's,
# so a longer one is read no further than this, which keeps a pattern's backtracking bounded.
SUBJECT_READ = 1000


def _subject_says(rx: str, subject: str) -> str | None:
    """The words of `subject` (its first SUBJECT_READ characters) that the pattern `rx` matches;
    None where it matches none, or where `rx` is "" (the rule turned off)."""
    m = re.search(rx, subject[:SUBJECT_READ]) if rx else None
    return m.group(0) if m else None


def _mechanics_subject(rule: AuditRule, s: Subject) -> bool:
    """By the upstream's own account the change serves its tooling, not the program: its subject
    matches `[audit] mechanics_subject` (by default a type checker's fixes, kernels moved onto the
    libtorch stable ABI, or a PyTorch compiler tag that speaks of no fusing). A port runs no such
    tool, binds to no such ABI and runs no torch.compile."""
    rx = s.ctx.cfg.mechanics_subject
    if (said := _subject_says(rx, s.e.subject)) is None:
        return False
    s.ev.append(
        f"the subject of {s.e.short} names {said}, which matches `[audit] mechanics_subject` ({rx}): "
        "the upstream made the change for its own tooling or bindings, which a port does not share"
    )
    return s.fire(rule, f"the upstream's subject calls it a {said} change: its own tooling or bindings")


def _dead_subject(rule: AuditRule, s: Subject) -> bool:
    """By the upstream's own account the code the change removes runs nowhere: its subject matches
    `[audit] dead_subject` (by default one that removes or cleans up `dead` or `unused` code, or the
    remnants of a retired engine, `[V0 Deprecation]`). A port that has that code loses nothing by
    keeping it, and one that lacks it has nothing to do."""
    rx = s.ctx.cfg.dead_subject
    if (said := _subject_says(rx, s.e.subject)) is None:
        return False
    s.ev.append(
        f'the subject of {s.e.short} says "{said}", which matches `[audit] dead_subject` ({rx}): '
        "by the upstream's account nothing runs the code it removes"
    )
    return s.fire(rule, f'the upstream\'s subject says nothing runs the code it removes ("{said}")')


def _whole_diff(s: Subject, every: list) -> list | None:
    """The change's hunks in every source file, where it has more than `every` (the queue's paths
    hold only part of it); else None."""
    whole = s.ctx.hunks(s.e, list(s.ctx.cfg.source_pathspecs), keep=False)
    return whole if whole and len(whole) > len(every) else None


def _whole_change(hunks: list, whole_diff: Callable[[], list | None]) -> list | None:
    """The change's hunks in every source file (`whole_diff`), where a hunk of `hunks` may be moved
    code (refactor.may_move); else None."""
    if not any(refactor.may_move(x) for h in hunks for x in (h.old, h.new)):
        return None
    return whole_diff()


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
        bare = naming.parts(x)[-1]
        cls = _owner_class(x)
        if bare.startswith("__") or naming.is_logger(bare) or (cls is not None and not s.has_class(cls)):
            continue
        # an omission is of something the port lacks; a name it has (even as another file's code) is another thing
        if x in s.present or x in s.namesakes:
            continue
        names.append(bare)
    if not s.ctx.records.deferrals:
        return False
    # the counterparts, and where the port defines the symbol a record names: one parser's record
    # of its own hook is no record of another parser's hook of the same name
    counterparts = {pf for up in s.mirrored for pf in s.ctx.port_files(up)}
    where: dict[str, set[str]] = {}
    for x, files in _defining_by_symbol(s).items():
        where.setdefault(naming.parts(x)[-1], set(counterparts)).update(files)
    near = counterparts | _defining_files(s)
    qualified = [
        x
        for x in sorted(set(s.syms.added) | set(s.syms.changed) | set(s.syms.removed))
        if _owner_class(x) and not x.endswith("__") and x not in s.present and x not in s.namesakes
    ]
    found = s.ctx.records.deferral_for(names, [s.e.pr] if s.e.pr is not None else [], near, qualified, where=where)
    if found is None:
        return False
    rec, what = found
    s.ev.append(f"deferral record {rec.where} ({rec.deferral!r}) names {what}: {rec.text}")
    return s.fire(rule, f"the port records {what} as left out ({rec.deferral}) at {rec.where}")


def _cited(rule: AuditRule, s: Subject) -> bool:
    """A comment in the port's code cites the entry's PR (`#N`, `vllm#N`, `vllm/pull/N`) on a line no
    deferral word marks, and no deferral record names the PR: the port says where it carries the
    change, whatever names it spells it with."""
    pr, ctx = s.e.pr, s.ctx
    if pr is None or any(pr in r.prs for r in ctx.records.deferrals):  # a record that defers it wins
        return False
    code = list(ctx.cfg.code_scope)
    candidates = [r for r in ctx.records.citations if pr in r.prs and pathrules.under(r.path, code)]
    if not candidates:  # most entries: no pattern to compile (one per PR, so re's cache never helps)
        return False
    # `#N` alone, or the upstream's own `name#N` or `.../name/pull/N`: `pytorch#N` is another project's
    name = re.escape((ctx.queue.meta.upstream or ctx.cfg.upstream_name).rsplit("/", 1)[-1])
    cites = re.compile(
        rf"(?<![\w.\-/])#{pr}(?!\d)" + (rf"|(?<![\w.-]){name}#{pr}(?!\d)|/{name}/pull/{pr}(?!\d)" if name else "")
    )
    rec = next((r for r in candidates if cites.search(r.text)), None)
    if rec is None:
        return False
    return s.fire(rule, f"the port's code cites #{pr} at {rec.where}, with no deferral word: it carries the change")


QUOTED = 3  # lines between a port comment and a deferral record that make it a quote of what is left out


def _beside_deferral(ctx: _Ctx, path: str, line: int) -> bool:
    """Does a deferral record stand within QUOTED lines of the port's line: a quote of what is left out?"""
    return any(r.path == path and abs(r.line - line) <= QUOTED for r in ctx.records.deferrals)


def _echoed(rule: AuditRule, s: Subject) -> bool:
    """The port's comments repeat, word for word, most of the comment blocks the change adds to its
    mirrored code (text new upstream, not quoted beside a deferral record): the port copied the
    change together with its explanation, whatever it named the code."""
    ctx, e = s.ctx, s.e
    blocks = echoes.added_blocks(ctx.commented_hunks(e, s.mirrored) or [])
    if not blocks:
        return False
    # the port's comments first (an index lookup); git is asked whether a line is new only where
    # enough blocks are repeated for the answer to matter
    repeated = [b for b in blocks if echoes.echo(b, ctx.port_comments, lambda lines: True) is not None]
    if len(repeated) * 2 <= len(blocks):
        return False
    found: list[tuple[echoes.Block, tuple[tuple[str, ...], str, int]]] = []
    for b in repeated:
        hit = echoes.echo(b, ctx.port_comments, _new_upstream(ctx, e.sha, b))
        if hit is not None and not _beside_deferral(ctx, hit[1], hit[2]):
            found.append((b, hit))
    if len(found) * 2 <= len(blocks):
        return False
    for b, (window, where, line) in found:
        s.ev.append(
            f"the comment {e.short} adds at {b.path}:{b.line} is in the port at {where}:{line}: {' '.join(window)!r}"
        )
    return s.fire(
        rule,
        f"the port's comments repeat {len(found)} of the {len(blocks)} comment block(s) the change adds "
        f"(first at {found[0][1][1]}:{found[0][1][2]})",
    )


MESSAGES = 256  # the messages of a change that count: their texts go on git's command line


def _quoted(rule: AuditRule, s: Subject) -> bool:
    """The port's code holds, word for word, most of the messages the change's code writes new
    (the sentences of the string literals it adds, not upstream's anywhere before the change, not
    quoted beside a deferral record): the port carries the change's checks with their wording,
    whatever it named the code."""
    ctx, e = s.ctx, s.e
    messages = echoes.added_messages(ctx.commented_hunks(e, s.mirrored) or [])[:MESSAGES]
    # git is asked only for a text whose every word the port has, and upstream only once one is held
    candidates = tuple(m.text for m in messages if ctx.port_may_hold(m.text))
    held: dict[str, tuple[str, int]] = {}
    for text, hits in ctx.port_holding(candidates).items():
        quoted = (hit for hit in hits if not _beside_deferral(ctx, hit[0], hit[1]))
        if (first := next(quoted, None)) is not None:
            held[text] = first[:2]
    if not held:
        return False
    old = ctx.upstream_holds(f"{e.sha}^", tuple(m.text for m in messages), "")
    new = [m for m in messages if old is not None and m.text not in old]
    found = [m for m in new if m.text in held]
    if not new or len(found) * 2 <= len(new):
        return False
    for m in found:
        path, line = held[m.text]
        s.ev.append(f"the message {e.short} writes at {m.path}:{m.line} is in the port at {path}:{line}: {m.text!r}")
    path, line = held[found[0].text]
    return s.fire(
        rule,
        f"the port's code holds {len(found)} of the {len(new)} new message(s) the change writes (first at {path}:{line})",
    )


def _written_from(rule: AuditRule, s: Subject) -> bool:
    """The change creates upstream files that port files name as their source (a provenance header
    whose pins none is placed before the entry), those files hold most of the code the change adds,
    and no deferral record in the port's files names what the change adds or changes: a file that
    exists only from this change on was the port's source, so the port was written from it as this
    change left it or later, however it named the code."""
    ctx, e = s.ctx, s.e
    # the code a change adds, not its tests: a port's test that cites upstream's says what it checks
    hunks = [h for h in ctx.hunks(e, s.mirrored) or [] if ctx.is_code(h.path)]
    created = {h.path for h in hunks} - {h.path for h in hunks if h.old_start or h.old_len}
    umap, pins = ctx.provenance()
    sources: dict[str, list[str]] = {}
    for up in sorted(created):
        ports = umap.get(up, [])
        if ports and not any(pin_before(p, ctx.queue, ctx.cfg, e) for f in ports for p in pins.get(f, [])):
            sources[up] = ports
    if not sources:
        return False
    if _leaves_part_out(s, {f for ports in sources.values() for f in ports}):
        return False
    total = sum(1 for h in hunks for x in h.new if x.strip())
    written = sum(1 for h in hunks if h.path in sources for x in h.new if x.strip())
    if written * 2 <= total:
        return False
    for up, ports in sources.items():
        s.ev.append(f"{e.short} creates {up}; the port's {', '.join(ports)} name it as their source")
    return s.fire(
        rule,
        f"the port was written from {', '.join(sources)}, which this change creates ({written} of its {total} added code lines)",
    )


def _leaves_part_out(s: Subject, port_files: set[str]) -> bool:
    """Does a deferral record in `port_files` name what the change adds or changes, or its PR? The
    port's source files saying they left part of the change out: the record rules judge that. A
    deviation there says the port carries that part its own way, as a port written from the file does."""
    own = sorted(set(s.syms.added) | set(s.syms.changed))
    prs = [s.e.pr] if s.e.pr is not None else []
    return s.ctx.records.omissions().deferral_for([naming.parts(x)[-1] for x in own], prs, port_files) is not None


def _replaced(rule: AuditRule, s: Subject) -> bool:
    """No mirrored code file has a port counterpart, and a later upstream commit deleted each and
    put a file in its place (evidence/successors.py) that port files name as their source, none pinned
    before the entry, with no deferral record there naming what the change adds or changes: the new
    file exists only from that commit on, so the port was written from the upstream past this change,
    and what became of the change is in the file it follows."""
    ctx, e = s.ctx, s.e
    code = [f for f in s.mirrored if ctx.is_code(f)]
    if not code or any(ctx.port_files(f) for f in code) or ctx.cfg.upstream_repo is None:
        return False
    umap, pins = ctx.provenance()
    found: dict[str, tuple[str, str, list[str]]] = {}
    for up in code:
        for commit, new in ctx.successors().get(up, []):
            ports = umap.get(new, [])
            if (
                not ports
                or commit == e.sha
                or any(pin_before(p, ctx.queue, ctx.cfg, e) for f in ports for p in pins.get(f, []))
            ):
                continue
            if gitio.is_ancestor(Path(ctx.cfg.upstream_repo), e.sha, commit):
                found[up] = commit, new, ports
                break
        if up not in found:
            return False
    if _leaves_part_out(s, {f for _, _, ports in found.values() for f in ports}):
        return False
    for up, (commit, new, ports) in found.items():
        s.ev.append(
            f"{up}: the upstream deleted it at {commit[:10]}, after {e.short}, and added {new} in its place; "
            f"the port's {', '.join(ports)} name {new} as their source"
        )
    return s.fire(
        rule,
        f"the port was written from {', '.join(sorted({new for _, new, _ in found.values()}))}, which the upstream "
        f"put in place of {', '.join(found)} after this change",
    )


ASKED = 64, 240  # the most lines of one block, and the longest line, one `git grep` is asked about


def _new_upstream(ctx: _Ctx, sha: str, block: echoes.Block) -> Callable[[list[str]], bool]:
    """Does one of the lines given stand nowhere in the source files of the block's folder (its
    nearest parent, for a folder the change makes) before the change? A licence header its
    neighbours carry, or a comment moved within the folder, stands there. One `git grep` of the
    block's lines, asked on the first need. A line past ASKED (a long licence, a pasted blob) is
    not asked and counts as old, as every line does without an upstream."""
    lines = sorted({text for _, text in block.lines})
    asked = tuple(x for x in lines if len(x) <= ASKED[1])[: ASKED[0]]

    @functools.cache
    def new() -> frozenset[str]:
        found = ctx.upstream_holds(f"{sha}^", asked, block.path.rpartition("/")[0])
        return frozenset() if found is None else frozenset(asked) - found

    return lambda spanned: any(x in new() for x in spanned)


def _unmapped(rule: AuditRule, s: Subject) -> bool:
    """Every mirrored code (or data) file lacks a port counterpart, and none of the entry's own symbols is in the port."""
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
            from porttrack.audit.registry import rule_by_id  # the registry imports this module

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
