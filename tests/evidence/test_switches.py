"""switches: parameters that only turn messages on or off, on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import code_lines, one_change

from porttrack import gitio
from porttrack.evidence import refactor, switches

BLOCKS = """\
import logging

logger = logging.getLogger(__name__)


def override(config, blocks):
    \"\"\"The block count, or the configured override.\"\"\"
    if config.override is not None:
        logger.info("overriding %d blocks", blocks)
        blocks = config.override
    return blocks


def plan(config, memory, page):
    blocks = memory // page
    return override(config, blocks)
"""

QUIET = """\
import logging

logger = logging.getLogger(__name__)


def override(config, blocks, quiet=False):
    \"\"\"The block count, or the configured override; `quiet` keeps the log line out.\"\"\"
    if config.override is not None:
        if not quiet:
            logger.info("overriding %d blocks", blocks)
        blocks = config.override
    return blocks


def plan(config, memory, page, quiet: bool = False):
    blocks = memory // page
    return override(config, blocks, quiet=quiet)
"""

RUNNER = """\
class Runner:
    def profile(self, config):
        from blocks import plan

        return plan(config, 0, 1{extra})
"""


def explained(tmp_path: Path, before: dict[str, str], after: dict[str, str], path: str) -> tuple[dict, list]:
    """What the finder explains in `path`'s hunks of a real commit, reading all of its hunks."""
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, [path]) or []
    every = gitio.diff_hunks(repo, sha, sorted(after)) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    return switches.explain(hunks, texts, every=every), hunks


def test_a_parameter_that_only_quiets_a_log_line_is_explained_where_it_is_added_and_passed(tmp_path):
    found, hunks = explained(tmp_path, {"blocks.py": BLOCKS}, {"blocks.py": QUIET}, "blocks.py")
    assert set(found.values()) == {switches.SWITCH}
    assert code_lines(hunks) <= set(found) and len(code_lines(hunks)) == 9  # the signatures, guard, call


def test_a_call_site_that_passes_a_removed_switch_is_explained_through_a_function_level_import(tmp_path):
    before = {"blocks.py": QUIET, "runner.py": RUNNER.format(extra=", quiet=True")}
    after = {"blocks.py": BLOCKS, "runner.py": RUNNER.format(extra="")}
    found, hunks = explained(tmp_path, before, after, "runner.py")
    assert set(found) == code_lines(hunks) and len(found) == 2
    # where the callee's parameter does something besides logging, dropping it is behaviour
    busy = QUIET.replace("            logger.info(", "            blocks += 1\n            logger.info(")
    found, _ = explained(tmp_path / "busy", {**before, "blocks.py": busy}, after, "runner.py")
    assert found == {}
    # a switch the change leaves alone is not looked up: no guard comes or goes
    found, _ = explained(tmp_path / "kept", before, {**after, "blocks.py": QUIET}, "runner.py")
    assert found == {}


def test_a_guard_with_behaviour_or_an_else_is_no_switch(tmp_path):
    counted = QUIET.replace(
        '            logger.info("overriding %d blocks", blocks)\n',
        '            logger.info("overriding %d blocks", blocks)\n            config.logged += 1\n',
    )
    found, _ = explained(tmp_path, {"blocks.py": BLOCKS}, {"blocks.py": counted}, "blocks.py")
    assert found == {}
    branched = QUIET.replace(
        '            logger.info("overriding %d blocks", blocks)\n',
        '            logger.info("overriding %d blocks", blocks)\n        else:\n            blocks -= 1\n',
    )
    found, _ = explained(tmp_path / "else", {"blocks.py": BLOCKS}, {"blocks.py": branched}, "blocks.py")
    assert found == {}


def test_a_switch_passed_to_a_parameter_that_is_not_one_explains_nothing(tmp_path):
    # `plan` passes `quiet` on as `blocks`-changing input to a function that uses it as a count
    other = QUIET.replace(
        "return override(config, blocks, quiet=quiet)", "return override(config, blocks, strict=quiet)"
    )
    other = other.replace(
        "def override(config, blocks, quiet=False):", "def override(config, blocks, quiet=False, strict=False):"
    )
    other = other.replace("    return blocks\n", "    return blocks + strict\n", 1)
    base = BLOCKS.replace("def override(config, blocks):", "def override(config, blocks, strict=False):").replace(
        "    return blocks\n", "    return blocks + strict\n", 1
    )
    found, hunks = explained(tmp_path, {"blocks.py": base}, {"blocks.py": other}, "blocks.py")
    plan_lines = {
        (k, side, i)
        for k, h in enumerate(hunks)
        for side in ("old", "new")
        for i, x in enumerate(getattr(h, side))
        if "plan" in x or "strict=quiet" in x
    }
    assert plan_lines and not plan_lines & set(found)


def test_files_that_do_not_parse_explain_nothing(tmp_path):
    found, _ = explained(tmp_path, {"blocks.py": BLOCKS + "def (:\n"}, {"blocks.py": QUIET + "def (:\n"}, "blocks.py")
    assert found == {}


def test_a_function_nested_past_what_can_be_compared_explains_nothing(tmp_path):
    deep = "\n\ndef total():\n    return " + " + ".join(["1"] * 400) + "\n"
    quiet_deep = QUIET.replace("    return blocks\n", "    return blocks + total()\n", 1) + deep
    base_deep = BLOCKS.replace("    return blocks\n", "    return blocks + total()\n", 1) + deep
    deeper = quiet_deep.replace(
        "    blocks = memory // page\n", "    blocks = memory // page + " + " + ".join(["1"] * 400) + "\n"
    )
    based = base_deep.replace(
        "    blocks = memory // page\n", "    blocks = memory // page + " + " + ".join(["1"] * 400) + "\n"
    )
    found, hunks = explained(tmp_path, {"blocks.py": based}, {"blocks.py": deeper}, "blocks.py")
    passing = {(k, "new", i) for k, h in enumerate(hunks) for i, x in enumerate(h.new) if "quiet=quiet" in x}
    guard = {(k, "new", i) for k, h in enumerate(hunks) for i, x in enumerate(h.new) if "if not quiet" in x}
    assert passing and not passing & set(found)  # `plan` could not be compared: its lines stay unexplained
    assert guard <= set(found)  # `override` still could


def test_a_callee_losing_its_switch_outside_the_queues_paths_is_found_in_the_whole_change(tmp_path):
    # the queue holds only runner.py; the guard the change removes lies in blocks.py, beyond it
    before = {"blocks.py": QUIET, "runner.py": RUNNER.format(extra=", quiet=True")}
    after = {"blocks.py": BLOCKS, "runner.py": RUNNER.format(extra="")}
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, ["runner.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    assert switches.explain(hunks, texts, every=hunks) == {}
    asked: list[int] = []

    def whole() -> list[gitio.Hunk] | None:
        asked.append(1)
        return gitio.diff_hunks(repo, sha, sorted(after))

    found = switches.explain(hunks, texts, every=hunks, whole=whole)
    assert set(found) == code_lines(hunks) and len(found) == 2 and asked == [1]
    # a change where no switch may come or go never asks for the whole change
    plain = {"blocks.py": BLOCKS, "runner.py": RUNNER.format(extra="")}
    repo, sha, show = one_change(tmp_path / "plain", plain, {**plain, "runner.py": RUNNER.format(extra=" + 1")})
    hunks = gitio.diff_hunks(repo, sha, ["runner.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    asked.clear()
    assert switches.explain(hunks, texts, every=hunks, whole=whole) == {} and asked == []
    # nor one whose line does more than drop the keyword
    mixed = {"blocks.py": BLOCKS, "runner.py": RUNNER.format(extra=" + 1")}
    repo, sha, show = one_change(tmp_path / "mixed", {**before, "blocks.py": BLOCKS}, mixed)
    hunks = gitio.diff_hunks(repo, sha, ["runner.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    assert switches.explain(hunks, texts, every=hunks, whole=whole) == {} and asked == []
