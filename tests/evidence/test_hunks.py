"""evidence/hunks: what one changed hunk says, line by line, as pure functions over text.

These run in milliseconds: no repository, no CLI. tests/audit/test_rules_*.py run the same
facts end to end through audit on real repositories.
"""

from __future__ import annotations

from porttrack.evidence import hunks
from porttrack.gitio import Hunk


def hunk(old: list[str], new: list[str], start: int = 10) -> Hunk:
    return Hunk("vllm/core/sched.py", start, len(old), start, len(new), old, new)


def test_comments_docstrings_and_raise_lines_are_no_telling_tokens():
    h = hunk(
        [],
        [
            "        # mentions_a_comment_name",
            '        """Docstring_name_here."""',
            '        raise ValueError("message_text_here")',
            "        return real_code_name",
        ],
    )
    new, old = hunks.distinctive(h)
    assert new == {"real_code_name"} and old == set()


def test_guard_names_are_the_condition_leaves_of_an_added_if_block():
    added = hunk([], ["        if self.config.uses_canvas and self.canvas_ready:", "            self.paint()"])
    assert hunks.guard_names(added) == ["canvas_ready", "uses_canvas"]
    # a rewritten block: what the old and new conditions share
    rewritten = hunk(
        ["        if self.uses_canvas:", "            self.paint()"],
        ["        if self.uses_canvas:", "            self.paint(fast=True)"],
    )
    assert hunks.guard_names(rewritten) == ["uses_canvas"]
    assert hunks.guard_names(hunk([], ["        self.paint()"])) == []  # no if block: no guard
    # old lines wrapped whole in the else of a new block: the condition guards what changes
    old_lines = ["        self.paint()"]
    wrap = [
        "        if self.uses_canvas:",
        "            self.paint_canvas()",
        "        else:",
        "            self.paint()",
    ]
    assert hunks.guard_names(hunk(old_lines, wrap)) == ["uses_canvas"]
    assert hunks.guard_names(hunk(old_lines, [*wrap[:3], "            self.paint(fast=True)"])) == []


def test_a_negated_condition_or_one_side_of_an_or_guards_nothing():
    # where the port lacks `uses_canvas`, `not uses_canvas` holds, and an `or` holds through its other side
    for cond in ("not self.uses_canvas", "self.uses_canvas is None", "self.uses_canvas or self.fallback_ready"):
        assert hunks.guard_names(hunk([], [f"        if {cond}:", "            self.paint()"])) == [], cond
    # of an `and`, the operands that hold only where their names exist still guard, brackets and all
    both = "self.canvas_ready and not self.uses_canvas and (self.mode is None or self.forced)"
    assert hunks.guard_names(hunk([], [f"        if {both}:", "            self.paint()"])) == ["canvas_ready"]
    assert hunks.guard_names(hunk([], ["        if self.hint is not None:", "            self.paint()"])) == ["hint"]


def test_feature_names_are_attributes_calls_and_capitalised_names_not_locals_or_imports():
    line = "        total = helper(self.pool.free_blocks, count) + Budget.LIMIT + torch.zeros(n)"
    names = hunks.feature_names(line, outside=frozenset({"torch", "zeros"}))
    assert set(names) == {"helper", "pool", "free_blocks", "Budget", "LIMIT"}
    assert "total" not in names and "count" not in names
    # a keyword before a bracket is no call
    assert hunks.feature_names("            if (not (self.ready) and ready_count(x)):") == ["ready", "ready_count"]


def test_a_line_inside_brackets_an_earlier_line_opened_continues_that_statement():
    text = "\n".join(
        [
            "def f(a, b):",  # 1
            "    call(",  # 2
            "        a,",  # 3
            '        ")",  # a bracket in a string',  # 4
            "        b,",  # 5
            "    )",  # 6
            "    return a + 1  # (",  # 7: a bracket in a comment opens nothing
            "    x = 2",  # 8
        ]
    )
    assert [hunks.continues_statement(text, n) for n in range(1, 9)] == [
        False,
        False,
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    assert not hunks.continues_statement(text, 99)


def test_a_quote_and_a_bracket_in_a_trailing_comment_hide_no_member_of_the_class():
    text = 'class A:\n    x = 1  # "a" (b\n    def f(self):\n        pass\n'
    assert hunks.class_members(text) == {"x": {"A"}, "f": {"A"}}


def test_a_quote_in_a_comment_or_a_bracket_in_a_docstring_opens_no_statement():
    text = "\n".join(
        [
            "class S:",  # 1
            '    # NOTE: here, "widget" means the outer frame (and',  # 2: a quote and a bracket
            "    # the inner one).",  # 3
            "    def reset(self):",  # 4
            '        """Clear it (all of',  # 5: a bracket a docstring opens
            '        it)."""',  # 6
            "        self.cache.clear(",  # 7
            "            True)",  # 8
            "    def size(self):",  # 9
        ]
    )
    assert [hunks.continues_statement(text, n) for n in range(1, 10)] == [
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
    ]


def test_code_lines_leave_out_comments_blank_lines_and_docstrings():
    text = 'def f():\n    """Doc\n    still doc\n    """\n    # note\n\n    return 1\n'
    assert [hunks.is_code_line(text, n) for n in range(1, 8)] == [True, False, False, False, False, False, True]


def test_lines_inside_a_triple_quoted_string_opened_above_are_found_against_the_whole_file():
    text = "\n".join(
        [
            "def f():",  # 1
            '    """Doc',  # 2
            "    more doc",  # 3
            '    """',  # 4
            "    return 1",  # 5
        ]
    )
    # a hunk that starts at line 3 and runs to line 5
    assert hunks.string_lines(["    more doc", '    """', "    return 1"], 3, text) == {0, 1}
    h = Hunk("a.py", 3, 1, 3, 1, ["    more doc"], ["    more text, reworded"])
    reworded = text.replace("more doc", "more text, reworded")
    assert hunks.without_string_lines(h, text, reworded) == h._replace(old=[], new=[])
    # a quote in a comment or in a string opens nothing: the lines after it are code
    stray = '# a """ in a comment\nx = "a \\"\\"\\" b"\ny = compute_total(x)\n'
    assert hunks.string_lines(["y = compute_total(x)"], 3, stray) == set()


def test_a_hunk_that_opens_a_docstring_itself_reads_it_on_its_own():
    text = 'def f():\n    """Doc\n    more\n    """\n    return compute_total(x)\n'
    h = Hunk("a.py", 1, 0, 2, 4, [], ['    """Doc', "    more", '    """', "    return compute_total(x)"])
    assert hunks.distinctive(hunks.without_string_lines(h, "", text))[0] == {"compute_total"}


def test_a_run_of_backslashes_in_an_unclosed_string_is_read_in_linear_time():
    # a hostile upstream file: with a backslash readable two ways this took hours, not a blink
    text = '"""' + "\\" * 60 + "x\nmore = 2\n"  # the string never closes: no line is inside one
    h = Hunk("a.py", 2, 1, 2, 1, ["more = 1"], ["more = 2"])
    assert hunks.without_string_lines(h, text, text) == h


def test_a_file_version_read_once_is_read_from_memory_until_the_audit_forgets_it():
    text = "class Pool:\n    def take(self, n):\n        return n + 1\n"
    hunks.forget()
    first = hunks.file_tokens(text)
    # an equal text read again (another revision with the same content) is the same reading
    assert hunks.file_tokens("".join(list(text))) is first
    assert hunks.class_members(text) == {"take": {"Pool"}}
    assert hunks.file_tokens.cache_info().currsize == 1
    hunks.forget()  # what an audit does when it ends: the write-back after it needs the memory
    cached = (hunks.file_tokens, hunks.class_members, hunks.outside_names, hunks._strings)
    assert all(f.cache_info().currsize == 0 for f in cached)
    # the tokens ignore Python's own words, whatever the order the scan meets them in
    assert first == {"Pool", "take", "n", "+", "1"}


def test_def_above_names_the_outermost_function_that_holds_a_line():
    text = (
        "import os\n"  # 0
        "\n"
        "class Scheduler:\n"  # 2
        "    def schedule(\n"  # 3
        "        self,\n"
        "        budget: int,\n"
        "    ) -> int:\n"  # 6: a closing bracket at the def's indent ends the signature
        "        def helper():\n"  # 7
        "            return os.sep\n"  # 8: a closure belongs to its method
        "\n"
        "        return helper()\n"  # 10
        "\n"
        "    LIMIT = 4\n"  # 12: class level
        "\n"
        "def top():\n"  # 14
        '    """Plan.\n'
        "\n"
        "Text at column 0 inside the docstring.\n"  # 17
        '    """\n'
        "    def inner():\n"  # 19
        "        pass\n"  # 20: below text at column 0, indentation says nothing
        "    return 1\n"
    )
    held = {row: hunks.def_above(text, row) for row in range(22)}
    assert [held[r] for r in (3, 8, 9, 10)] == ["Scheduler.schedule"] * 4  # its def line, and a blank line in it
    assert held[15] == "top"
    assert held[0] is None and held[2] is None and held[12] is None  # module and class level
    assert held[20] is None and held[21] is None  # no function is claimed where a string misleads


def test_a_string_continued_by_a_backslash_shifts_no_line_after_it():
    # the string's line break is kept: every line below it is read on its own row
    text = "\n".join(
        [
            "def f(a):",  # 1
            '    warn("first half \\',  # 2: the string runs on past the backslash
            'second half",',  # 3
            "         stacklevel=2,",  # 4
            "    )",  # 5
            "    x = (",  # 6
            "        a)",  # 7
            "    return x",  # 8
        ]
    )
    within = [False, False, True, True, True, False, True, False]
    assert [hunks.continues_statement(text, n) for n in range(1, 9)] == within


def test_a_line_begun_above_is_in_brackets_a_string_or_after_a_backslash():
    text = "\n".join(
        [
            "x = call(",  # 1
            "    1)",  # 2: in brackets
            'doc = """one',  # 3
            'two"""',  # 4: in a string
            "y = 1 + \\",  # 5
            "    2",  # 6: after a backslash
            "z = 3",  # 7
        ]
    )
    assert [hunks.begun_above(text, n) for n in range(1, 8)] == [False, True, False, True, False, True, False]
    assert hunks.begun_above(text, 99)  # past the end: cannot be told
    assert hunks.begun_above("a = 1\x0cb = 2\nc = 3\n", 2)  # a form feed: git and Python number apart


def test_a_trailing_comment_is_cut_where_no_string_holds_its_hash():
    assert hunks.uncommented("import vllm._C  # noqa: F401") == "import vllm._C"
    assert hunks.uncommented('tag = "#1"  # the first') == 'tag = "#1"'
    assert hunks.uncommented("x = y") == "x = y"
    assert hunks.feature_code('mode = pick("#1")  # pick(other)') == 'mode = pick("")'


def test_names_that_continue_an_import_opened_above_are_import_lines():
    text = "import os\nfrom m import (\n    a,\n    b,  # kept\n\n    c as d,\n)\nx = (\n    e,\n)\n"
    assert hunks.import_lines(["    b,  # kept", "", "    c as d,", ")"], 4, text) == {0, 2, 3}
    assert hunks.import_lines(["    e,"], 9, text) == set()  # a tuple, not an import
    assert hunks.import_lines(["x = (", "    e,"], 8, text) == set()
    # read in one pass over the file: a long list costs its length once, not once per line
    many = "from m import (\n" + "".join(f"    n{k},\n" for k in range(5000)) + ")\nn0\n"
    assert hunks.import_lines(["    n4999,", ")", "n0"], 5001, many) == {0, 1}


def test_the_lines_of_a_decorator_written_over_several_lines_are_decorator_lines():
    text = (
        "@compiled(\n"  # 1
        '    batch_dims={"x": 0},  # (\n'  # 2: a bracket in a comment opens nothing
        '    note=""")(""",\n'  # 3: nor one in a string
        ")\n"  # 4
        "class M:\n"  # 5
        "    @property\n"  # 6
        "    def n(self):\n"  # 7
        "        return (\n"  # 8
        "            a\n"  # 9
        "            @ b\n"  # 10: a matrix product inside brackets, no decorator
        "        )\n"  # 11
        '    """\n'  # 12
        "    @example(\n"  # 13: inside a string
        "    1)\n"  # 14
        '    """\n'  # 15
    )
    assert hunks.decorator_lines(["@compiled(", '    batch_dims={"x": 0},  # ('], 1, text) == {0, 1}
    assert hunks.decorator_lines(['    note=""")(""",', ")", "class M:"], 3, text) == {0, 1}
    assert hunks.decorator_lines(["    @property", "    def n(self):"], 6, text) == set()  # one line: its regex's
    assert hunks.decorator_lines(["            a", "            @ b", "        )"], 9, text) == set()
    assert hunks.decorator_lines(["    @example(", "    1)"], 13, text) == set()
    # a hunk deep in a long decorator, its opener far above: found by the cheap look first, then exactly
    long = (
        "@register(\n"
        + "".join(f"    k{n}=({n},\n     {n}),\n" for n in range(60))
        + ")\ndef f():\n    return (\n        1\n    )\n"
    )
    assert hunks.decorator_lines(["    k30=(30,", "     30),"], 62, long) == {0, 1}
    assert hunks.decorator_lines(["        1", "    )"], 125, long) == set()  # the function's own brackets
