"""refactor: which changed lines carry no behaviour, each finder on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import one_change

from porttrack import gitio
from porttrack.evidence import refactor
from porttrack.evidence.hunks import code_line_indices

BASE = """\
def step(tokens, budget):
    limit = budget
    if tokens > limit:
        raise ValueError(
            f"{tokens} tokens exceed {limit}"
        )
    return min(tokens, limit)


def free(
    request,
    eager=False,
):
    return request
"""


def explained(
    tmp_path: Path, before: dict[str, str], after: dict[str, str], *, search: str = ""
) -> tuple[dict, list[gitio.Hunk]]:
    """What the finders explain in the change from `before` to `after`. `search`: "grep" lets the
    dead-code finder search the tree with git grep, "blind" gives it a search that finds nothing."""
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, ["."]) or []
    readers = {
        "grep": lambda names: gitio.grep_rev(repo, f"{sha}^", names, ["*.py"]),
        "blind": lambda names: [],
    }.get(search)
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p), readers)
    return refactor.explain(hunks, texts), hunks


def kinds(found: dict) -> set[str]:
    return set(found.values())


def changed_lines(hunks: list[gitio.Hunk]) -> int:
    return sum(len(code_line_indices(h.old)) + len(code_line_indices(h.new)) for h in hunks)


def test_a_renamed_local_and_a_reworded_message_explain_every_line(tmp_path):
    after = BASE.replace("limit", "cap").replace('f"{tokens} tokens exceed {cap}"', 'f"asked {tokens}, cap {cap}"')
    found, hunks = explained(tmp_path, {"m.py": BASE}, {"m.py": after})
    assert kinds(found) == {refactor.RENAME, refactor.MESSAGE}
    assert len(found) == changed_lines(hunks)


def test_a_message_line_continued_from_above_is_message_text_and_a_plain_string_is_not(tmp_path):
    # the changed line of each message neither raises nor warns: the statement it continues does
    before = (
        "import warnings\n\n\ndef go(a):\n"
        '    warnings.warn("flag is \\\n'
        'ignored",\n'
        "                  stacklevel=2)\n"
        "    if a:\n"
        "        raise ValueError \\\n"
        '            ("flag is old")\n'
        '    mode = "fast"\n'
        "    return a\n"
    )
    after = before.replace("ignored", "dropped").replace('"flag is old"', '"flag is gone"')
    found, hunks = explained(tmp_path / "a", {"m.py": before}, {"m.py": after})
    assert kinds(found) == {refactor.MESSAGE}
    assert len(found) == changed_lines(hunks)
    found, hunks = explained(tmp_path / "b", {"m.py": before}, {"m.py": before.replace('"fast"', '"slow"')})
    assert found == {}


def test_a_rename_of_a_name_the_file_keeps_is_no_rename(tmp_path):
    # `budget` stays in the file after the change: reading another name is behaviour
    after = BASE.replace("    limit = budget\n", "    limit = tokens\n")
    found, _ = explained(tmp_path, {"m.py": BASE}, {"m.py": after})
    assert refactor.RENAME not in kinds(found)


def test_a_changed_string_outside_a_message_is_behaviour(tmp_path):
    before = BASE + '\n\ndef mode(m):\n    return m == "fast"\n'
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": before.replace('"fast"', '"slow"')})
    assert len(found) < changed_lines(hunks)


def test_an_unused_parameter_and_a_read_one(tmp_path):
    found, _ = explained(tmp_path / "a", {"m.py": BASE}, {"m.py": BASE.replace("    eager=False,\n", "")})
    assert kinds(found) == {refactor.UNUSED}
    read = BASE.replace("    return request\n", "    return request if eager else None\n")
    found, _ = explained(
        tmp_path / "b",
        {"m.py": read},
        {"m.py": read.replace("    eager=False,\n", "").replace(" if eager else None", "")},
    )
    assert refactor.UNUSED not in kinds(found)


def test_code_moved_to_another_file(tmp_path):
    free = BASE[BASE.index("def free") :]
    found, hunks = explained(tmp_path, {"m.py": BASE}, {"m.py": BASE.replace("\n\n" + free, "\n"), "n.py": free})
    assert kinds(found) == {refactor.MOVED}
    assert len(found) == changed_lines(hunks)
    # lines that appear nowhere on the other side stay unexplained
    found, hunks = explained(
        tmp_path / "b",
        {"m.py": BASE},
        {"m.py": BASE.replace("\n\n" + free, "\n"), "n.py": free.replace("request\n", "None\n")},
    )
    assert len(found) < changed_lines(hunks)


def test_a_short_module_level_definition_moved_whole_is_moved(tmp_path):
    short = 'def is_fp8(dtype):\n    return dtype.startswith("fp8")\n'
    base = BASE + "\n\n" + short
    found, hunks = explained(tmp_path, {"m.py": base}, {"m.py": BASE, "n.py": short})
    assert kinds(found) == {refactor.MOVED}
    assert len(found) == changed_lines(hunks) == 4
    # two lines that are no definition recur by chance; a definition whose body changed did not move
    pair = "LIMIT = 4\nSCALE = 2\n"
    found, _ = explained(tmp_path / "b", {"m.py": BASE + "\n" + pair}, {"m.py": BASE, "n.py": pair})
    assert not found
    found, _ = explained(tmp_path / "c", {"m.py": base}, {"m.py": BASE, "n.py": short.replace("fp8", "fp16")})
    assert refactor.MOVED not in kinds(found)


LEDGER = """\
class Ledger:
    def __init__(self, rows):
        self.rows = rows

    @property
    def total(self):
        return sum(self.rows)

    def settle(self, keys: list[int], eager: bool = False) -> int:
        pending = list(keys)
        done = [k for k in pending if k > 0]
        return len(done) + self.total


def report(ledger):
    return ledger.total
"""


def test_annotations_of_a_signature_carry_no_behaviour(tmp_path):
    after = LEDGER.replace("keys: list[int], eager: bool = False) -> int:", "keys: tuple[int, ...], eager=False):")
    found, hunks = explained(tmp_path, {"m.py": LEDGER}, {"m.py": after})
    assert kinds(found) == {refactor.ANNOTATION}
    assert len(found) == changed_lines(hunks)
    # a default value is behaviour, annotated or not
    found, hunks = explained(
        tmp_path / "b", {"m.py": LEDGER}, {"m.py": LEDGER.replace("= False) -> int", "= True) -> int")}
    )
    assert len(found) < changed_lines(hunks)


def test_annotations_changed_as_the_signature_is_broken_over_lines_carry_no_behaviour(tmp_path):
    # a formatter breaks the line the longer annotation made too long, with a trailing comma
    after = LEDGER.replace(
        "    def settle(self, keys: list[int], eager: bool = False) -> int:\n",
        "    def settle(\n        self,\n        keys: Sequence[tuple[int, ...]],\n        eager: bool = False,\n    ) -> int:\n",
    )
    found, hunks = explained(tmp_path, {"m.py": LEDGER}, {"m.py": after})
    assert kinds(found) == {refactor.ANNOTATION}
    assert len(found) == changed_lines(hunks)
    # a default changed on the way is behaviour
    found, hunks = explained(tmp_path / "b", {"m.py": LEDGER}, {"m.py": after.replace("= False,", "= True,")})
    assert len(found) < changed_lines(hunks)
    # so is a parameter added as the line is broken
    found, hunks = explained(
        tmp_path / "c",
        {"m.py": LEDGER},
        {"m.py": after.replace("        self,\n", "        self,\n        limit=0,\n")},
    )
    assert len(found) < changed_lines(hunks)


def test_an_annotated_line_outside_a_signature_is_behaviour(tmp_path):
    # a dict entry reads like a parameter (`name: value,`); only a `def` signature holds annotations
    before = "TABLE = {\n    step: 1,\n}\n"
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": before.replace("step: 1", "step: 2")})
    assert len(found) < changed_lines(hunks)


def test_a_copy_dropped_or_bound_to_a_name_carries_no_behaviour(tmp_path):
    after = LEDGER.replace("        pending = list(keys)\n", "").replace("in pending", "in keys")
    found, hunks = explained(tmp_path, {"m.py": LEDGER}, {"m.py": after})
    assert kinds(found) == {refactor.COPY}
    assert len(found) == changed_lines(hunks)
    # a name the file still reads after the change is no copy to drop
    kept = LEDGER.replace("+ self.total", "+ len(pending)")
    found, hunks = explained(tmp_path / "b", {"m.py": kept}, {"m.py": kept.replace("in pending", "in keys")})
    assert len(found) < changed_lines(hunks)


def test_a_property_that_became_a_method(tmp_path):
    after = (
        LEDGER.replace("    @property\n", "")
        .replace("self.total", "self.total()")
        .replace("ledger.total\n", "ledger.total()\n")
    )
    found, hunks = explained(tmp_path, {"m.py": LEDGER}, {"m.py": after})
    assert refactor.PROPERTY in kinds(found)
    assert len(found) == changed_lines(hunks) - 1  # the decorator is `[audit] language_only`'s
    # calling what was a plain method all along is behaviour: it was passed, now its result is
    plain = LEDGER.replace("    @property\n", "")
    found, hunks = explained(
        tmp_path / "b", {"m.py": plain}, {"m.py": plain.replace("ledger.total\n", "ledger.total()\n")}
    )
    assert len(found) < changed_lines(hunks)


def test_a_line_that_changes_only_its_indent_is_behaviour(tmp_path):
    # out of the `with`: the same text, now run after the lock is let go
    before = "def step(n, lock):\n    with lock:\n        n = n.copy()\n        n = n + [1]\n    return n\n"
    after = "def step(n, lock):\n    with lock:\n        n = n.copy()\n    n = n + [1]\n    return n\n"
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": after})
    assert len(found) < changed_lines(hunks)


def test_a_trailing_comment_carries_no_behaviour(tmp_path):
    after = BASE.replace("    return min(tokens, limit)", "    return min(tokens, limit)  # type: ignore[arg-type]")
    found, hunks = explained(tmp_path, {"m.py": BASE}, {"m.py": after})
    assert kinds(found) == {refactor.COMMENT}
    assert len(found) == changed_lines(hunks)
    # a `#` inside a string is text: the string changed, which is behaviour
    moved = BASE.replace('exceed {limit}"', 'exceed {limit} # of"')
    found, hunks = explained(tmp_path / "b", {"m.py": BASE}, {"m.py": moved})
    assert refactor.COMMENT not in kinds(found)
    # nor does a comment excuse a line that also moved out of its block
    indent = BASE.replace(
        "    limit = budget\n    if tokens > limit:", "    limit = budget\n    if tokens > limit:  # cap"
    )
    indent = indent.replace("    return min(tokens, limit)", "        return min(tokens, limit)  # cap")
    found, hunks = explained(tmp_path / "c", {"m.py": BASE}, {"m.py": indent})
    assert len(found) < changed_lines(hunks)


def test_a_file_nested_past_the_parser_explains_nothing_and_raises_nothing(tmp_path):
    # the parser gives up on such a file with RecursionError: the finders that parse explain nothing
    deep = "x = a" + ".b" * 200000 + "\n"
    after = LEDGER.replace("eager: bool = False) -> int:", "eager: int = False):")
    found, hunks = explained(tmp_path, {"m.py": LEDGER + deep}, {"m.py": after + deep})
    assert refactor.ANNOTATION not in kinds(found)
    assert len(found) < changed_lines(hunks)


ROUTER = """\
import logging

from . import fast_path

logger = logging.getLogger(__name__)


class FastRouter:
    def route(self, req):
        if fast_path.is_supported(req):
            logger.info("routing %s", req)
            req.tag = "FastRouter:fast_path"
            return fast_path.run(req)
        return None
"""


def test_a_module_or_class_renamed_throughout_carries_no_behaviour(tmp_path):
    # the import binds the module's name, the `class` line the class's; a string names the new ones
    mod = "def is_supported(req):\n    return req.size > 0\n\n\ndef run(req):\n    return req.size * 2\n"
    after = ROUTER.replace("fast_path", "fast_path_v2").replace("FastRouter", "QuickRouter")
    found, hunks = explained(
        tmp_path, {"m.py": ROUTER, "fast_path.py": mod}, {"m.py": after, "fast_path.py": None, "fast_path_v2.py": mod}
    )
    assert kinds(found) == {refactor.RENAME, refactor.MOVED}
    assert len(found) == changed_lines(hunks)
    # the same import of another module, whose file the change does not rename, may be other code
    found, hunks = explained(tmp_path / "d", {"m.py": ROUTER}, {"m.py": after})
    assert len(found) < changed_lines(hunks)
    # a string that changes by more than the rename is behaviour
    worded = ROUTER.replace("FastRouter", "QuickRouter").replace('"QuickRouter:fast_path"', '"Quick:fast_path"')
    found, hunks = explained(tmp_path / "b", {"m.py": ROUTER}, {"m.py": worded})
    assert len(found) < changed_lines(hunks)
    # a name the change does not bind (here an attribute) is no rename of this code's own
    called = ROUTER.replace("fast_path.run(req)", "fast_path.run_v2(req)")
    found, hunks = explained(tmp_path / "c", {"m.py": ROUTER}, {"m.py": called})
    assert len(found) < changed_lines(hunks)


EXPORTS = """\
from .a import Alpha, Beta

__all__ = [
    "Alpha",
]

try:
    from .c import Gamma

    __all__ += [
        "Gamma",
    ]
except ImportError:
    pass
"""


def test_the_export_list_carries_no_behaviour(tmp_path):
    after = EXPORTS.replace('    "Alpha",\n', '    "Alpha",\n    "Beta",\n').replace(
        '"Gamma",\n', '"Gamma",\n        "Delta",\n'
    )
    found, hunks = explained(tmp_path, {"m.py": EXPORTS}, {"m.py": after})
    assert kinds(found) == {refactor.EXPORT}
    assert len(found) == changed_lines(hunks)
    # the same quoted names in another list are data the code reads
    table = EXPORTS.replace("__all__ = [", "KINDS = [")
    found, hunks = explained(tmp_path / "b", {"m.py": table}, {"m.py": table.replace('"Alpha",', '"Beta",')})
    assert len(found) < changed_lines(hunks)


def test_a_raise_that_became_a_warning_is_behaviour(tmp_path):
    before = (
        'def check(mm):\n    if mm:\n        raise NotImplementedError(\n            "no multimodal yet"\n        )\n'
    )
    reworded = before.replace('"no multimodal yet"', '"multimodal is not supported yet"')
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": reworded})
    assert kinds(found) == {refactor.MESSAGE}
    assert len(found) == changed_lines(hunks)
    # the wording changed and so did what it does: it warns and goes on
    warns = reworded.replace("raise NotImplementedError(", "logger.warning(")
    found, hunks = explained(tmp_path / "b", {"m.py": before}, {"m.py": warns})
    assert len(found) < changed_lines(hunks)
    # so is a raise of another exception
    other = reworded.replace("raise NotImplementedError(", "raise ValueError(")
    found, hunks = explained(tmp_path / "c", {"m.py": before}, {"m.py": other})
    assert len(found) < changed_lines(hunks)


def dead_in(tmp_path: Path, before: dict[str, str], after: dict[str, str], *, blind: bool = False) -> set[str]:
    """The removed lines the dead-code finder explains (stripped), the tree searched with git grep
    (or, `blind`, a search that finds nothing at all: no positive control)."""
    found, hunks = explained(tmp_path, before, after, search="blind" if blind else "grep")
    return {hunks[k].old[i].strip() for (k, side, i), what in found.items() if what == refactor.DEAD}


DEAD = """\
import os

TABLE = {
    "OLD_WAIT": lambda: int(os.getenv("OLD_WAIT", "5")),
    "KEPT": lambda: 1,
}
LIMIT = 4
MADE = make_limit()


class Pool:
    def drain(self):
        return 0
"""


def test_dead_code_is_what_nothing_in_the_tree_reads_and_the_search_must_find_the_definition(tmp_path):
    gone = DEAD.replace('    "OLD_WAIT": lambda: int(os.getenv("OLD_WAIT", "5")),\n', "")
    gone = gone.replace("LIMIT = 4\nMADE = make_limit()\n", "").replace(
        "    def drain(self):\n        return 0\n", "    pass\n"
    )
    reader = {"other.py": "from m import Pool\n\nPool().drain()\n"}
    assert dead_in(tmp_path / "a", {"m.py": DEAD, **reader}, {"m.py": gone, **reader}) == {
        '"OLD_WAIT": lambda: int(os.getenv("OLD_WAIT", "5")),',
        "LIMIT = 4",
    }  # `drain` has a reader elsewhere; `MADE = make_limit()` runs code when the module loads
    assert dead_in(tmp_path / "b", {"m.py": DEAD}, {"m.py": gone}, blind=True) == set()


def test_a_removed_module_constant_another_module_reads_is_no_unused_parameter(tmp_path):
    before = {"m.py": "LIMIT = 4\nSTEP = 2\n", "other.py": "from m import LIMIT\n\nprint(LIMIT)\n"}
    after = {"m.py": "STEP = 2\n", "other.py": before["other.py"]}
    found, hunks = explained(tmp_path, before, after)
    assert found == {} and changed_lines(hunks) == 1


def test_a_parameter_removed_with_its_forward_is_unused(tmp_path):
    before = "def outer(\n    tokens,\n    eager=False,\n):\n    return inner(\n        tokens,\n        eager=eager,\n    )\n"
    after = before.replace("    eager=False,\n", "").replace("        eager=eager,\n", "")
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": after})
    assert kinds(found) == {refactor.UNUSED} and len(found) == changed_lines(hunks) == 2


def test_a_keyword_argument_of_a_call_is_no_parameter(tmp_path):
    before = 'REGISTRY = make_registry(\n    fast="FastConfig",\n    slow="SlowConfig",\n)\n'
    found, hunks = explained(tmp_path, {"m.py": before}, {"m.py": before.replace('    slow="SlowConfig",\n', "")})
    assert found == {} and changed_lines(hunks) == 1  # a registration dropped is behaviour


BRANCHES = """\
def build(kind, heads, dim, prefix):
    if kind == "encoder":
        layer = make(
            heads,
            dim,
            prefix=f"{prefix}.attn",
        )
    else:
        layer = make(
            heads,
            dim,
            prefix=f"{prefix}.attn",
        )
    return layer
"""

MERGED_BRANCHES = """\
def build(kind, heads, dim, prefix):
    layer = make(
        heads,
        dim,
        prefix=f"{prefix}.attn",
    )
    return layer
"""


def test_an_if_whose_branches_are_the_same_code_merged_into_one_copy_carries_no_behaviour(tmp_path):
    found, hunks = explained(tmp_path, {"m.py": BRANCHES}, {"m.py": MERGED_BRANCHES})
    assert len(found) == changed_lines(hunks)
    assert refactor.MERGED in kinds(found)
    # branches that differ by one argument were a choice: merging them is behaviour
    differ = BRANCHES.replace(
        'prefix=f"{prefix}.attn",\n        )\n    return', "prefix=prefix,\n        )\n    return"
    )
    found, hunks = explained(tmp_path / "b", {"m.py": differ}, {"m.py": MERGED_BRANCHES})
    assert len(found) < changed_lines(hunks)
    # a test that calls something runs it: dropping the test drops that call
    calls = BRANCHES.replace('if kind == "encoder":', "if check(kind):")
    found, hunks = explained(tmp_path / "c", {"m.py": calls}, {"m.py": MERGED_BRANCHES})
    assert len(found) < changed_lines(hunks)
    # the branches removed with no copy left in their place: the code no longer runs at all
    gone = MERGED_BRANCHES.replace(
        '    layer = make(\n        heads,\n        dim,\n        prefix=f"{prefix}.attn",\n    )\n',
        "    layer = None\n",
    )
    found, hunks = explained(tmp_path / "d", {"m.py": BRANCHES}, {"m.py": gone})
    assert len(found) < changed_lines(hunks)


def test_branches_nested_past_what_the_comparison_can_follow_explain_nothing_and_raise_nothing(tmp_path):
    deep = "-" * 2000 + "1"  # parses, but comparing its syntax trees overflows the stack
    before = f"def f(a):\n    if a:\n        x = {deep}\n    else:\n        x = {deep}\n    return x\n"
    after = f"def f(a):\n    x = {deep}\n    return x\n"
    found, _ = explained(tmp_path, {"m.py": before}, {"m.py": after})
    assert refactor.MERGED not in kinds(found)
