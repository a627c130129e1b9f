"""deprecations: removed deprecation shims, on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import code_lines, one_change

from porttrack import gitio
from porttrack.evidence import deprecations, refactor


def explained(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> tuple[dict, list[gitio.Hunk]]:
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, ["."]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    return deprecations.explain(hunks, texts), hunks


def kinds(found: dict) -> set[str]:
    return set(found.values())


def changed_lines(hunks: list[gitio.Hunk]) -> int:
    return len(code_lines(hunks))


SHIMS = """\
import warnings

from typing_extensions import deprecated


def old_budget():
    warnings.warn("`old_budget` has moved to `budget`", DeprecationWarning, stacklevel=2)
    return budget()


@deprecated("`total` will be removed in a later release; use `sum`")
def total(xs):
    return sum(xs)


def step(tokens, budget=None, limit=None):
    if limit is not None:
        logger.warning("`limit` is deprecated: pass `budget`")
        budget = limit
    return min(tokens, budget)


def slow(tokens):
    logger.warning("falling back to the slow path")
    return tokens
"""


def test_a_removed_deprecation_shim_carries_no_behaviour(tmp_path):
    """A function, class or branch that warns its caller of a deprecation, removed whole: the
    upstream kept an old spelling working for its own users; a port never offered it."""
    alias = SHIMS[SHIMS.index("def old_budget") : SHIMS.index("@deprecated(")]
    decorated = SHIMS[SHIMS.index("@deprecated(") : SHIMS.index("def step")]
    branch = SHIMS[SHIMS.index("    if limit") : SHIMS.index("    return min")]
    after = SHIMS.replace(alias, "").replace(decorated, "").replace(branch, "")
    found, hunks = explained(tmp_path / "a", {"m.py": SHIMS}, {"m.py": after})
    assert len(found) == changed_lines(hunks)
    shim = {hunks[k].old[i].strip() for (k, _, i), what in found.items() if what == deprecations.DEPRECATED}
    assert {"def old_budget():", "def total(xs):", "if limit is not None:", "budget = limit"} <= shim
    # a warning of something else is no shim: removing `slow` removes behaviour
    slow = SHIMS[SHIMS.index("def slow") :]
    found, hunks = explained(tmp_path / "b", {"m.py": SHIMS}, {"m.py": SHIMS.replace(slow, "")})
    assert deprecations.DEPRECATED not in kinds(found) and len(found) < changed_lines(hunks)
    # nor is a shim cut short: the warning and the old spelling's line removed, the branch kept
    cut = SHIMS.replace(
        '        logger.warning("`limit` is deprecated: pass `budget`")\n        budget = limit\n', "        pass\n"
    )
    found, hunks = explained(tmp_path / "c", {"m.py": SHIMS}, {"m.py": cut})
    assert deprecations.DEPRECATED not in kinds(found) and len(found) < changed_lines(hunks)


CONNECTOR = """\
import logging

logger = logging.getLogger(__name__)


class Connector:
    def __init__(
        self,
        role: str,
        layout: "Layout | None" = None,
    ):
        self._layout = layout
        if self._layout is None:
            logger.warning("a Connector without a layout is deprecated: pass one")
        self._role = role
"""


def test_a_parameter_made_required_with_its_none_shim_removed_carries_no_behaviour(tmp_path):
    """The `None` default of a parameter goes with the deprecation shim that served callers who
    left it out: the old spelling, which a port never offered."""
    shim = '        if self._layout is None:\n            logger.warning("a Connector without a layout is deprecated: pass one")\n'
    after = CONNECTOR.replace(shim, "").replace('layout: "Layout | None" = None,', 'layout: "Layout",')
    found, hunks = explained(tmp_path, {"c.py": CONNECTOR}, {"c.py": after})
    assert kinds(found) == {deprecations.DEPRECATED} and set(found) == code_lines(hunks)
    # `Optional[...]` spells the same
    optional = CONNECTOR.replace('"Layout | None"', "Optional[Layout]")
    found, hunks = explained(tmp_path / "opt", {"c.py": optional}, {"c.py": after.replace('"Layout"', "Layout")})
    assert set(found) == code_lines(hunks)
    # with the shim kept, the default's removal is behaviour: callers that left it out now fail
    kept = CONNECTOR.replace('layout: "Layout | None" = None,', 'layout: "Layout",')
    found, hunks = explained(tmp_path / "kept", {"c.py": CONNECTOR}, {"c.py": kept})
    assert found == {}
    # a shim that tests another parameter explains nothing about this one
    other = CONNECTOR.replace("if self._layout is None:", "if self._role is None:")
    found, hunks = explained(tmp_path / "other", {"c.py": other}, {"c.py": after})
    assert len(found) < len(code_lines(hunks))
    # nor does a default that changes to something else
    found, hunks = explained(
        tmp_path / "int", {"c.py": CONNECTOR}, {"c.py": after.replace('"Layout",', '"Layout" = 4,')}
    )
    assert len(found) < len(code_lines(hunks))
