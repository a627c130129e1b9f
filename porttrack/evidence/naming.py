"""How an upstream name may be spelled in a port written in another language's conventions.

`probe.variants` finds a name as written (plus `[naming] renames` and a stripped leading
underscore); the spellings here add the case conventions a port may have switched to:
`apply_top_k_top_p` may be `ApplyTopKTopP`, `kApplyTopKTopP` or `applyTopKTopP`.
"""

from __future__ import annotations

import functools
import re

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@functools.lru_cache(maxsize=65536)  # asked for the same few thousand names all through an audit
def parts(symbol: str) -> tuple[str, ...]:
    """The parts of a qualified name: `A.b` and `A::b` -> ("A", "b"); a bare name is one part."""
    return tuple(re.split(r"\.|::", symbol))


def words(name: str) -> list[str]:
    """`apply_top_k_top_p`, `ApplyTopKTopP` -> ["apply", "top", "k", "top", "p"]."""
    return [w.lower() for w in _WORDS.findall(name)]


def spellings(symbol: str) -> list[str]:
    """The symbol as asked, then its last part in snake, Pascal, camel and kPascal case (new ones only).
    Dunders are Python's own and have no other spelling; a one-word constant (`DTYPE`) has only its
    Pascal and kPascal forms."""
    parts = re.split(r"(\.|::)", symbol)
    last = parts[-1]
    if not last or last.startswith("__"):
        return [symbol]
    ws = words(last.lstrip("_"))
    if not ws:
        return [symbol]
    pascal = "".join(w[:1].upper() + w[1:] for w in ws)
    forms = ["_".join(ws), pascal, pascal[:1].lower() + pascal[1:], "k" + pascal]
    if len(ws) == 1 and last.lstrip("_").isupper():
        # a one-word constant in lower case is a common word (`EMPTY` is not `.empty()`)
        forms = [pascal, "k" + pascal]
    prefix = "".join(parts[:-1])
    out = [symbol]
    for f in forms:
        if f != last and f != last.lstrip("_") and prefix + f not in out:
            out.append(prefix + f)
    return out


def norm(name: str) -> str:
    """One spelling for all of those: `apply_top_k_top_p`, `ApplyTopKTopP` and `kApplyTopKTopP` all
    become `applytopktopp` (the last part of a qualified name)."""
    bare = parts(name)[-1]
    bare = re.sub(r"^k(?=[A-Z])", "", bare)
    return bare.replace("_", "").lower()


def is_entry_point(name: str) -> bool:
    """`main`, `cli.main`: a program's entry point, which the runtime calls and no code reads. Its
    lack of readers says nothing about whether production reaches it."""
    return parts(name)[-1] == "main"


def is_logger(name: str) -> bool:
    """`logger`, `init_logger`'s `_logger`, `widget_logger`: a module's logging plumbing, which carries
    no feature. A port logs its own way (or not at all), so such a name never blocks, is never a
    deferred feature, and a call on it is message text."""
    return parts(name)[-1].lower().endswith("logger")
