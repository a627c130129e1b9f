"""What audit reads from the whole code scope of the port, kept in the cache for a clean tree.

A few questions read every file of the port once per audit: which deferral records and citations
its code and docs hold, which words its comments hold (for `echoed`), which code tokens each file
has (for "the port lacks X") and which identifiers it names anywhere. For a tree whose index
vouches for every file read, the answer is kept under the file listing, the options that shape it
and the version of the modules that make it (`cache.keep`), so a warm audit reads it back instead
of the port. Any other tree is read every time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

from porttrack import cache as cache_mod
from porttrack.config import Config
from porttrack.evidence import compare, echoes, headers, naming, records
from porttrack.probe import listing

T = TypeVar("T")


class Kind(NamedTuple, Generic[T]):
    name: str  # the cache's `kind`
    sources: tuple[str, ...]  # the modules that make the value: a new version of one is a new key
    dump: Callable[[T], bytes]
    load: Callable[[bytes], T | None]  # None for bytes that do not hold a value (read the tree again)
    docs: bool = False  # read from the port's docs/ too, not only from the code scope


def _dump_tokens(by_file: dict[str, set[str]]) -> bytes:
    return json.dumps({rel: sorted(tokens) for rel, tokens in by_file.items()}).encode()


def _load_tokens(data: bytes) -> dict[str, set[str]] | None:
    try:
        d = json.loads(data)
    except ValueError:
        return None
    if not isinstance(d, dict) or not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v) for v in d.values()
    ):
        return None
    return {rel: set(v) for rel, v in d.items()}


def _dump_words(words: set[str]) -> bytes:
    return json.dumps(sorted(words)).encode()


def _load_words(data: bytes) -> set[str] | None:
    try:
        d = json.loads(data)
    except ValueError:
        return None
    return set(d) if isinstance(d, list) and all(isinstance(w, str) for w in d) else None


# the deferral records and citations of the code scope and docs/ (the deferral words are the options)
RECORDS: Kind[records.Records] = Kind("records", (records.__file__,), records.dump, records.load, docs=True)
# each file of the code scope -> compare.port_tokens of it
TOKENS: Kind[dict[str, set[str]]] = Kind("port-tokens", (compare.__file__, naming.__file__), _dump_tokens, _load_tokens)
# every identifier (IDENT) of the code scope, comments included
IDENT = re.compile(r"[A-Za-z_]\w*")
WORDS: Kind[set[str]] = Kind("port-words", (__file__,), _dump_words, _load_words)
# the words of the comments of the code scope's source files
COMMENTS: Kind[echoes.Index] = Kind(
    "port-comments", (echoes.__file__, headers.__file__), echoes.Index.dump, echoes.Index.load
)


class Kept:
    """The kept answers of one audit's port (each listing is asked for once)."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self._listings: dict[tuple[str, ...], str | None] = {}  # folders -> listing.tree_key of them

    def folders(self, kind: Kind) -> list[str]:
        return sorted({*self.cfg.code_scope, "docs"}) if kind.docs else list(self.cfg.code_scope)

    def _key(self, kind: Kind, options: tuple[str, ...]) -> str | None:
        folders = tuple(self.folders(kind))
        if folders not in self._listings:
            self._listings[folders] = listing.tree_key(self.cfg.port_root, list(folders))
        tree = self._listings[folders]
        if tree is None:
            return None
        return hashlib.sha1(json.dumps([tree, [*map(cache_mod.parser_id, kind.sources)], options]).encode()).hexdigest()

    def get(self, kind: Kind[T], *options: str) -> T | None:
        """The kept value for this tree and these options; None when there is none (or the tree is not clean)."""
        key = self._key(kind, options)
        got = cache_mod.kept(kind.name, key, self.cfg.cache_dir or None) if key is not None else None
        return kind.load(got) if got is not None else None

    def put(self, kind: Kind[T], value: T, *options: str) -> None:
        if (key := self._key(kind, options)) is not None:
            cache_mod.keep(kind.name, key, kind.dump(value), self.cfg.cache_dir or None)

    def get_or_read(self, kind: Kind[T], read: Callable[[], T], *options: str) -> T:
        value = self.get(kind, *options)
        if value is None:
            value = read()
            self.put(kind, value, *options)
        return value
