"""evidence/compare: where one changed hunk stands in the port's text, as pure functions over text.

These run in milliseconds: no repository, no CLI. tests/audit/test_rules_content.py runs the same
facts end to end through audit on real repositories.
"""

from __future__ import annotations

from porttrack.evidence import compare, hunks
from porttrack.gitio import Hunk


def hunk(old: list[str], new: list[str], start: int = 10) -> Hunk:
    return Hunk("vllm/core/sched.py", start, len(old), start, len(new), old, new)


def test_a_hunk_is_ported_absent_gap_or_neutral_by_where_its_telling_tokens_are():
    h = hunk(["        return self.old_budget_rule(tokens)"], ["        return self.new_budget_rule(tokens)"])
    # the port's text, in its own spelling (comments never count)
    state = lambda port: compare.compare(h, compare.port_tokens(port)).state  # noqa: E731
    assert state("int x = NewBudgetRule(tokens);") == "ported"  # the new side is there, the old side gone
    assert state("int x = OldBudgetRule(tokens);") == "gap"  # the old side is still there
    assert state("int x = Other(tokens); // new_budget_rule") == "absent"  # neither side in code
    # a reorder of names the file already had tells nothing
    moved = hunk(["        a = first_call()"], ["        a = second_call()"])
    before = frozenset({"first_call", "second_call", "a"})
    assert compare.compare(moved, compare.port_tokens("FirstCall();"), before=before, after=before).state == "neutral"


def test_an_unspoken_name_tells_only_where_the_port_has_it():
    h = hunk(
        ["        return run(tokens)"],
        ["        usable_budget = self.free_budget()", "        return run(usable_budget)"],
    )
    port = compare.port_tokens("int avail = FreeBudget(); return Run(avail);")
    assert compare.compare(h, port).state == "gap"  # the local's name is missing
    got = compare.compare(h, port, unspoken=frozenset({"usable_budget"}))
    assert (got.state, got.new_found, got.new_missing) == ("ported", ["free_budget"], ["usable_budget"])
    # where the port spells the local the same way, it still tells
    same = compare.port_tokens("int usable_budget = FreeBudget(); return Run(usable_budget);")
    assert compare.compare(h, same, unspoken=frozenset({"usable_budget"})).new_found == ["free_budget", "usable_budget"]


def test_the_languages_own_words_tell_nothing():
    # a builtin exception and a name from the standard library: a C++ port spells neither so
    h = hunk(
        ["    stride = layout.stride_order()"],
        ["    try:", "        stride = cast(Layout, layout).block_stride_order()", "    except AttributeError:"],
    )
    port = compare.port_tokens("auto stride = layout.BlockStrideOrder();")
    got = compare.compare(h, port)  # the builtin never counts
    assert (got.state, got.new_found, got.new_missing) == ("gap", ["Layout", "block_stride_order"], ["cast"])
    got = compare.compare(h, port, language=hunks.stdlib_names("from typing import cast\n"))
    assert (got.state, got.new_found, got.new_missing) == ("ported", ["Layout", "block_stride_order"], [])


def test_the_standard_librarys_names_are_those_a_file_imports_from_it():
    text = "import os\nfrom typing import cast, TYPE_CHECKING\nfrom collections.abc import Collection as C\n"
    text += "from vllm.config import VllmConfig\nimport torch\nfrom .utils import helper\n"
    assert hunks.stdlib_names(text) == {"os", "cast", "TYPE_CHECKING", "C"}
    # a list over lines, the word in a comment or a name, and an import inside a function
    text = "from dataclasses import (\n    field,\n    important_field,\n)  # import nothing more\n"
    text += "x = 'the important part'\ndef f():\n    import json\n" + "# import " * 5000 + "\n"
    assert hunks.stdlib_names(text) == {"field", "important_field", "json"}


def test_a_c_family_hunk_loses_its_comments_and_a_python_hunk_keeps_its_floor_division():
    lines = [
        "// one thread per block",
        "  blocks[i] = n;  // the count",
        "  /* inline */ total += n;",
        " * the rest of a block comment opened above the hunk",
        " */",
        "  *ptr = 0;",
    ]
    got = compare.without_c_comments(Hunk("csrc/pool.cu", 1, 0, 1, len(lines), [], lines))
    assert got.new == ["", "  blocks[i] = n;", "   total += n;", "", "", "  *ptr = 0;"]
    words = hunks.tokens(got.new)
    assert {"blocks", "total", "ptr"} <= words and not {"thread", "count", "inline", "rest"} & words
    python = Hunk("vllm/pool.py", 1, 0, 1, 1, [], ["    half = n // 2"])
    assert compare.without_c_comments(python) is python


def test_rows_of_literals_need_a_string_and_two_literals():
    assert compare.row_lines(['    "OldNetForLM": "1.4.0",', "}"]) == [frozenset({'"OldNetForLM"', '"1.4.0"'})]
    assert compare.row_lines(["    stride = (0, 3, 4, 5)"]) is None  # numbers alone recur by chance
    assert compare.row_lines(['    mode = pick("fast")']) is None  # a line of code, not a row
    # a port line's literals, its comments left out and its line numbers kept
    rows = compare.literal_rows('int a;\n/* "OldNetForLM"\n */ {"OldNetForLM", "1.4.0"},  // "x" 5\n')
    assert rows == [frozenset(), frozenset(), frozenset({'"OldNetForLM"', '"1.4.0"'})]
