"""What a probe answers: hits, counts, scans and judged probes; and the names a symbol is searched as."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from porttrack.errors import UserError


@dataclass(slots=True)
class Hit:
    path: str
    line: int
    kind: str  # "definition" | "test" | "consumer" | "delegation" | "comment" (raw-only hit: comment/string/#if 0/no grammar)
    text: str = ""  # the source line, stripped
    col: int = 0
    name: str = ""  # the variant that matched (the regex's matched text for regexes)
    why: str = ""  # for kind "comment": comment, string, "#if 0" or "no grammar"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(eq=False, init=False)
class Count:
    symbol: str  # as asked (upstream name or regex)
    form: str  # "word" or "regex"
    variants: list[str]  # the identifiers actually searched (or the regex)
    code: int  # code hits in the scope
    raw: int  # all hits in the scope, comments and strings included
    files: int  # scope files with a code hit
    definitions: int  # code hits in the scope that are the declared name
    tests: int  # code hits under the tests scope
    consumers: int  # code hits in the scope: not tests, not definitions, not delegations
    delegations: int
    # Every hit in scope and tests scope, by path and line. A scan counts words in SQL and leaves
    # `loader` to build the Hit objects when `hits` is first read (most gates never read them).
    loaded: list[Hit] | None = field(default=None, repr=False)
    loader: Callable[[], list[Hit]] | None = field(default=None, repr=False)

    def __init__(
        self,
        symbol: str,
        form: str,
        variants: list[str],
        code: int = 0,
        raw: int = 0,
        files: int = 0,
        definitions: int = 0,
        tests: int = 0,
        consumers: int = 0,
        hits: list[Hit] | None = None,
        delegations: int = 0,
        *,
        loader: Callable[[], list[Hit]] | None = None,
    ):
        self.symbol, self.form, self.variants = symbol, form, variants
        self.code, self.raw, self.files, self.definitions = code, raw, files, definitions
        self.tests, self.consumers, self.delegations = tests, consumers, delegations
        self.loaded = None if hits is None and loader is not None else list(hits or [])
        self.loader = loader

    @property
    def hits(self) -> list[Hit]:
        if self.loaded is None:
            self.loaded = self.loader() if self.loader is not None else []
            self.loader = None
        return self.loaded

    def numbers(self) -> tuple[int, ...]:
        return (self.code, self.raw, self.files, self.definitions, self.tests, self.consumers, self.delegations)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Count):
            return NotImplemented
        return (self.symbol, self.form, self.variants, self.numbers(), self.hits) == (
            other.symbol,
            other.form,
            other.variants,
            other.numbers(),
            other.hits,
        )

    def __getstate__(self) -> dict:
        _ = self.hits  # a pickled or copied count carries its hits, not the loader
        return dict(self.__dict__)


@dataclass
class Tree:
    root: str
    commit: str | None
    dirty: bool
    rev: str | None = None  # as asked; None for the working tree
    git: bool = True

    def __str__(self) -> str:
        if self.commit is None:
            return "worktree (no commits)" if self.git else "worktree (not a git repository)"
        return self.commit[:8] + ("+dirty" if self.dirty else "")


class Row(NamedTuple):
    """One file of a scan, classified."""

    path: str
    sha: str  # git blob id
    lang: str | None
    bid: int  # cache id of the file version
    first_def: str | None
    first_line: int | None
    problem: str | None  # why it cannot be read as text (binary, not UTF-8); None: readable
    scoped: bool  # under the scope
    test: bool  # under the tests scope
    masked: bool  # parsed: its first definition (and masks) are known


@dataclass
class Scan:
    tree: Tree
    scope: list[str]
    tests_scope: list[str]
    files_scanned: int
    incomplete: list[str]  # "path: reason" for unreadable blobs, missing objects, undecodable files
    counts: dict[str, Count]  # keyed by the symbol (or regex) as asked
    scope_files: int = 0  # of files_scanned, those under the scope
    missing_scopes: list[str] = field(default_factory=list)  # scope paths that do not exist in the tree
    excluded: int = 0  # files left out by the exclude globs
    hidden: int = 0  # files left out because they lie in a hidden folder not named by the scope
    binary: list[str] = field(default_factory=list)  # skipped: binary content
    no_grammar: list[str] = field(default_factory=list)  # read raw only: no tree-sitter grammar
    auto_control: dict[str, str] = field(default_factory=dict)  # form -> control chosen by the scan
    auto_control_how: dict[str, str] = field(default_factory=dict)
    control_counts: dict[str, Count] = field(default_factory=dict)  # counts of auto controls
    parsed: int = 0  # files this scan parsed (0 on a warm run)


@dataclass
class Probe:
    symbol: str
    form: str
    scope: list[str]
    tree: str
    count: Count
    control: str | None
    control_count: Count | None
    control_how: str
    status: str  # "present" | "absent" | "untrusted" | "incomplete"
    reason: str
    files_scanned: int = 0
    incomplete: list[str] = field(default_factory=list)
    commit: str | None = None  # the full commit id behind `tree`
    dirty: bool = False

    def as_json(self) -> dict:
        c = self.count
        return {
            "symbol": self.symbol,
            "form": self.form,
            "status": self.status,
            "reason": self.reason,
            "tree": self.tree,
            "commit": self.commit,
            "dirty": self.dirty,
            "scope": self.scope,
            "variants": c.variants,
            "code": c.code,
            "raw": c.raw,
            "files": c.files,
            "definitions": c.definitions,
            "tests": c.tests,
            "consumers": c.consumers,
            "delegations": c.delegations,
            "files_scanned": self.files_scanned,
            "incomplete": self.incomplete,
            "control": {
                "symbol": self.control,
                "how": self.control_how,
                "code": self.control_count.code if self.control_count else None,
                "raw": self.control_count.raw if self.control_count else None,
            },
            "hits": [
                {"at": f"{h.path}:{h.line}", "kind": h.kind, "why": h.why, "name": h.name, "text": h.text}
                for h in c.hits
            ],
        }


_IDENT = re.compile(r"(?!\d)\w+")  # Unicode, as Python and C++ identifiers are


def variants(name: str, *, renames: dict[str, str] | None = None, strip_leading_underscore: bool = True) -> list[str]:
    """The identifiers an upstream name may appear as in the port (docs/design.md §6).

    `Class.method` and `Class::method` are found through the bare `method` (every qualified
    occurrence is also an occurrence of the bare name); `Class.__init__` is the constructor,
    named after the class. Renames apply to the whole name and to its last part.
    """
    renames = renames or {}
    if _IDENT.fullmatch(name) and name not in renames:  # a plain identifier: the common case, answered directly
        bare = (
            name.lstrip("_")
            if strip_leading_underscore and not (name.startswith("__") and name.endswith("__"))
            else name
        )
        if bare == name:
            return [name]
        if bare not in renames and _IDENT.fullmatch(bare):
            return [name, bare]
    parts = [p for p in re.split(r"\.|::", name.strip()) if p]
    if not parts:
        raise UserError(f"symbol {name!r} is empty.")
    last = parts[-1]
    if last == "__init__" and len(parts) > 1:
        last = parts[-2]
    out: list[str] = []
    todo = [last, renames.get(name, "")]
    while todo:
        cand = re.split(r"\.|::", todo.pop(0))[-1]
        if not cand or cand in out:
            continue
        out.append(cand)
        if strip_leading_underscore and not (cand.startswith("__") and cand.endswith("__")):
            todo.append(cand.lstrip("_"))
        todo.append(renames.get(cand, ""))
    bad = [v for v in out if not _IDENT.fullmatch(v)]
    if bad:
        raise UserError(f"symbol {name!r} is not an identifier ({bad[0]!r}); probe it with --regex.")
    return out
