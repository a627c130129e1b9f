"""What audit reads from the whole code scope of the port, kept in the cache for a clean tree.

A few questions read every file of the port once per audit: which words its comments hold (for
`echoed`), which code tokens each file has (for "the port lacks X") and which identifiers it
names anywhere. For a tree whose index vouches for every file, the answer is kept under the file
listing and the version of the modules that make it (`cache.keep`), so a warm audit reads it back
instead of the port. Any other tree is read every time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

from porttrack import cache as cache_mod
from porttrack.config import Config
from porttrack.evidence import compare, echoes, headers, naming
from porttrack.probe import listing

T = TypeVar("T")


class Kind(NamedTuple, Generic[T]):
    name: str  # the cache's `kind`
    sources: tuple[str, ...]  # the modules that make the value: a new version of one is a new key
    dump: Callable[[T], bytes]
    load: Callable[[bytes], T | None]  # None for bytes that do not hold a value (read the tree again)


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
    """The kept answers of one audit's port (the code scope's listing is asked for once)."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self._listing: Any = False  # listing.tree_key of the code scope, once asked: str or None

    def _key(self, kind: Kind) -> str | None:
        if self._listing is False:
            self._listing = listing.tree_key(self.cfg.port_root, list(self.cfg.code_scope))
        if self._listing is None:
            return None
        return hashlib.sha1(":".join([self._listing, *map(cache_mod.parser_id, kind.sources)]).encode()).hexdigest()

    def get(self, kind: Kind[T]) -> T | None:
        """The kept value for this tree; None when there is none (or the tree is not clean)."""
        key = self._key(kind)
        got = cache_mod.kept(kind.name, key, self.cfg.cache_dir or None) if key is not None else None
        return kind.load(got) if got is not None else None

    def put(self, kind: Kind[T], value: T) -> None:
        if (key := self._key(kind)) is not None:
            cache_mod.keep(kind.name, key, kind.dump(value), self.cfg.cache_dir or None)

    def get_or_read(self, kind: Kind[T], read: Callable[[], T]) -> T:
        value = self.get(kind)
        if value is None:
            value = read()
            self.put(kind, value)
        return value
