"""repeats: assignments a change removes because the same block makes them again, on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import code_lines, one_change

from porttrack import gitio
from porttrack.evidence import refactor, repeats

INIT = """\
def init(layer, config):
    method = config.method_for(layer) if config else None

    # the scales first: loading reads them
    layer.set_scales(1.0)
    layer.out_scale = None

    method = config.method_for(layer) if config else None
    if method is not None:
        method.attach(layer)
"""

FIRST = "    method = config.method_for(layer) if config else None\n\n"


def explained(tmp_path: Path, before: str, after: str) -> tuple[dict, list[gitio.Hunk]]:
    """What the finder explains among every changed code line of the change to m.py."""
    repo, sha, show = one_change(tmp_path, {"m.py": before}, {"m.py": after})
    hunks = gitio.diff_hunks(repo, sha, ["m.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    return repeats.explain(hunks, texts, code_lines(hunks)), hunks


def test_an_assignment_the_block_makes_again_unread_is_repeated(tmp_path):
    found, hunks = explained(tmp_path, INIT, INIT.replace(FIRST, "", 1))
    assert set(found.values()) == {repeats.REPEATED}
    assert set(found) == code_lines(hunks) and len(found) == 1


def test_an_assignment_read_before_its_repeat_or_repeated_otherwise_is_behaviour(tmp_path):
    cases = {
        # the value is read before the block assigns it again
        "read": INIT.replace("    layer.out_scale = None\n", "    layer.out_scale = method\n"),
        # the block assigns the name again, from another value
        "other value": INIT.replace(
            "\n    method = config.method_for(layer) if config else None\n    if", "\n    method = None\n    if"
        ),
        # the block may leave before the repeat runs
        "returns": INIT.replace("    layer.out_scale = None\n", "    if layer.frozen:\n        return\n"),
        # the repeat sits in another block
        "nested": INIT.replace(
            "\n    method = config.method_for(layer) if config else None\n    if",
            "\n    if layer.ready:\n        method = config.method_for(layer) if config else None\n    if",
        ),
    }
    # the value reads the name: the repeat applies it to what the first assignment made
    cases["reads itself"] = INIT.replace("config.method_for(layer) if config else None", "wrap(method)")
    for name, before in cases.items():
        first = (
            FIRST if FIRST in before else FIRST.replace("config.method_for(layer) if config else None", "wrap(method)")
        )
        after = before.replace(first, "", 1)
        assert after != before, name
        found, _ = explained(tmp_path / name.replace(" ", "-"), before, after)
        assert not found, name
    # both assignments removed: nothing repeats the value any more
    both = INIT.replace(FIRST, "", 1).replace("    method = config.method_for(layer) if config else None\n", "")
    found, _ = explained(tmp_path / "both", INIT, both.replace("if method is not None", "if config"))
    assert not found
