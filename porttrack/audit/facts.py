"""What audit's rules read, computed once per subject: how each hunk of the change stands in the
port (content), and the entries it waits on (blockers). Rules are predicates over these; no rule
calls another rule."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from porttrack.evidence import compare as compare_mod, hunks as hunks_mod, naming, shapes
from porttrack.model import Entry, Gate
from porttrack.audit.results import _CODE_KINDS, Result, _definition, _hits, _owner_class
from porttrack.audit.subject import Judged, Subject, _changed, _Ctx, spelling_pattern


# ---------------------------------------------------------------- content: the hunks against the port


def _content_states(s: Subject) -> list[Judged]:
    """Hunk by hunk (once per subject), the change's telling tokens (identifiers in any spelling,
    literals) against the port files that map its file and the files defining its symbols; each
    hunk's state goes into the evidence. Neutral hunks (nothing telling) are left out, unless each of
    their changed lines names something the port lacks (`reaching`)."""
    if s.content is not None:
        return s.content
    s.content = []
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if not hunks:
        return s.content
    s.probe()
    defining = _defining_files(s)
    local_names: dict[str, frozenset[str]] = {}
    for h in hunks:
        if not s.ctx.is_code(h.path):
            continue
        files = sorted(set(s.ctx.port_files(h.path)) | defining) if h.path not in s.unmapped else []
        port = s.ctx.port_tokens_of(tuple(files))
        # a file the change adds or deletes has no other side: its every token is new (or gone)
        before = s.ctx.upstream_tokens(f"{s.e.sha}^", h.path) or frozenset()
        after = s.ctx.upstream_tokens(s.e.sha, h.path) or frozenset()
        texts = s.ctx.upstream_text(f"{s.e.sha}^", h.path) or "", s.ctx.upstream_text(s.e.sha, h.path) or ""
        read = hunks_mod.without_string_lines(h, *texts)
        if h.path not in local_names:
            local_names[h.path] = _plain_locals(s, h.path, hunks, texts[1])
        judge = functools.partial(
            compare_mod.compare,
            read,
            constructs=s.ctx.cfg.language_only,
            before=before,
            unspoken=local_names[h.path],
            language=hunks_mod.stdlib_names(texts[0]) | hunks_mod.stdlib_names(texts[1]),
        )
        st = judge(port, after=after)
        if st.old_found and (still := _still_used_elsewhere(s, h.path, files, st.old_found)):
            # an old-side token another upstream file of the compared port files still uses after
            # the change is in the port because of that file: it says nothing of this hunk's old side
            st = judge(port, after=after | still)
        if h.path in s.unmapped and (twins := _twins(s, h, defining)):
            # a twin with this hunk's new side has it ported; one without it says nothing, since
            # upstream changed only this copy
            twin = judge(s.ctx.port_tokens_of(tuple(twins)), after=after)
            if twin.state == "ported":
                files, st = twins, twin
        if st.state == "neutral" and (
            found := compare_mod.rows_found(read, files, s.ctx.port_rows, s.ctx.cfg.language_only)
        ):
            st = st._replace(state="ported", new_found=sorted(set().union(*(row for row, _ in found))))
            where = ", ".join(f"{pf}:{n}" for _, (pf, n) in found[:3])
            s.ev.append(
                f"hunk {h.path}:{h.new_start} adds only rows of literals the file used before, and each is "
                f"found whole on one line of the port ({where})"
            )
        if st.state == "neutral" and (held := _shapes_found(s, read, files)):
            # a line rewritten in place and found whole tells as much as a name new to the file
            st = st._replace(state="ported", new_found=[" ".join(x) for x, _ in held])
            s.ev.append(
                f"hunk {h.path}:{h.new_start} tells nothing by its tokens but rewrites lines in place, and the port "
                f"holds each new line's shape and none of the old ({', '.join(f'{pf}:{n}' for _, (pf, n) in held[:3])})"
            )
        if st.state != "neutral":
            s.content.append(Judged(h, st.state, st, bool(files)))
        elif lacking := _every_line_lacks(s, h):
            # nothing new to tell by, but each changed line reaches for something the port lacks
            s.content.append(Judged(h, "reaching", st._replace(new_missing=lacking), bool(files)))
            s.ev.append(
                f"hunk {h.path}:{h.new_start} changes only lines that each name something the port's code names "
                f"nowhere ({', '.join(lacking[:6])}): they serve what the port lacks"
            )
        elif holder := _held_by_lacked(s, h):
            s.content.append(Judged(h, "reaching", st._replace(new_missing=[naming.parts(holder)[-1]]), bool(files)))
            s.ev.append(
                f"hunk {h.path}:{h.new_start} changes only lines inside {holder}, which the port's code names "
                "nowhere: they have no place in the port"
            )
        where = f"{h.path}:{h.new_start}" + (f" vs {', '.join(files[:4])}" if files else " (no port counterpart)")
        s.ev.append(
            f"hunk {where}: {st.state}; new side found {st.new_found[:6]} missing {st.new_missing[:6]}; "
            f"old side still there {st.old_found[:6]} gone {st.old_missing[:6]}"
        )
    s.content = _superseded(s, _guards(s, s.content))
    return s.content


def _shapes_found(s: Subject, h, files: list[str]) -> list[tuple[shapes.Shape, tuple[str, int]]]:
    """A hunk that tells nothing by its tokens may still rewrite lines in place (`==` to `<=`):
    where the port `files` it is compared with hold each new line's shape and no old one's, the
    places that hold them (porttrack/evidence/shapes.py)."""
    constructs = s.ctx.cfg.language_only
    pair = shapes.rewritten(hunks_mod.code_lines(h.old, constructs), hunks_mod.code_lines(h.new, constructs))
    if pair is None:
        return []
    # a file holds a line's shape only where it holds the line's every name: only such files are shaped
    wanted = [set(shapes.names(x)) for x in pair[0]]
    files = [pf for pf in files if any(w <= s.ctx.port_tokens(pf) for w in wanted)]
    return shapes.found(pair, files, s.ctx.port_shapes) if files else []


def _still_used_elsewhere(s: Subject, path: str, files: list[str], tokens: list[str]) -> frozenset[str]:
    """Those of `tokens` that another upstream file the port files `files` port still uses at the
    entry's commit."""
    left, out = set(tokens), set()
    # only the port files that hold one of the tokens can owe it to another upstream file
    holding = [pf for pf in files if any(compare_mod.port_form(t) in s.ctx.port_tokens(pf) for t in left)]
    for up in sorted({up for pf in holding for up in s.ctx.cites(pf)} - {path}):
        out |= left & (s.ctx.upstream_tokens(s.e.sha, up) or frozenset())
        if out == left:
            break
    return frozenset(out)


def _defining_files(s: Subject) -> set[str]:
    """The port files that define the entry's symbols (see `_defining_by_symbol`)."""
    return set().union(*_defining_by_symbol(s).values())


def _defining_by_symbol(s: Subject) -> dict[str, set[str]]:
    """Per symbol of the entry, the port files that define it. A member counts only in a file that
    names its class: many classes define a `step`, and another class's is not this one's."""
    if s.defining is not None:
        return s.defining
    s.probe()
    out: dict[str, set[str]] = {}
    for x in s.probed:
        files = {h.path for h in _hits(s.counts[x], ("definition",))}
        cls = _owner_class(x)
        if cls is not None and files:
            files &= {h.path for h in _hits(s.ctx.probes.count(cls), _CODE_KINDS)}
        out[x] = files
    s.defining = out
    return out


def _twins(s: Subject, h, defining: set[str]) -> list[str]:
    """For a hunk in a file with no port counterpart: the port files, among those defining the
    entry's symbols, that map another upstream file defining the same top-level class or function
    that holds the hunk. Upstream then has two implementations of one thing (a v1 and a v2 model
    runner, say) and the port has the one those files map."""
    after = s.ctx.upstream_text(s.e.sha, h.path) or ""
    holder = hunks_mod.def_above(after, h.new_start - 1) or hunks_mod.def_above(
        s.ctx.upstream_text(f"{s.e.sha}^", h.path) or "", h.old_start - 1
    )
    if not holder:
        return []
    name = naming.parts(holder)[0]
    top = re.compile(rf"^(?:class|def|async\s+def)\s+{re.escape(name)}\b", re.M)
    # the port's copy names what it copies: a file that never names it reads no upstream file here
    named = [pf for pf in sorted(defining) if naming.norm(name) in s.ctx.port_tokens(pf)]
    return [
        pf
        for pf in named
        if any(up != h.path and top.search(s.ctx.upstream_text(f"{s.e.sha}^", up) or "") for up in s.ctx.cites(pf))
    ]


def _superseded(s: Subject, judged: list[Judged]) -> list[Judged]:
    """Gap hunks whose every missing new name is gone from its upstream file by the queue's target:
    a later commit rewrote those lines, and a port that matches the later form need not port this
    one's (`superseded`). They count neither for nor against the rest."""
    target = s.ctx.queue.meta.target
    if not target or not any(j.kind == "gap" for j in judged):
        return judged
    out = []
    for j in judged:
        names = _names(j.state.new_missing)
        # a target or file upstream cannot show says nothing of a later form: the hunk stays a gap
        later = s.ctx.upstream_text(target, j.hunk.path) if j.kind == "gap" and names and j.hunk.path else None
        if later is not None and not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", later) for n in names):
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} adds {', '.join(names)}, which upstream no longer has "
                f"at the queue's target {target[:10]}: a later commit rewrote these lines (superseded)"
            )
            j = j._replace(kind="superseded")
        out.append(j)
    return out


def _guards(s: Subject, judged: list[Judged]) -> list[Judged]:
    """Gap hunks that are no work for this port: a block guarded by a name that this change does
    not define and the port has nowhere (`guarded`: it can never run here); then hunks whose every
    new name the port lacks serves only such blocks or hunks the port lacks altogether (`plumbing`)."""
    ctx = s.ctx
    added = _added_lines(s)
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
    new_tokens = [hunks_mod.tokens(j.hunk.new) for j in out if j.mapped and j.kind in ("guarded", "absent")]
    # a name the guarded code reads through a string (`getattr(self, "spare_cache")`) is read there too
    unreachable = set().union(*new_tokens, *(hunks_mod.spelled_names(t) for t in new_tokens))
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
        if j.kind != "gap":
            continue
        if _foreign(s, j):
            names = _names(j.state.new_missing)
        elif (
            not j.state.old_found
            and (holder := _held_by_lacked(s, j.hunk))
            # a name the port has, on lines of a function it lacks, may be that function's job done
            # elsewhere; unless the port records the function as left out
            and (not j.state.new_found or _left_out(s, naming.parts(holder)[-1]))
        ):
            names = [holder]
            j = j._replace(state=j.state._replace(new_missing=[naming.parts(holder)[-1]]))  # its gate's name
        elif not j.state.old_found and (helper := _helper_only_for_lacked(s, j.hunk)):
            names = [helper]
            j = j._replace(state=j.state._replace(new_missing=[helper]))
        elif (
            not j.state.old_found and not _names(_found_beyond_locals(s, j)) and (names := _every_line_lacks(s, j.hunk))
        ):
            j = j._replace(state=j.state._replace(new_missing=names))  # what its gates name
        else:
            continue
        s.ev.append(
            f"hunk {j.hunk.path}:{j.hunk.new_start} touches only lines that serve {', '.join(names)}, which the "
            "port's code names nowhere: the lines it changes belong to something the port lacks"
        )
        out[i] = j._replace(kind="foreign")
    return out


_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")


def _helper_only_for_lacked(s: Subject, h) -> str | None:
    """The function a hunk adds whole (no old side, its first code line the `def`, a name the file
    did not define before), when every line of the change that calls it lies where the port lacks:
    a helper only code the port lacks calls serves that code, whatever names its body shares."""
    code = [x for x in h.new if x.strip() and not x.lstrip().startswith(("#", "@"))]
    if any(x.strip() for x in h.old) or not code or not (m := _DEF.match(code[0])):
        return None
    name = m.group(1)
    before = s.ctx.upstream_text(f"{s.e.sha}^", h.path) or ""
    if re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\b", before, re.M):
        return None
    return name if _read_only_where_port_lacks(s, name) else None


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]")
_JUMP = re.compile(r"^\s*(?:break|continue|return|raise|yield)\b")
# a local's empty start, its annotation aside: `x: T | None = None`, `n = 0`, `rows = []`
_PLACEHOLDER = re.compile(
    r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*(?:None|True|False|-?\d+|\[\]|\{\}|\(\)|\"\"|'')\s*(?:#.*)?$"
)
_HEADER = re.compile(r"^\s*(?:if|elif|else|for|while|with|try|except|finally|def|async\s+def|class)\b.*:\s*(?:#.*)?$")


def _every_line_lacks(s: Subject, h) -> list[str]:
    """The names the port lacks when every changed code line of a hunk (either side) serves one of
    them, else []: such lines serve something the port lacks, whatever function holds them. A line
    serves a name it names, a local set from such a line, or the block header above it that names
    one; a header over changed lines that names none does what its body does. Names an entry of the
    queue adds, or the change defines on a surface the port has, do not count; nor do Python's
    builtins, what the file imports from outside its package, and language-only constructs."""
    ctx, lacking, seen = s.ctx, [], False
    before, after = ctx.upstream_text(f"{s.e.sha}^", h.path) or "", ctx.upstream_text(s.e.sha, h.path) or ""
    package = h.path.split("/", 1)[0]
    outside = hunks_mod.outside_names(before, package) | hunks_mod.outside_names(after, package)
    sides = [(h.old, h.old_start, before), (h.new, h.new_start, after)]
    lines = [(x, text, start + i) for side, start, text in sides for i, x in enumerate(side)]
    # a line of literals inside brackets is a row of a table: code, though it starts with a string
    code = [x for x in lines if hunks_mod.is_code_line(x[1], x[2]) or _literal_row(*x)]
    tainted: dict[str, list[str]] = {}  # locals set from what the port lacks -> what they come from
    asked: set[tuple[str, str]] = set()
    # an import names what the code reads; the other constructs carry no behaviour to serve anything
    mechanics = [re.compile(rx) for name, rx in ctx.cfg.language_only.items() if name != "import"]
    # (side's text, indent, what it names) of a header that names what the port lacks
    covered: tuple[str, int, list[str]] | None = None
    placeholders: dict[str, None] = {}  # locals given an empty start, ordered
    for k, (line, text, number) in enumerate(code):
        indent = len(line) - len(line.lstrip())
        if covered is not None and covered[0] is text and indent > covered[1]:
            if m := _ASSIGN.match(line):  # a local set in such a block comes from what the port lacks
                tainted.setdefault(m.group(1), covered[2])
            continue  # the body of a block whose header serves what the port lacks
        covered = None
        if any(rx.search(line.strip()) for rx in mechanics):
            continue
        names = hunks_mod.feature_names(line, outside)
        missing = [n for n in names if _lacked_here(s, n)]
        for local in _locals_read(line, names, outside):
            # a local the port names too is a thing it has, however upstream builds it
            if local not in tainted and (text, local) not in asked and ctx.port_lacks(local):
                asked.add((text, local))
                start = h.old_start if text is before else h.new_start
                if came := _from_lacked(s, hunks_mod.assigned_above(text, start - 1, local), outside):
                    tainted[local] = came
        reads = sorted(t for t in hunks_mod.tokens([line]) if t in tainted)  # a set: sorted, so evidence is stable
        missing += [n for t in reads for n in tainted[t] if n not in missing]
        if _heads_a_changed_body(code, k):
            if missing or reads:
                covered, seen = (text, indent, missing), True
                lacking += [n for n in missing if n not in lacking]
            continue
        if not missing and not reads and _JUMP.match(line):
            return []  # `break`, `return`: control flow of its own
        if not missing and not reads and (m := _PLACEHOLDER.match(line)) is not None:
            # `x: T | None = None`: an empty start, which serves what the local is later set from
            placeholders.setdefault(m.group(1), None)
            continue
        if not names and not reads:
            if row := _row_names(s, line):
                seen = True  # a row of a table (`"NewNetForLM": ("new_net", "NewNetForLM"),`)
                lacking += [n for n in row if n not in lacking]
                continue
            if hunks_mod.continues_statement(text, number) or not any(
                t[0].isalnum() or t[0] == "_" for t in hunks_mod.tokens([line])
            ):
                continue  # an argument of a call that spans lines, `)`, `else:`, `pass`: part of another line
            return []  # `return n + 1`: behaviour of its own, on no feature at all
        seen = True
        if (not missing and not reads) or _defines_on_port_surface(s, h.path, line):
            return []
        if m := _ASSIGN.match(line):
            tainted[m.group(1)] = missing
        lacking += [n for n in missing if n not in lacking]
    if any(local not in tainted for local in placeholders):
        return []  # a start never set here from what the port lacks is behaviour of its own
    return lacking if seen else []


def _lacked_here(s: Subject, name: str) -> bool:
    """Does a changed line naming `name` serve what the port lacks through it: a name the port's code
    names nowhere, that no other entry of the queue adds (the blocked rule's), and that the change
    does not define on a surface the port has. A name this entry itself adds in a file the port maps
    is judged by where the change reads it, as a function older than the change may be the port's
    under a name of its own (`_read_only_where_port_lacks`'s `new`)."""
    own = s.ctx.adders.get(name) == s.e.n and _added_where_mapped(s, name)
    if name in s.ctx.adders and not own:
        return False
    return s.ctx.port_lacks(name) and not _defined_on_port_surface(s, name, new=own)


def _added_where_mapped(s: Subject, name: str) -> bool:
    """Does this change define `name` in a file the port maps? One it adds only in files without a
    counterpart is `untouched`'s to judge."""
    return any(
        h.path not in s.unmapped and s.ctx.maps_to_port(h.path) and hunks_mod.defines(h.new, name)
        for h in s.ctx.hunks(s.e, s.e.files) or []
    )


@functools.lru_cache(maxsize=256)
def _literal_tokens(line: str) -> frozenset[str] | None:
    """The tokens of a line (its trailing comment aside) made of literals and punctuation only; else
    None. Kept: the row test and the row's names both read the same line."""
    toks = hunks_mod.tokens([hunks_mod.uncommented(line)])
    return None if any(t[0].isalnum() or t[0] == "_" for t in toks) else frozenset(toks)


def _literal_row(line: str, text: str, number: int) -> bool:
    """Is this line, inside brackets opened above it, made of literals and punctuation only?"""
    return (
        line.lstrip()[:1] in "\"'"
        and (toks := _literal_tokens(line)) is not None
        and sum(t[:1] in "\"'" for t in toks) >= 2
        and hunks_mod.continues_statement(text, number)
    )


def _row_names(s: Subject, line: str) -> list[str]:
    """The names a line of literals only spells in its strings, when each is one the port lacks and
    none is added by another entry, nor by this one outside files the port has no counterpart of:
    such a row registers, by name, something the port does not have. Else []."""
    toks = _literal_tokens(line)
    # in the line's order: a set's order changes from run to run, and the names go into evidence
    ordered = sorted(toks or (), key=lambda t: (line.find(t), t))
    spelled = [q for t in ordered if t[:1] in "\"'" and len(q := t[1:-1]) >= 4 and q.isidentifier()]
    for n in spelled:
        if not s.ctx.port_lacks(n) or (n in s.ctx.adders and not _added_where_unmapped(s, n)):
            return []
    return spelled


def _added_where_unmapped(s: Subject, name: str) -> bool:
    """Does this entry add `name`, in a file of it that the port has no counterpart of?"""
    return s.ctx.adders.get(name) == s.e.n and any(
        h.path in s.unmapped and hunks_mod.defines(h.new, name) for h in s.ctx.hunks(s.e, s.e.files) or []
    )


def _locals_read(line: str, names: list[str], outside: frozenset[str]) -> list[str]:
    """The bare lowercase names a code line reads that are no feature name of it: its locals."""
    code = hunks_mod.feature_code(line)
    return [
        t
        for t in dict.fromkeys(re.findall(r"(?<![\w.])[a-z_]\w*\b(?!\s*(?:\(|=(?!=)))", code))
        if t not in names and not hunks_mod.language_word(t, outside)
    ]


def _from_lacked(s: Subject, line: str | None, outside: frozenset[str]) -> list[str]:
    """What the port lacks that the binding `line` (above the hunk, unchanged) reads, when every
    feature name it reads, or attribute it spells in a string (`getattr(cfg, "scheme", None)`), is
    one; else []. A local bound so holds that thing, and a changed line testing it serves it."""
    if line is None:
        return []
    value = line.split("=", 1)[1]
    names = [*hunks_mod.feature_names(value, outside), *hunks_mod.spelled_names(hunks_mod.tokens([value]))]
    ctx = s.ctx
    lacked = [n for n in dict.fromkeys(names) if n not in ctx.adders and ctx.port_lacks(n)]
    return lacked if names and len(lacked) == len(set(names)) else []


def _held_by_lacked(s: Subject, h) -> str | None:
    """The function that holds every changed line of a hunk, on both sides, when the port lacks it:
    a function (or method) the file had before the change, that no entry of the queue adds and the
    port's code names nowhere in any spelling. Lines inside it have no place in the port, whatever
    they name; None when the lines lie in no one such function."""
    if not h.path.endswith(".py"):
        return None
    before = s.ctx.upstream_text(f"{s.e.sha}^", h.path) or ""
    after = s.ctx.upstream_text(s.e.sha, h.path) or ""
    # each side's first and last changed lines (0-based rows)
    rows = [(text, row) for text, start, n in ((before, h.old_start, len(h.old)), (after, h.new_start, len(h.new)))
            if n for row in (start - 1, start - 2 + n)]  # fmt: skip
    held = {hunks_mod.def_above(text, row) for text, row in rows}
    qualified = held.pop() if len(held) == 1 else None
    if qualified is None:
        return None
    bare = naming.parts(qualified)[-1]
    # `[naming] renames` names a function the port has under another name
    if bare.startswith("__") or len(bare) < 4 or bare in s.ctx.adders or {bare, qualified} & s.ctx.cfg.renames.keys():
        return None
    if not re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(bare)}\b", before, re.M) or not s.ctx.port_lacks(bare):
        return None  # a function new in this change is judged by its lines
    # a comment naming it is the port's counterpart under another name, unless it records it as left out
    return qualified if _left_out(s, bare) or not s.ctx.port_cites(bare) else None


def _left_out(s: Subject, name: str) -> bool:
    """Does a deferral record of the port name this function?"""
    return any(naming.norm(name) in r.names for r in s.ctx.records.deferrals)


def _heads_a_changed_body(code: list[tuple[str, str, int]], k: int) -> bool:
    """Is code line k a block header (`if x:`, `else:`) whose next changed line, on the same side, is
    its body? A header over unchanged lines is the change itself and is judged by its own names."""
    line, text, number = code[k]
    if not _HEADER.match(line) or hunks_mod.continues_statement(text, number) or k + 1 == len(code):
        return False
    body, body_text, body_number = code[k + 1]
    indent = len(line) - len(line.lstrip())
    return body_text is text and body_number > number and len(body) - len(body.lstrip()) > indent


_DEFINITION = re.compile(r"^(\s*)(?:(?:async\s+)?def\s+|class\s+|self\.)?([A-Za-z_]\w*)\s*(?:\(|:[^=]|=[^=])")


def _defines_on_port_surface(s: Subject, path: str, line: str) -> bool:
    """Does this line define a new member of a class the port has, or a new top-level name of a file
    it maps? A new field of the port's class is work whatever its type names; a local is no surface,
    and a member the file had before (a changed signature) is judged by what its line names."""
    m = _DEFINITION.match(line)
    if m is None:
        return False
    ctx, name = s.ctx, m.group(2)
    owners = ctx.upstream_members(s.e.sha, path).get(name, set())
    new = owners - ctx.upstream_members(f"{s.e.sha}^", path).get(name, set())
    if new:
        return any(not ctx.port_lacks(c) for c in new) and not _read_only_where_port_lacks(s, name)
    before = ctx.upstream_text(f"{s.e.sha}^", path) or ""
    had = re.search(rf"^(?:(?:async\s+)?def\s+|class\s+){re.escape(name)}\b|^{re.escape(name)}\s*[:=]", before, re.M)
    return not owners and not m.group(1) and had is None and _defined_on_port_surface(s, name)


def _plain_locals(s: Subject, path: str, hunks: list[hunks_mod.Hunk], after_text: str) -> frozenset[str]:
    """The names the change's new lines in `path` bind as plain locals inside a function (`n = ...`,
    indented) and the file reads nowhere as an attribute (`.n`) or a keyword (`n=`), no member of an
    upstream class: a local's name is the upstream author's choice, which a port may spell its own
    way, so the port lacking it says nothing (`compare`'s `unspoken`)."""
    members = s.ctx.upstream_members(s.e.sha, path)
    bound = _bound_locals([line for h in hunks if h.path == path for line in h.new], members)
    return frozenset(n for n in bound if not re.search(rf"\.{re.escape(n)}\b|[(,]\s*{re.escape(n)}=(?!=)", after_text))


def _bound_locals(lines: list[str], members: dict[str, set[str]]) -> set[str]:
    """The bare names these lines assign inside a function (indented `n = ...`), upstream class
    members left out."""
    return {
        m.group(1) for line in lines if line[:1].isspace() and (m := _ASSIGN.match(line)) and m.group(1) not in members
    }


def _names(tokens: list[str]) -> list[str]:
    """The identifiers among a hunk's telling tokens (a literal is a value a name takes)."""
    return [t for t in tokens if t[0].isalpha() or t[0] == "_"]


def _found_beyond_locals(s: Subject, j: Judged) -> list[str]:
    """The hunk's new-side tokens the port has, less the bare names its own new lines bind inside a
    function: a local's name is the upstream's choice, so a port that spells the same word for
    something else (`tile_m` of a kernel) proves nothing of the lines that set it."""
    bound = _bound_locals(j.hunk.new, s.ctx.upstream_members(s.e.sha, j.hunk.path))
    return [t for t in j.state.new_found if t not in bound]


def _foreign(s: Subject, j: Judged) -> bool:
    """A gap hunk whose every telling name, on the changed lines, the port's code names nowhere, in
    any spelling, and no entry of the queue adds, while nothing of its old side is there: the
    enclosing function may be the port's, but the lines changed serve something the port lacks. A name the change itself defines on a
    surface the port has (a new field of a class it has, a function in a file it maps) is new
    behaviour for that surface: work, not foreign."""
    names = _names(j.state.new_missing)
    if not names or j.state.old_found or _found_beyond_locals(s, j):
        return False
    # a name an entry of this queue adds is one the port may be about to get: the blocked rule's
    return all(n not in s.ctx.adders and s.ctx.port_lacks(n) and not _defined_on_port_surface(s, n) for n in names)


def _defined_on_port_surface(s: Subject, name: str, new: bool = False) -> bool:
    """Does this change define `name` where the port has the surface: in a class the port has, or at
    the top of a file with a port counterpart? `new`: see `_read_only_where_port_lacks`."""
    ctx = s.ctx
    for h in ctx.hunks(s.e, s.e.files) or []:
        if not hunks_mod.defines(h.new, name):
            continue
        owners = ctx.upstream_members(s.e.sha, h.path).get(name, set())
        if owners:
            if any(not ctx.port_lacks(c) for c in owners) and not _read_only_where_port_lacks(s, name, new):
                return True
        elif h.path not in s.unmapped and ctx.maps_to_port(h.path):
            return not _read_only_where_port_lacks(s, name, new)
    return False


def _read_only_where_port_lacks(s: Subject, name: str, new: bool = False) -> bool:
    """Is every line of the change that reads `name` (not one that defines or sets it) in a file with
    no port counterpart, inside a function the port lacks, or under a switch it lacks, with at least
    one such line? A new member read only there serves what the port lacks, though its class is the
    port's; a member the change never reads may serve anyone, and stays work. `new`, for a name the
    queue's adders credit to this very entry: a function older than the change that the port names
    nowhere may be one it holds under a name of its own, so only a function the change adds counts."""
    if (name, new) not in s.read_only_lacking:
        s.read_only_lacking[(name, new)] = _reads_only_where_port_lacks(s, name, new)
    return s.read_only_lacking[(name, new)]


def _reads_only_where_port_lacks(s: Subject, name: str, new: bool) -> bool:
    reads = _reader(name)
    lines = [
        (h.path, h.new_start + i, line)
        for h in s.ctx.hunks(s.e, s.e.files) or []
        for i, line in enumerate(h.new)
        if reads(line)
    ]
    # a reader the commit adds outside the queue's paths, in code the port has, reads it too; one in
    # a file the port has no counterpart of says nothing, as the port may hold that code elsewhere
    beyond = [
        (h.path, h.new_start + i, line)
        for h in s.ctx.hunks(s.e, ["."]) or []
        if h.path not in s.e.files and s.ctx.is_code(h.path) and s.ctx.port_files(h.path)
        for i, line in enumerate(h.new)
        if reads(line)
    ]
    if beyond and not _all_where_port_lacks(s, beyond, new):
        return False
    if lines:
        return _all_where_port_lacks(s, lines, new)
    return _read_in_tree_only_where_port_lacks(s, name)


_MUTATORS = "add|append|appendleft|extend|discard|remove|clear|update|insert|setdefault"


def _reader(name: str) -> Callable[[str], bool]:
    """Does a line read `name`: name it in code (not in a string or a comment), other than where it
    defines it, assigns it, or passes it as a keyword argument (`n = ...`, `f(n=...)`)?"""
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    keyword = re.compile(rf"(?<![\w.]){re.escape(name)}\s*=[^=]")

    # `self.x.add(item)` as a statement changes the object's state and reads nothing out of it (a
    # local filled so is read where it is passed on)
    mutates = re.compile(rf"^\s*self\.{re.escape(name)}\.(?:{_MUTATORS})\(.*\)\s*(?:#.*)?$")

    def reads(line: str) -> bool:
        # the cheap test first: a large commit adds thousands of lines
        if name not in line or not word.search(hunks_mod.feature_code(line)):
            return False
        return not keyword.search(line) and not hunks_mod.defines([line], name) and not mutates.match(line)

    return reads


def _all_where_port_lacks(s: Subject, lines: list[tuple[str, int, str]], new: bool = False) -> bool:
    """Does every one of these upstream lines (path, 1-based line, text; at the entry's commit) lie
    in a file with no port counterpart, inside a function the port lacks (with `new`, one this change
    adds), or under a switch it lacks?"""
    added = _added_lines(s) if new else []
    for path, number, _ in lines:
        if not s.ctx.port_files(path):
            continue
        text = s.ctx.upstream_text(s.e.sha, path) or ""
        holder = hunks_mod.def_above(text, number - 1)
        lacked = _lacked_function(s, holder) and (not new or hunks_mod.defines(added, naming.parts(holder)[-1]))
        if not lacked and not _lacked_switch(s, text, number):
            return False
    return True


def _lacked_switch(s: Subject, text: str, number: int) -> bool:
    """Is 1-based line `number` of this upstream text inside an `if` block whose condition reads a
    switch the port's code names nowhere, this change does not define (see `_guards`) and no
    deferral record of the port names (a switch left out on purpose is a gap the port owes)?"""
    switches = hunks_mod.switches_above(text, number - 1)
    return any(
        s.ctx.port_lacks(n) and not hunks_mod.defines(_added_lines(s), n) and not _left_out(s, n) for n in switches
    )


def _added_lines(s: Subject) -> list[str]:
    """The new side of every hunk of the entry's files (once per subject): where it defines a name."""
    if s.added is None:
        s.added = [x for h in s.ctx.hunks(s.e, s.e.files) or [] for x in h.new]
    return s.added


def _lacked_function(s: Subject, holder: str | None) -> bool:
    """Does the port lack the function `holder` (`Class.method`)? A dunder method is its class's:
    every port has an `__init__` in some spelling, so the class decides."""
    parts = naming.parts(holder) if holder else []
    name = parts[-1] if parts else ""
    if name.startswith("__"):
        name = parts[-2] if len(parts) > 1 else ""
    return bool(name) and s.ctx.port_lacks(name)


def _read_in_tree_only_where_port_lacks(s: Subject, name: str) -> bool:
    """For a name no line of the change reads: is every code line of the upstream tree at the
    entry's commit that reads it in a file with no port counterpart, or inside a function the port
    lacks, with at least one such line? A hook or op wrapper that only code outside the change
    calls serves whatever that code is. Python calls a dunder for the class, so its readers are
    never found by name. The tree is searched only where the commit itself adds a reader outside
    the change (the hook's caller), and only in the top folders of those readers and the entry's
    files (tests and docs are no readers)."""
    ctx, reads = s.ctx, _reader(name)

    def code(path: str) -> bool:
        return path.endswith(".py") and ctx.is_code(path)

    added = {h.path for h in ctx.hunks(s.e, ["."]) or [] if code(h.path) and any(reads(x) for x in h.new)}
    if name.startswith("__") or not added:
        return False
    folders = {p.split("/", 1)[0] for p in added | set(s.e.files) if "/" in p}
    # a folder `[audit] non_code` holds whole (`tests/**`) has no code line to find: not searched
    tops = tuple(sorted({f"{d}/*.py" for d in folders if f"{d}/**" not in ctx.cfg.non_code}))
    tops += tuple(sorted(p for p in added | set(s.e.files) if "/" not in p))
    lines = [x for x in ctx.upstream_readers(s.e.sha, name, tops) or [] if code(x[0]) and reads(x[2])]
    return bool(lines) and _all_where_port_lacks(s, lines)


def _content_ported(s: Subject) -> bool:
    """Every telling hunk is ported, with enough telling tokens over the whole change. Hunks set
    aside: one a later commit rewrote, one with nothing telling that only reaches for what the port
    lacks, and, beside a ported hunk, one with neither side in the port: that code was never the
    port's, and the rest of the change is there in its new form."""
    states = [j for j in _content_states(s) if j.kind not in ("reaching", "superseded")]
    if any(j.kind == "ported" for j in states):
        states = [j for j in states if j.kind != "absent"]
    telling = sum(compare_mod.weight(t) for j in states for t in [*j.state.new_found, *j.state.old_missing])
    # an old side gone alone is also what a port that never had the code shows: some new side must be there
    found = any(j.state.new_found for j in states)
    return bool(states) and {j.kind for j in states} == {"ported"} and found and telling >= compare_mod.MIN_TELLING


def _content_absent(s: Subject) -> bool:
    """No hunk leaves work, and at least one is absent or guarded (see `_guards`)."""
    kinds = {j.kind for j in _content_states(s)}
    return bool(kinds & {"absent", "guarded", "foreign", "reaching"}) and "gap" not in kinds and not _content_ported(s)


# ---------------------------------------------------------------- blockers: the entries it waits on


_CODE_ONLY = re.compile(r"#.*$" r'|"{3}.*?"{3}' r"|'{3}.*?'{3}" r'|"(?:[^"\\]|\\.)*"' r"|'(?:[^'\\]|\\.)*'")


def _named_in_code(s: Subject, symbol: str) -> bool:
    """Do the entry's added lines name `symbol` in code, not only in a comment or a docstring?
    True when the diff cannot be read: then the queue's `uses` stands."""
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if hunks is None:
        return True
    bare = naming.parts(symbol)[-1]
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
        if naming.is_logger(sym):  # plumbing: the port logs its own way, so no entry waits on one
            continue
        if a in waits and sym not in s.present and (sym in s.syms.changed or _named_in_code(s, sym)):
            out.setdefault(a, []).append(f"uses {sym}, which entry {a} adds and the port lacks")
            s.lacked.setdefault(a, []).append(sym)
    for b, stage in ctx.series_edges.get(e.n, {}).items():
        if b in waits:
            out.setdefault(b, []).append(f"earlier series stage {stage} is not ported")
    s.blockers = out
    return out


def _latest(ctx: _Ctx, n: int) -> Result | Entry | None:
    """Entry n's judgement as this run made it, else as the queue recorded it."""
    return ctx.results.get(n) or ctx.queue.entry(n)


def _verdict_of(ctx: _Ctx, n: int) -> tuple[str, list[Gate]]:
    """An entry's verdict as this run judged it (else as recorded), with its gates."""
    x = _latest(ctx, n)
    return (x.verdict, x.gates) if x is not None else ("", [])


def _rule_of(ctx: _Ctx, n: int) -> str:
    """The rule behind an entry's verdict, as this run judged it (else as recorded)."""
    x = _latest(ctx, n)
    return x.rule if x is not None else ""
