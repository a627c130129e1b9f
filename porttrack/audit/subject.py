"""What every rule reads: the run's context (_Ctx) and one entry under judgement (Subject)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from collections.abc import Callable

from porttrack import gitio, globs
from porttrack.evidence import compare as compare_mod, echoes as echoes_mod, headers as headers_mod
from porttrack.evidence import hunks as hunks_mod, naming, owners as owners_mod, records as records_mod
from porttrack.evidence import shapes, successors as successors_mod
from porttrack import paths as pathrules
from porttrack.config import Config
from porttrack.model import Entry, Part, Queue
from porttrack.audit.results import (
    EntrySymbols,
    Result,
    _CODE_KINDS,
    _Probes,
    _code,
    _hits,
    _owner_class,
    hit_lines,
    probe_line,
)
from porttrack.audit import kept as kept_mod
from porttrack.audit.graph import _mirrored, _needs, _pin_position, adders, blocked_graph, series_edges


# a top-level def or class, or a name assigned (or annotated) at the top level
_TOP_LEVEL = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)|^(\w+)\s*[:=]", re.M)


class _Ctx:
    def __init__(
        self,
        cfg: Config,
        queue: Queue,
        probes: _Probes,
        rows,
        where: Callable[[int], str] | None,
        chosen: list[Entry] | None = None,
    ):
        self.cfg = cfg
        self.queue = queue
        self.chosen = chosen if chosen is not None else []  # the entries this run judges: diffed in one go
        self._diffs: dict[str, list] | None = None  # gitio.diff_hunks_many of them, on the first need
        self._held: dict[str, list[tuple[str, int, str]]] | None = None  # port_holding's one grep of the run
        self._diffed: set[str] = set()  # the paths that diff covers
        self.probes = probes
        self.rows = rows
        self.where = functools.lru_cache(maxsize=None)(where) if where else None  # line_of rescans the file
        self.scope = tuple(cfg.code_scope)
        self.tree = probes.tree
        self.adders = adders(queue)
        self.series_edges = series_edges(queue)
        self.graph = blocked_graph(queue)
        self._provs: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None
        self._cites: dict[str, set[str]] = {}
        self._hunks: dict[tuple[str, tuple[str, ...]], list | None] = {}
        self._readers: dict[tuple[str, str | tuple[str, ...], tuple[str, ...]], list[tuple[str, int, str]] | None] = {}
        self.results: dict[int, Result] = {}  # entry-level results of this run so far, by entry
        self._records: records_mod.Records | None = None
        self._port_tokens: dict[str, set[str]] = {}
        self._port_rows: dict[str, list[frozenset[str]]] = {}
        # the shape of each line of a port file (porttrack/evidence/shapes.py), asked for a few hunks
        # only, so a few files' shapes are kept rather than every compared file's
        self.port_shapes = functools.lru_cache(maxsize=16)(
            lambda rel: shapes.of_text(compare_mod.without_comments(self._port_text(rel)))
        )
        self._siblings: dict[str, list[str]] | None = None
        self._neighbours: dict[tuple[str, ...], list[str]] = {}
        self._port_files: dict[str, list[str]] = {}  # upstream path -> its port counterparts
        self.moved: dict[str, list[tuple[str, int]]] = {}  # upstream path -> the renames its counterparts came through
        self._moves = queue.moves()
        self._blobs: gitio.CatFile | None = None
        # the files of the last few entries, read for tokens, members and messages: bounded, since a
        # long queue touches thousands of file versions and each is needed only while its entry is judged
        self.upstream_text = functools.lru_cache(maxsize=64)(self._read_upstream)
        self.upstream_tokens = functools.lru_cache(maxsize=64)(self._read_tokens)
        self.upstream_members = functools.lru_cache(maxsize=64)(self._read_members)
        self.upstream_top_names = functools.lru_cache(maxsize=64)(self._read_top_names)
        # the hunks of one entry, and of the entries after it, mostly compare against the same files
        self.port_tokens_of = functools.lru_cache(maxsize=4)(self._union_tokens)
        self._lacks: dict[str, bool] = {}
        self._words: set[str] | None = None  # every identifier of the code scope, comments included
        self._greps = 0
        self._all_tokens: set[str] | None = None
        self._comments: echoes_mod.Index | None = None
        self._successors: dict[str, list[tuple[str, str]]] | None = None
        self._tree = pathrules.Tree(cfg.port_root)
        self.kept = kept_mod.Kept(cfg)
        self._tokens_asked = False  # whether the cache was asked for the code scope's tokens

    def _sibling_index(self) -> dict[str, list[str]]:
        """Upstream file -> the symbols (and their classes) that entries of this queue add or change in it."""
        if self._siblings is None:
            idx: dict[str, set[str]] = {}
            for e in self.queue.entries:
                names = [*e.symbols.added, *e.symbols.changed]
                names += [c for c in map(_owner_class, names) if c]
                for f in e.files:
                    idx.setdefault(f, set()).update(names)
            self._siblings = {f: sorted(v) for f, v in idx.items()}
        return self._siblings

    def siblings(self, upstream: str) -> list[str]:
        """Symbols (and their classes) that entries of this queue add or change in one upstream file."""
        return self._sibling_index().get(upstream, [])

    def neighbours(self, files: tuple[str, ...]) -> list[str]:
        """The queue's files nearest to `files` in upstream's tree (the same folder, else each parent in
        turn) that have a port counterpart: where the port would put what those files lack."""
        if files not in self._neighbours:  # asked once per absent name; an entry's names share its files
            self._neighbours[files] = self._nearest(files)
        return self._neighbours[files]

    def _nearest(self, files: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for up in files:
            folder = up
            while "/" in folder and not out:
                folder = folder.rsplit("/", 1)[0]
                near = [f for f in self._sibling_index() if f != up and f.startswith(folder + "/")]
                out = [f for f in sorted(near, key=lambda f: (f.count("/"), f)) if self.port_files(f)][:_NEIGHBOURS]
        return out

    def _read_upstream(self, rev: str, path: str) -> str | None:
        """One upstream file at `rev`, through one `git cat-file --batch`; None when git cannot show it."""
        repo = self.cfg.upstream_repo
        if repo is None or not Path(repo).is_dir():
            return None
        if self._blobs is None:
            self._blobs = gitio.CatFile(Path(repo))
        data = self._blobs.read(f"{rev}:{path}")
        return data.decode("utf-8", "replace") if data is not None else None

    def upstream_readers(
        self, rev: str, name: str | tuple[str, ...], paths: tuple[str, ...]
    ) -> list[tuple[str, int, str]] | None:
        """The lines of the upstream tree at `rev`, in the files the pathspecs `paths` match, that
        name `name` (or any of several) (path, line, text), asked once each; None without an
        upstream checkout that can show `rev`."""
        key = (rev, name, paths)
        if key not in self._readers:
            repo = self.cfg.upstream_repo
            ok = repo is not None and Path(repo).is_dir()
            found = gitio.grep_rev(Path(repo), rev, name, list(paths)) if ok and repo is not None else None
            self._readers[key] = found
        return self._readers[key]

    def upstream_holds(self, rev: str, strings: tuple[str, ...], folder: str) -> set[str] | None:
        """Which of `strings` (fixed, case kept) stand in the upstream's source files under `folder`
        at `rev` (under its nearest parent there, for a folder `rev` lacks); None without an upstream
        checkout that can show `rev`. Asked afresh each time."""
        repo = self.cfg.upstream_repo
        if repo is None or not Path(repo).is_dir():
            return None
        while folder and self._read_upstream(rev, folder) is None:  # a tree reads as bytes too
            folder = folder.rpartition("/")[0]
        # `./` keeps a folder that starts with `:` from reading as pathspec magic
        specs = [f"./{folder}/{x}" for x in self.cfg.source_pathspecs] if folder else list(self.cfg.source_pathspecs)
        return gitio.found_at(Path(repo), rev, strings, specs)

    def _read_tokens(self, rev: str, path: str) -> frozenset[str] | None:
        """hunks.file_tokens of one upstream file at `rev`; None when git cannot show it."""
        text = self.upstream_text(rev, path)
        return None if text is None else hunks_mod.file_tokens(text)

    def _read_members(self, rev: str, path: str) -> dict[str, set[str]]:
        """hunks.class_members of one upstream file at `rev` (empty when unreadable or no Python)."""
        text = self.upstream_text(rev, path) if path.endswith(".py") else None
        return hunks_mod.class_members(text) if text is not None else {}

    def _read_top_names(self, rev: str, path: str) -> frozenset[str]:
        """The names one upstream file defines at its top level (def, class, assignment) at `rev`."""
        return frozenset(m[1] or m[2] for m in _TOP_LEVEL.finditer(self.upstream_text(rev, path) or ""))

    def port_lacks(self, name: str) -> bool:
        """Has the port's code scope no code mention of `name` in any spelling (comments left out)?
        One `git grep` finds the candidate lines; their files' code tokens decide."""
        if name not in self._lacks:
            pattern = spelling_pattern(name)
            if not pattern:
                return False
            self._greps += 1
            tokens = self._code_tokens(build=self._greps > _GREPS_BEFORE_INDEX)
            if tokens is not None:
                self._lacks[name] = naming.norm(name) not in tokens
                return self._lacks[name]
            found = gitio.grep_lines(self.cfg.port_root, pattern, list(self.cfg.code_scope))
            if found is None:  # no git work tree: nothing to say the port lacks it
                self._lacks[name] = False
            else:
                self._lacks[name] = not any(naming.norm(name) in self.port_tokens(f) for f in found)
        return self._lacks[name]

    def port_cites(self, name: str) -> bool:
        """Does any file of the port's code scope, comments included, name `name` as upstream spells it?
        A port that re-implements a function under its own name often says which one it mirrors."""
        if self._words is None:  # one read of the code scope answers every name
            self._words = self.kept.get_or_read(kept_mod.WORDS, self._read_words)
        return name in self._words

    def _read_words(self) -> set[str]:
        words: set[str] = set()
        for rel in self._scope_files() or []:
            words.update(kept_mod.IDENT.findall(self._port_text(rel)))
        return words

    @property
    def port_comments(self) -> echoes_mod.Index:
        """The words of the comments of every source file in the code scope (read once)."""
        if self._comments is None:
            self._comments = self.kept.get_or_read(kept_mod.COMMENTS, self._read_comments)
        return self._comments

    def _read_comments(self) -> echoes_mod.Index:
        files = [f for f in self._scope_files() or [] if f.endswith(tuple(headers_mod.HEADER_SUFFIXES))]
        return echoes_mod.Index((f, self._port_text(f)) for f in files)

    def close(self) -> None:
        if self._blobs is not None:
            self._blobs.close()
        hunks_mod.forget()  # the write-back after an audit needs the memory

    def port_tokens(self, rel: str) -> set[str]:
        """compare.port_tokens of one port file (read once, never through a link or out of the root)."""
        if rel not in self._port_tokens:
            self._port_tokens[rel] = compare_mod.port_tokens(self._port_text(rel))
        return self._port_tokens[rel]

    def port_rows(self, rel: str) -> list[frozenset[str]]:
        """compare.literal_rows of one port file: the literals of each of its lines."""
        if rel not in self._port_rows:
            self._port_rows[rel] = compare_mod.literal_rows(self._port_text(rel))
        return self._port_rows[rel]

    def _port_text(self, rel: str) -> str:
        """One port file's text, never read through a link or out of the root ("" when unreadable)."""
        try:
            real = self._tree.resolve_file(rel)
            raw = pathrules.read_file(real) if real is not None else b""
        except (OSError, pathrules.Outside):
            raw = b""
        return raw.decode("utf-8", "replace")

    def _union_tokens(self, files: tuple[str, ...]) -> frozenset[str]:
        """The port tokens of several port files together (`port_tokens` of each)."""
        return frozenset().union(*(self.port_tokens(f) for f in files))

    def _code_tokens(self, build: bool = True) -> set[str] | None:
        """Every code token of every file in the code scope: read back from the cache for a tree read
        before, else built once `build` says the first few greps have shown the audit asks often (each
        `git grep` of a real port costs tens of milliseconds)."""
        if self._all_tokens is None and not self._tokens_asked:
            self._tokens_asked = True
            kept = self.kept.get(kept_mod.TOKENS)
            if kept is not None:
                for rel, tokens in kept.items():
                    self._port_tokens.setdefault(rel, tokens)
                self._all_tokens = set().union(*kept.values())
        if self._all_tokens is None and build:
            names = self._scope_files()
            if names is None:
                return None
            by_file = {n: self.port_tokens(n) for n in names}
            self.kept.put(kept_mod.TOKENS, by_file)
            self._all_tokens = set().union(*by_file.values())
        return self._all_tokens

    def port_may_hold(self, text: str) -> bool:
        """Does every word of `text` stand somewhere in the port's code scope (the word index
        `port_cites` reads)? Only then can a line of the port hold the text: most texts are settled
        without a `git grep`."""
        return all(self.port_cites(w) for w in kept_mod.IDENT.findall(text))

    def port_holding(self, strings: tuple[str, ...]) -> dict[str, list[tuple[str, int, str]]]:
        """string -> the lines of the port's code scope (the work tree, untracked files included) that
        hold it anywhere, case kept, as (path, line, text); empty when the port is no git work tree.
        The messages every judged entry adds are asked in one `git grep`, on the first need."""
        if self._held is None:
            self._held = self._hold(self._run_messages())
        if all(x in self._held for x in strings):
            return {x: self._held[x] for x in strings}
        return self._hold(strings)

    def _run_messages(self) -> tuple[str, ...]:
        """The messages the judged entries' diffs add whose every word the port has (`port_may_hold`)."""
        repo = self.cfg.upstream_repo
        if repo is None or not Path(repo).is_dir():
            return ()
        hunks = [h for found in self._batch_diffs(Path(repo)).values() for h in found]
        texts = tuple(sorted({m.text for m in echoes_mod.added_messages(hunks) if self.port_may_hold(m.text)}))
        # the patterns go on git's command line: past a bound, each entry asks for its own instead
        return texts if len(texts) <= _HELD_TEXTS and sum(map(len, texts)) <= _HELD_CHARS else ()

    def _hold(self, texts: tuple[str, ...]) -> dict[str, list[tuple[str, int, str]]]:
        """text -> the port's lines that hold it, in path and line order, for each of `texts` (one
        `git grep`); empty when git cannot grep the port."""
        if not texts:
            return {}
        found = gitio.grep_rev(self.cfg.port_root, None, texts, list(self.cfg.code_scope), whole_word=False)
        if found is None:
            return {}
        return {x: sorted(hit for hit in found if x in hit[2]) for x in texts}

    def _scope_files(self) -> list[str] | None:
        """The files of the code scope, tracked or not (None when the port is no git work tree)."""
        proc = gitio.run(
            self.cfg.port_root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
            *self.cfg.code_scope,
        )  # fmt: skip
        if proc.returncode != 0:
            return None
        return [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]

    def successors(self) -> dict[str, list[tuple[str, str]]]:
        """upstream path -> (commit, file) for each commit after the queue's first entry, up to the
        upstream's HEAD, that deleted it and added a file in its place (evidence/successors.py)."""
        if self._successors is None:
            repo, changes = self.cfg.upstream_repo, []
            if repo is not None and Path(repo).is_dir() and self.queue.entries:
                changes = gitio.additions_and_deletions(Path(repo), self.queue.entries[0].sha)
            self._successors = successors_mod.successors(changes)
        return self._successors

    @property
    def records(self):
        """Deferral records and prior triage in the port's code scope and docs (read once)."""
        if self._records is None:
            words = self.cfg.deferral_words
            folders = self.kept.folders(kept_mod.RECORDS)
            read = functools.partial(records_mod.scan, self.cfg.port_root, folders, words)
            self._records = self.kept.get_or_read(kept_mod.RECORDS, read, *words)
        return self._records

    def hunks(self, e: Entry, paths: list[str], keep: bool = True):
        """The entry's hunks in `paths` (gitio.Hunk), or None when no upstream checkout shows the commit.
        `keep=False` for a one-off look (a whole commit's diff): the answer is not held for the run."""
        key = (e.sha, tuple(paths))
        if key in self._hunks:
            return self._hunks[key]
        found = self._diffed_hunks(e, paths, batch=keep)
        if found is not None:  # C-family comments are no code, as Python's are
            found = [compare_mod.without_c_comments(h) for h in found]
        if keep:
            self._hunks[key] = found
        return found

    def commented_hunks(self, e: Entry, paths: list[str]) -> list | None:
        """The entry's hunks in `paths` with every comment intact (`hunks` blanks the C family's)."""
        return self._diffed_hunks(e, paths, batch=True) if paths else None

    def _diffed_hunks(self, e: Entry, paths: list[str], batch: bool) -> list | None:
        """The entry's hunks in `paths` as git shows them: from the one diff of every judged entry
        where `batch` and it holds them, else from a diff of the entry alone."""
        repo = self.cfg.upstream_repo
        if repo is None or not Path(repo).is_dir() or not e.sha:
            return None
        if batch and (found := self._batch(Path(repo), e, paths)) is not None:
            return found
        return gitio.diff_hunks(Path(repo), e.sha, list(paths))

    def _batch(self, repo: Path, e: Entry, paths: list[str]) -> list | None:
        """The entry's hunks in `paths` from one diff of every judged entry (asked once, on the first
        need), or None when that diff does not hold them (then the entry is diffed alone)."""
        diffs = self._batch_diffs(repo)
        want = set(paths)
        if e.sha not in diffs or not want <= self._diffed:
            return None
        return [h for h in diffs[e.sha] if h.path in want]

    def _batch_diffs(self, repo: Path) -> dict[str, list]:
        """sha -> hunks of every judged entry's files, from one diff (made on the first need)."""
        if self._diffs is None:
            files = sorted({f for x in self.chosen for f in [*x.files, *x.renames.values()]})
            self._diffs = gitio.diff_hunks_many(repo, [x.sha for x in self.chosen], files) if files else {}
            self._diffed = set(files)
        return self._diffs

    def is_code(self, upstream: str) -> bool:
        """A source file that is not a test, doc, CI or benchmark file (`[audit] non_code`)."""
        return self._kind_of(upstream, self.cfg.source_suffixes)

    def is_data(self, upstream: str) -> bool:
        """A data file the upstream's code reads (`[audit] data_suffixes`, a kernel's tuned configs),
        not a test, doc, CI or benchmark file."""
        return self._kind_of(upstream, self.cfg.data_suffixes)

    def is_non_code(self, upstream: str) -> bool:
        """A test, doc, CI or benchmark file (`[audit] non_code`)."""
        return any(globs.match(g, upstream) for g in self.cfg.non_code)

    def _kind_of(self, upstream: str, suffixes: list[str]) -> bool:
        if self.is_non_code(upstream):
            return False
        return any(upstream.endswith(x) for x in suffixes)

    def provenance(self):
        if self._provs is None:
            provs = headers_mod.scan_port(self.cfg)
            self._provs = (headers_mod.upstream_map(provs), headers_mod.pins_of(provs))
            self._cites = headers_mod.cites(provs)
        return self._provs

    def cites(self, port_path: str) -> set[str]:
        """The upstream files a port file's provenance names anywhere in it (its header, the header it
        inherits, body-level `Ported from:` lines): what that file is the counterpart of."""
        self.provenance()
        return self._cites.get(port_path, set())

    def maps_to_port(self, upstream: str) -> bool:
        """Has the upstream file a port counterpart: a [[map]] template, or a header naming it?

        A port that declares neither maps every file under the mirrored paths.
        """
        if any(m.apply(upstream) is not None for m in self.cfg.maps):
            return True
        umap, _ = self.provenance()
        if upstream in umap:
            return True
        if self._moves.get(upstream) and self.port_files(upstream):
            return True  # the file the upstream renamed it from or to has one
        return not self.cfg.maps and not umap

    def port_files(self, upstream: str) -> list[str]:
        """Port files for an upstream path: provenance headers first, then [[map]] templates that exist,
        then those of a name the queue's entries renamed it to or from."""
        if upstream not in self._port_files:
            route, files = headers_mod.moved_counterparts(self.cfg, self.provenance()[0], upstream, self._moves)
            self._port_files[upstream] = files
            if route:
                self.moved[upstream] = route
        return self._port_files[upstream]


_HELD_TEXTS, _HELD_CHARS = 4096, 256 * 1024  # the most messages, and characters, one `git grep` is asked about
_NEIGHBOURS = 8  # files of the nearest folder tried for a control; a folder's first few say where it lives
_GREPS_BEFORE_INDEX = 16  # past this, one read of the whole code scope is cheaper than a grep a name


def spelling_pattern(name: str) -> str:
    """An extended regex (for `git grep -i`) of every spelling `naming` knows for `name`; no word
    boundaries, so that `canvasMode_` and `kCanvasMode` are candidates too (their tokens decide)."""
    ws = naming.words(name)
    return "_?".join(re.escape(w) for w in ws)


class _Probed:
    """A fact that `Subject.probe` finds: reading it runs the probe first (once), so no rule reads
    it unprobed, whichever rule asks first."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, subject: Subject | None, owner: type | None = None) -> Any:
        if subject is None:  # asked of the class: the descriptor itself
            return self
        subject.probe()
        return getattr(subject, self.slot)


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
    namesake_classes: dict[str, str | None] = field(default_factory=dict)  # class -> why it is a namesake (has_class)
    blockers: dict[int, list[str]] | None = None  # entry -> why it waits on it (computed once)
    lacked: dict[int, list[str]] = field(default_factory=dict)  # entry -> what it adds, this one uses, the port lacks
    content: list[Judged] | None = None  # _content_states (computed once)
    defining: dict[str, set[str]] | None = None  # facts._defining_by_symbol (computed once)
    added: list[str] | None = None  # facts._added_lines (computed once)
    read_only_lacking: dict[tuple[str, bool], bool] = field(default_factory=dict)  # facts._read_only_where_port_lacks
    # what `probe` finds, stored here and read through the `_Probed` attributes below
    _linked: dict[str, int] = field(default_factory=dict)
    _probed: list[str] = field(default_factory=list)
    _judged: dict[str, Any] = field(default_factory=dict)
    _counts: dict[str, Any] = field(default_factory=dict)
    _present: set[str] = field(default_factory=set)
    _namesakes: set[str] = field(default_factory=set)
    _spelled: dict[str, str] = field(default_factory=dict)
    _probe_done: bool = False

    linked = _Probed()  # needed symbol -> the earlier entry that adds it
    probed = _Probed()  # every symbol the entry adds, changes, removes or needs from an earlier entry
    judged = _Probed()  # probed symbol -> its probe.Probe (status, control)
    counts = _Probed()  # probed symbol -> its probe.Count (code, consumers, hits)
    present = _Probed()  # probed symbols with a code hit where they would be (see `_in_place`)
    namesakes = _Probed()  # probed symbols whose port hits are another file's code (see `_namesake`)
    spelled = _Probed()  # probed symbol -> the spelling the port has it in

    @property
    def ev(self) -> list[str]:
        return self.res.evidence

    def locate(self) -> None:
        """Where the entry's files stand, before any rule reads it: those under the mirrored paths
        (`under`), the code files among them with no port counterpart (`unmapped`), and those two
        kinds together (`mirrored`, the files every later rule judges). A file mapped through the
        upstream's renames says so in the evidence."""
        ctx = self.ctx
        self.under = _mirrored(ctx.cfg, ctx.queue, self.files)
        mapped = [f for f in self.under if ctx.maps_to_port(f)]
        self.unmapped = [f for f in self.under if f not in mapped and (ctx.is_code(f) or ctx.is_data(f))]
        self.mirrored = mapped + self.unmapped
        tests = {f for f in self.under if ctx.is_non_code(f)}
        aside = [f for f in self.mirrored if f in tests]
        if aside and len(aside) < len(self.mirrored):  # all tests: `tests-only` judges them
            self.mirrored = [f for f in self.mirrored if f not in aside]
            self.ev.append(
                f"{', '.join(aside)}: the upstream's tests, docs or benchmarks ([audit] non_code); "
                "the change is judged by its code"
            )
        self._drop_test_only(tests)
        for f in mapped:
            if f in ctx.moved:
                route = " then ".join(f"{p} (entry {n})" for p, n in ctx.moved[f])
                self.ev.append(
                    f"{f}: no header or [[map]] names it; the upstream renamed it to or from {route}, "
                    "whose port counterparts it takes"
                )

    def _drop_test_only(self, tests: set[str]) -> None:
        """Names only the entry's upstream tests (`tests`, its files under the paths that `[audit]
        non_code` matches) define, a test, a fixture, a test's helper, are no evidence: the port
        writes its own tests, so it neither lacks nor waits on them. A name some other file of the
        entry also defines stays."""
        if not tests:
            return
        code = [f for f in self.under if f not in tests]
        syms = self.syms
        named = dict.fromkeys([*syms.added, *syms.changed, *syms.removed])
        only = [
            x for x in named if any(self.defines(f, x) for f in tests) and not any(self.defines(f, x) for f in code)
        ]
        if not only:
            return
        drop = set(only)
        self.syms = EntrySymbols(
            *([x for x in names if x not in drop] for names in (syms.added, syms.changed, syms.removed, syms.uses))
        )
        shown = ", ".join(only[:5]) + (f" and {len(only) - 5} more" if len(only) > 5 else "")
        self.ev.append(
            f"{shown}: only the upstream's tests define {'it' if len(only) == 1 else 'them'}; not evidence, as the port writes its own tests"
        )

    def probe(self) -> None:
        """Probe every symbol the entry adds, changes, removes, or needs from an earlier entry (once)."""
        if self._probe_done:
            return
        self._probe_done = True
        ctx, syms, e = self.ctx, self.syms, self.e
        self._linked = {s: ctx.adders[s] for s in sorted(_needs(syms)) if s in ctx.adders and ctx.adders[s] != e.n}
        self._probed = sorted(set(syms.added) | set(syms.changed) | set(syms.removed) | set(self._linked))
        self.res.probes = self._probed
        for x in self._probed:
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
            self._judged[x], self._counts[x] = ctx.probes.judge(spelled), ctx.probes.count(spelled)
            self._spelled[x] = spelled
            if spelled != x:
                self.ev.append(f"{x} is spelled {spelled.split('.')[-1]} in the port")
            self.ev.append(probe_line(spelled, self._judged[x], self._counts[x], ctx.scope, ctx.tree))
            self.ev.extend(hit_lines(spelled, self._counts[x]))
            if _code(self._counts[x]) > 0 and (spelled != x or self._in_place(x, self._counts[x], say=True)):
                namesake = self._namesake(x, spelled)
                if namesake:
                    self.ev.append(namesake)
                    self._namesakes.add(x)
                else:
                    self._present.add(x)

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

    def _namesake(self, symbol: str, spelled: str) -> str | None:
        """Why the port's `symbol` is another upstream file's code of that name (a twin implementation,
        a helper called the same), else None: every port file defining it names its upstream sources,
        none of them is a file the entry changes, one of them defines the same name, and so does a
        file the entry changes. A member of a class that is such a namesake (`has_class`) is one too."""
        ports = sorted({h.path for h in _hits(self.counts[symbol], ("definition",))})
        cls = _owner_class(symbol)
        if cls is not None:  # a member's definitions count where its class is named
            ccount = self.ctx.probes.count(cls)
            named = {h.path for h in _hits(ccount, _CODE_KINDS)} if ccount is not None else set()
            ports = [p for p in ports if p in named]
        why = self._twin(symbol, spelled, ports)
        # the port's class of that name follows upstream's other file, so the member it has is that
        # class's (or the port's own), whether or not the other class defines it; a constructor is
        # judged by its own definitions, above
        if (
            why is None
            and cls is not None
            and not symbol.endswith(".__init__")
            and not self.has_class(cls)
            and self.namesake_classes.get(cls)
        ):
            why = f"{symbol}: the port's {cls} is the counterpart of upstream's other {cls}, so its member counts as absent"
        return why

    def has_class(self, cls: str) -> bool:
        """Does the port have the class the entry's files define: code names it, and it is not the
        counterpart of upstream's other class of that name (see `_namesake`)? A new member of such a
        namesake grows no surface of the port's."""
        if _code(self.ctx.probes.count(cls)) == 0:
            return False
        if cls not in self.namesake_classes:
            ports = sorted({h.path for h in _hits(self.ctx.probes.count(cls), ("definition",))})
            why = self.namesake_classes[cls] = self._twin(cls, cls, ports)
            if why:
                self.ev.append(why)
        return self.namesake_classes[cls] is None

    def _twin(self, symbol: str, spelled: str, ports: list[str]) -> str | None:
        # the cheap questions first: most port files cite nothing, and then no upstream file is read
        if not ports or any(not self.ctx.cites(p) for p in ports):
            return None
        # only where upstream itself has a second definition the port names as its source: a port
        # file that cites too little is not evidence of a namesake
        cited = set().union(*(self.ctx.cites(p) for p in ports))
        if cited & set(self.mirrored):  # the port follows a file this entry changes: this code
            return None
        twins = sorted(f for f in cited if self.defines(f, symbol))
        if not twins:
            return None
        defining = [f for f in self.mirrored if self.defines(f, symbol)]
        if not defining:
            return None
        return (
            f"{symbol}: the entry changes it in {', '.join(defining)}; the port's {spelled} ({', '.join(ports)}) "
            f"is the counterpart of upstream's other {symbol} in {', '.join(twins[:3])}, so it counts as absent"
        )

    def defines(self, path: str, symbol: str) -> bool:
        """Does the upstream file define `symbol` (a class member, or a top-level def, class or name)
        before or after the entry? Each file is read once a run, whatever number of names is asked."""
        cls, bare = _owner_class(symbol), symbol.rsplit(".", 1)[-1]
        for rev in (self.e.sha, f"{self.e.sha}^"):
            if cls is None and bare in self.ctx.upstream_top_names(rev, path):
                return True
            if cls is not None and cls in self.ctx.upstream_members(rev, path).get(bare, ()):
                return True
        return False

    def _other_owner(self, symbol: str, cls: str) -> str | None:
        """Another class of the entry's upstream files that defines the same member and that the
        port's counterpart of that file names in code: then a port hit on the bare member there is
        that class's, not the absent one's."""
        bare = naming.parts(symbol)[-1]
        ctx = self.ctx
        for up in self.mirrored:
            named = ctx.port_tokens_of(tuple(ctx.port_files(up)))
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
    (verdict, reason, evidence, gates); `when`, `records` and `says` are docs/audit.md's row for
    it (`registry.rules_table`).
    """

    id: str
    verdict: str  # the verdict it gives ("(the rule's)" for path rules)
    fires: Callable[[AuditRule, Subject], bool]
    when: str
    records: str
    says: str = ""  # the docs' verdict column, where more than the verdict


def _changed(s: Subject) -> list[str]:
    return sorted(set(s.syms.changed) | set(s.syms.removed))


class Judged(NamedTuple):
    """One hunk of a change against the port: its kind (compare.compare's state; `guarded`, `plumbing`
    or `foreign`, see `_guards`; `reaching`, see `_every_line_lacks`) and what compare found."""

    hunk: gitio.Hunk
    kind: str
    state: compare_mod.HunkState
    mapped: bool  # compared with port files (a counterpart, or files defining the entry's symbols)


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
