"""porttrack/evidence/reflow.py on real diffs: code broken over other lines, with language-only
constructs put in or taken out, is the same code."""

from __future__ import annotations

from pathlib import Path

from conftest import one_change

from porttrack import gitio
from porttrack.config import LANGUAGE_ONLY
from porttrack.evidence import hunks as hunks_mod, refactor, reflow

BEFORE = """\
def build(n, m):
    starts = (
        torch.arange(n)
        * m
    )
    table = torch.zeros([n, m], dtype=torch.int32)
    return starts, table
"""

AFTER = """\
def build(n, m):
    starts = (
        torch.arange(n)
        * m
    ).pin_memory()
    table = torch.zeros(
        [n, m],
        dtype=torch.int32,
        pin_memory=True,
    )
    return starts, table
"""


def reflowed(tmp_path: Path, before: str, after: str) -> tuple[dict, int]:
    """What the finder explains of the change, and how many lines the constructs leave unexplained."""
    repo, sha, show = one_change(tmp_path, {"m.py": before}, {"m.py": after})
    hunks = gitio.diff_hunks(repo, sha, ["."]) or []
    lo = hunks_mod.language_only(hunks, LANGUAGE_ONLY)
    return reflow.explain(
        hunks, LANGUAGE_ONLY, lo.unexplained, refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    ), len(lo.unexplained)


def test_a_call_broken_over_lines_with_a_construct_added_is_the_same_code(tmp_path):
    found, left = reflowed(tmp_path, BEFORE, AFTER)
    assert left and len(found) == left
    assert set(found.values()) == {reflow.REFLOWED}


def test_a_changed_token_anywhere_keeps_the_hunk_behaviour(tmp_path):
    for n, after in enumerate(
        (
            AFTER.replace("        [n, m],\n", "        [m, n],\n"),  # the same tokens in another order
            AFTER.replace("    ).pin_memory()\n", "    ).pin_memory() + 1\n"),  # more than the construct
            AFTER.replace("        dtype=torch.int32,\n", "        dtype=torch.int64,\n"),
        )
    ):
        found, left = reflowed(tmp_path / str(n), BEFORE, after)
        assert left and len(found) < left, after


def test_a_trailing_comma_is_no_token_but_a_comma_between_values_is(tmp_path):
    before = "def f(a, b):\n    return g(a, b)\n"
    found, left = reflowed(tmp_path, before, "def f(a, b):\n    return g(\n        a,\n        b,\n    )\n")
    assert left and len(found) == left
    found, left = reflowed(tmp_path / "joined", before, "def f(a, b):\n    return g(\n        ab,\n    )\n")
    assert len(found) < left


def test_without_takes_out_the_call_or_the_value_of_a_construct():
    import re

    rx = re.compile(LANGUAGE_ONLY["pin_memory"])
    assert reflow._without(").pin_memory()", rx) == ")"
    assert reflow._without("x = f(a, pin_memory=is_pinned(b), c=1)", rx) == "x = f(a, , c=1)"


def test_a_python_line_moved_into_a_block_by_its_indent_is_behaviour(tmp_path):
    before = "def f(xs, tag):\n    out = []\n    for x in xs:\n        if tag:\n            x = x * 2\n    out.append(x)\n    return out\n"
    after = before.replace("\n    out.append(x)\n", "\n        out.append(x)\n")
    found, left = reflowed(tmp_path, before, after)
    assert left and not found
    # inside brackets an indent places nothing: those lines are still the same code
    call = "def f(a, b):\n    return g(\n        a,\n        b)\n"
    found, left = reflowed(
        tmp_path / "call", call, call.replace("        a,\n        b)\n", "            a,\n            b,\n    )\n")
    )
    assert left and len(found) == left
