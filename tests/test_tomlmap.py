"""The one TOML source map: every table and key of a text by line, for config, queue and check alike."""

from __future__ import annotations

import tomllib

import pytest

from porttrack import tomlmap

TEXT = """\
top = 1
[upstream]
repo = "../up"
paths.extra = ["x"]

[[entry]]
n = 7
verdict = "inert"

[[entry.gate]]
id = "a-absent"
kind = "absent"

[entry.symbols]
added = ["A"]

[[entry.part]]
name = "(b) KV half"
verdict = "blocked"

[[entry.part.gate]]
id = "b-ported"

[[entry]]
n = 8  # a comment
"""


def test_keys_tables_and_their_children_by_line():
    sm = tomlmap.SourceMap(TEXT)
    assert sm.key_line(None, "top") == 1 and sm.key_line("upstream", "repo") == 3
    assert sm.key_line("upstream.paths", "extra") == 4  # a dotted key under its table
    assert [e.line for e in sm.named("entry")] == [6, 24]
    first, second = sm.named("entry")
    assert (first.value("n"), second.value("n")) == (7, 8)
    assert sm.key_line("entry", "n", occurrence=1) == 25
    assert [g.keys["id"] for g in first.named("gate")] == [11]
    assert first.find("added") == 15  # a key of a sub-table, when the element has none of its own
    (part,) = first.named("part")
    assert part.value("name") == "(b) KV half" and [g.line for g in part.named("gate")] == [21]
    assert sm.spans("entry") == [(6, 24), (24, TEXT.count("\n") + 2)]
    assert sm.key_line("entry", "missing") is None


def test_the_line_a_tomllib_error_names():
    with pytest.raises(tomllib.TOMLDecodeError) as e:
        tomllib.loads("a = 1\nb = = 2\n")
    assert tomlmap.error_line(e.value) == 2
