"""Text an upstream change adds that the port repeats: comments and messages (porttrack/evidence/echoes.py)."""

from __future__ import annotations

from porttrack.evidence import echoes
from porttrack.gitio import Hunk


def hunk(path: str, new: list[str], start: int = 10) -> Hunk:
    return Hunk(path, start, 0, start, len(new), [], new)


def test_added_blocks_are_runs_of_comment_lines_with_enough_words():
    h = hunk(
        "vllm/a.py",
        [
            "    # Keep the pool whole: a block handed back twice would be",
            "    # given to two requests at once, see https://example.com/issue/1",
            "    x = 1",
            "    # too short to say much",
            "#!/usr/bin/env python is no comment of ours either way at all",
        ],
    )
    got = echoes.added_blocks([h])
    assert [(b.path, b.line) for b in got] == [("vllm/a.py", 10)]
    assert "https" not in got[0].words and got[0].words[:4] == ("keep", "the", "pool", "whole")


def test_c_family_blocks_read_line_and_block_comments():
    h = hunk(
        "csrc/a.cu",
        ["/* The scale of a padded row is zero, so the", " * padding never turns into NaN downstream. */", "x = 0;"],
    )
    (b,) = echoes.added_blocks([h])
    assert b.words[:3] == ("the", "scale", "of") and b.words[-1] == "downstream"


def test_the_index_finds_a_window_across_wrapped_lines_but_not_across_blocks_or_files():
    a = "// the scale of a padded row is\n// zero so the padding never turns into nan\nint x;\n"
    b = "// the scale of a padded row\nint y;\n// is zero so the padding never turns into nan\n"
    idx = echoes.Index([("src/a.cpp", a), ("src/b.cpp", b)])
    window = tuple(echoes.words("padded row is zero so the padding never"))
    assert idx.find(window) == ("src/a.cpp", 1)
    split = echoes.Index([("src/b.cpp", b)])
    assert split.find(window) is None
    two = echoes.Index(
        [("src/c.cpp", "// the scale of a padded row\n"), ("src/d.cpp", "// is zero so the padding never\n")]
    )
    assert two.find(tuple(echoes.words("a padded row is zero so the padding"))) is None


def test_echo_needs_a_window_on_a_line_new_upstream():
    h = hunk(
        "vllm/a.py",
        ["# the scale of a padded row is zero so the", "# padding never turns into nan, whatever the dtype"],
    )
    (block,) = echoes.added_blocks([h])
    idx = echoes.Index([("src/a.cpp", "// the scale of a padded row is zero so the padding never turns into nan\n")])
    assert echoes.echo(block, idx, lambda lines: True)[1:] == ("src/a.cpp", 1)
    asked: list[list[str]] = []
    assert echoes.echo(block, idx, lambda lines: asked.append(lines) or False) is None
    assert asked[0] == ["# the scale of a padded row is zero so the"]
    assert asked[-1] == [h.new[0], h.new[1]]  # the last window that the port holds spans both lines


def test_added_messages_are_the_sentences_of_string_literals_cut_where_a_value_goes_in():
    h = hunk(
        "vllm/a.py",
        [
            '        raise ValueError(f"budget must not be negative, got {budget}.", key="the budget")',
            '        logger.warning("Request %s asked for more blocks than the pool holds", rid)',
            '        """A docstring explains the code, as a comment does here."""',
            '        # "a quoted phrase inside a comment is no message at all"',
            '        x = "two words"  # "nor is a quote in a trailing comment here"',
            '        raise ValueError(f"budget must not be negative, got {budget}.")',
        ],
    )
    got = echoes.added_messages([h])
    assert [(m.line, m.text) for m in got] == [
        (10, "budget must not be negative, got"),
        (11, "asked for more blocks than the pool holds"),
    ]


def test_added_messages_read_c_family_literals_and_escapes():
    h = hunk("csrc/a.cu", ['  TORCH_CHECK(false, "this kernel needs SM90 or a newer device\\n", x);'])
    assert [m.text for m in echoes.added_messages([h])] == ["this kernel needs SM90 or a newer device"]


def test_a_literal_with_a_control_character_is_no_message():
    """A NUL or an escape byte in a hostile diff is no sentence of a person's, and git takes no NUL."""
    h = hunk("vllm/a.py", ['    f("a message with a \x00 byte held in the middle of it")'])
    assert echoes.added_messages([h]) == []
