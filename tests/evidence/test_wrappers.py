"""wrappers: values wrapped in a call that only adds a message, on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import code_lines, one_change

from porttrack import gitio
from porttrack.evidence import refactor, wrappers

SETTINGS = """\
import os

settings = {
    "BLOCKS": lambda: int(os.environ.get("BLOCKS", "16")),
    "PAGED": lambda: os.environ.get("PAGED", "1") == "1",
}
"""

WRAPPED = """\
import os
import warnings


def deprecated(name, getter):
    \"\"\"Warn when the setting is used, then read it.\"\"\"

    def _read():
        if name in os.environ:
            warnings.warn(f"{name} is deprecated", FutureWarning)
        return getter()

    return _read


settings = {
    "BLOCKS": lambda: int(os.environ.get("BLOCKS", "16")),
    "PAGED": deprecated(
        "PAGED",
        lambda: os.environ.get("PAGED", "1") == "1",
    ),
}
"""

CONSTANT = """\
LIMIT = 64
"""

CONSTANT_WRAPPED = """\
import logging

logger = logging.getLogger(__name__)


def announced(value, what):
    logger.info("using %s", what)
    return value


LIMIT = announced(64, what="limit")
"""


def explained(tmp_path: Path, before: str, after: str) -> tuple[dict, list]:
    repo, sha, show = one_change(tmp_path, {"settings.py": before}, {"settings.py": after})
    hunks = gitio.diff_hunks(repo, sha, ["settings.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    return wrappers.explain(hunks, texts), hunks


def test_a_getter_wrapped_to_warn_is_explained_with_the_wrapper_it_adds(tmp_path):
    found, hunks = explained(tmp_path, SETTINGS, WRAPPED)
    assert set(found.values()) == {wrappers.WRAPPER}
    assert code_lines(hunks) <= set(found) and len(code_lines(hunks)) >= 12
    # and the other way: the wrapper removed, the getter unwrapped
    found, hunks = explained(tmp_path / "back", WRAPPED, SETTINGS)
    assert code_lines(hunks) <= set(found)


def test_a_value_handed_back_after_a_log_line_is_explained_when_passed_by_keyword_too(tmp_path):
    found, hunks = explained(tmp_path, CONSTANT, CONSTANT_WRAPPED)
    assert code_lines(hunks) <= set(found)
    by_keyword = CONSTANT_WRAPPED.replace("announced(64, what=", "announced(value=64, what=")
    found, hunks = explained(tmp_path / "kw", CONSTANT, by_keyword)
    assert code_lines(hunks) <= set(found)


def test_a_wrapper_that_does_more_than_message_or_changes_the_value_explains_nothing(tmp_path):
    busy = WRAPPED.replace("FutureWarning)\n", "FutureWarning)\n            os.environ.pop(name)\n")
    assert explained(tmp_path, SETTINGS, busy)[0] == {}
    other = WRAPPED.replace(
        'os.environ.get("PAGED", "1") == "1",\n    ),', 'os.environ.get("PAGED", "0") == "1",\n    ),'
    )
    assert explained(tmp_path / "value", SETTINGS, other)[0] == {}
    # a condition that calls something may do something
    calls = WRAPPED.replace("if name in os.environ:", "if os.environ.pop(name, None):")
    assert explained(tmp_path / "calls", SETTINGS, calls)[0] == {}
    # the wrapper hands back something other than its getter's value
    twice = WRAPPED.replace("return getter()", "return getter() * 2")
    assert explained(tmp_path / "twice", SETTINGS, twice)[0] == {}


def test_a_function_that_did_something_before_it_became_a_wrapper_explains_nothing(tmp_path):
    # before the change, `announced` scaled the value; after, it only logs: that is behaviour
    before = CONSTANT_WRAPPED.replace(
        'def announced(value, what):\n    logger.info("using %s", what)\n    return value\n',
        'def announced(value, what, scale=2):\n    logger.info("scaling %s", what)\n    return value * scale\n',
    )
    assert before != CONSTANT_WRAPPED
    assert explained(tmp_path, before, CONSTANT_WRAPPED)[0] == {}


def test_files_that_do_not_parse_explain_nothing(tmp_path):
    assert explained(tmp_path, SETTINGS + "def (:\n", WRAPPED + "def (:\n")[0] == {}


def test_a_file_nested_past_what_can_be_compared_explains_nothing(tmp_path):
    def nested(terms: int) -> str:
        return "\n\nTOTAL = " + " + ".join(["1"] * terms) + "\n"

    found, hunks = explained(tmp_path / "shallow", CONSTANT + nested(50), CONSTANT_WRAPPED + nested(50))
    assert code_lines(hunks) <= set(found)  # the control: at this depth the two sides compare
    found, _ = explained(tmp_path / "deep", CONSTANT + nested(400), CONSTANT_WRAPPED + nested(400))
    assert found == {}
