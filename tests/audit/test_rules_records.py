"""audit's rules that read the change and the port's records (porttrack/audit/rules_records.py):
ignore, no-op (language-only constructs, code that carries no behaviour), unmapped and deferred.

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it (tests/audit/audit_pair.py).
"""

from __future__ import annotations

import pytest

from conftest import git
from audit_pair import (
    FIRST_TEST,
    FREED_TWICE,
    PORT_FREED,
    PORT_TESTS,
    SCHED,
    PORT_SCHED,
    TESTS,
    beside_tests,
    pair,
    edit,
    steps,
)
from porttrack.audit.rules_records import SUBJECT_READ


def test_no_op_names_the_language_only_constructs(tmp_path):
    _, r = pair(
        tmp_path,
        steps(
            (
                "[Core] Tidy",
                "class Scheduler:\n",
                "import functools\n\n\nclass Scheduler:\n    __slots__ = ('budget',)\n\n",
            ),
            (
                "[Core] Log",
                "        return compute_budget(tokens, self.budget)\n",
                '        logger.debug("step with %d tokens", tokens)\n        return compute_budget(tokens, self.budget)\n',
            ),
            (
                "[Core] Logger",
                "import logging\n\nlogger = logging.getLogger(__name__)\n",
                "from vllm.logger import init_logger\n\nlogger = init_logger(__name__)\n",
            ),
            (
                "[Core] Behave",
                "        return compute_budget(tokens, self.budget)\n",
                "        return compute_budget(tokens, self.budget) - 1\n",
            ),
        ),
    )
    assert r["[Core] Logger"]["reason"] == "language-only change: import, log text"  # a module's logger binding
    assert (r["[Core] Tidy"]["verdict"], r["[Core] Tidy"]["rule"]) == ("no-op", "no-op")
    assert r["[Core] Tidy"]["reason"] == "language-only change: import, __slots__"
    assert r["[Core] Log"]["reason"] == "language-only change: log text"
    assert r["[Core] Behave"]["verdict"] != "no-op"  # one behavioural line is enough


IMPORTING = (
    "from vllm.core.budget import (\n    compute_budget,\n    floor_budget,\n)\nimport vllm._kernels  # noqa: F401\n"
    + SCHED
)


def test_a_construct_is_read_without_its_trailing_comment_and_an_import_opened_above_holds_its_names(tmp_path):
    text = IMPORTING
    commits = []
    for subject, old, new in (
        ("[Core] More names", "    floor_budget,\n", "    cap_budget,\n    floor_budget,\n"),
        (
            "[Core] Stable kernels",
            "import vllm._kernels  # noqa: F401\n",
            "import vllm._stable_kernels  # noqa: F401\n",
        ),
        (
            "[Core] Double",
            "        self.budget = budget\n",
            "        self.budget = budget\n        self.budget *= 2  # torch.compile\n",
        ),
    ):
        text = text.replace(old, new)
        commits.append((subject, {"vllm/core/sched.py": text}))
    _, r = pair(tmp_path, commits, base_sched=IMPORTING)
    # a name added inside `from m import (` opened above the hunk is an import, not code
    assert (r["[Core] More names"]["verdict"], r["[Core] More names"]["reason"]) == (
        "no-op",
        "language-only change: import",
    )
    # an import stays an import with a lint pragma after it
    assert r["[Core] Stable kernels"]["reason"] == "language-only change: import"
    # and a line of behaviour does not become a construct by a comment that names one
    assert r["[Core] Double"]["verdict"] != "no-op"


def test_a_change_the_upstream_makes_for_its_type_checker_is_no_op_by_its_own_account(tmp_path):
    _, r = pair(
        tmp_path,
        steps(
            (
                "[CI] Fix mypy for core (#5)",
                "compute_budget(tokens, self.budget)",
                "compute_budget(tokens, int(self.budget))",
            ),
            ("[Core] Cast the request (#6)", "        return request\n", "        return int(request)\n"),
            ("[3/n] Move the budget op to libtorch stable ABI (#7)", "int(self.budget))", "self.budget)"),
            (
                "[Doc] Budget the tokens as the guide says (#8)",
                "        return int(request)\n",
                "        return request\n",
            ),
            (
                "[Core] Freeze the garbage collector after load (#9)",
                "        return request\n",
                "        return int(request)\n",
            ),
            (
                "[Bugfix] Lazily import the budget backend (#10)",
                "        return int(request)\n",
                "        return request\n",
            ),
        ),
    )
    typed = r["[CI] Fix mypy for core (#5)"]
    assert (typed["verdict"], typed["rule"]) == ("no-op", "mechanics-subject")
    assert typed["reason"] == "the upstream's subject calls it a mypy change: its own tooling or bindings"
    # the same kind of line under a subject that names no tooling is judged by its content
    assert r["[Core] Cast the request (#6)"]["verdict"] == "real-gap"
    # kernels moved onto PyTorch's stable ABI: a binding a port does not link
    bound = r["[3/n] Move the budget op to libtorch stable ABI (#7)"]
    assert (bound["verdict"], bound["rule"]) == ("no-op", "mechanics-subject")
    # what the upstream files as documentation serves its docs, not the program
    assert r["[Doc] Budget the tokens as the guide says (#8)"]["rule"] == "mechanics-subject"
    # the Python runtime's own mechanics: a port has no such collector
    assert r["[Core] Freeze the garbage collector after load (#9)"]["rule"] == "mechanics-subject"
    # when Python imports a module is no concern of a port's
    assert r["[Bugfix] Lazily import the budget backend (#10)"]["rule"] == "mechanics-subject"


def test_a_change_the_upstream_tags_as_compiler_work_is_no_op_unless_it_fuses(tmp_path):
    _, r = pair(
        tmp_path,
        steps(
            (
                "[Bugfix][Compile] Guard the budget op lookup (#5)",
                "compute_budget(tokens, self.budget)",
                "compute_budget(tokens, int(self.budget))",
            ),
            ("[vLLM IR] 2/N budget_op overload (#6)", "int(self.budget))", "max(self.budget, 0))"),
            ("[compile] Fuse the budget op and its cast (#7)", "max(self.budget, 0))", "self.budget)"),
            ("[Core] compile the budget op (#8)", "        return request\n", "        return int(request)\n"),
        ),
    )
    guarded = r["[Bugfix][Compile] Guard the budget op lookup (#5)"]
    assert (guarded["verdict"], guarded["rule"]) == ("no-op", "mechanics-subject")
    assert guarded["reason"] == "the upstream's subject calls it a [Compile] change: its own tooling or bindings"
    assert r["[vLLM IR] 2/N budget_op overload (#6)"]["rule"] == "mechanics-subject"
    # a fusion pass makes the compiled graph call a fused kernel: the code decides
    assert r["[compile] Fuse the budget op and its cast (#7)"]["verdict"] == "real-gap"
    # the word alone, outside a tag, is no account of compiler work
    assert r["[Core] compile the budget op (#8)"]["verdict"] == "real-gap"


def test_a_change_the_upstream_says_removes_dead_code_is_no_op_by_its_own_account(tmp_path):
    _, r = pair(
        tmp_path,
        steps(
            (
                "[Refactor] Remove dead code in the scheduler (#5)",
                "        return request\n",
                "        return int(request)\n",
            ),
            ("[Misc] Clean up unused budget cast (#6)", "        return int(request)\n", "        return request\n"),
            ("[Bugfix] Remove dead lock in step (#7)", "        return request\n", "        return int(request)\n"),
            ("[Core] Free unused budget early (#8)", "        return int(request)\n", "        return request\n"),
            (
                "[V0 Deprecation] Drop the legacy budget path (#9)",
                "        return request\n",
                "        return int(request)\n",
            ),
        ),
    )
    dead = r["[Refactor] Remove dead code in the scheduler (#5)"]
    assert (dead["verdict"], dead["rule"]) == ("no-op", "dead-subject")
    assert dead["reason"] == 'the upstream\'s subject says nothing runs the code it removes ("Remove dead")'
    assert r["[Misc] Clean up unused budget cast (#6)"]["rule"] == "dead-subject"
    # what is left of an engine the upstream has retired runs nowhere either
    assert r["[V0 Deprecation] Drop the legacy budget path (#9)"]["rule"] == "dead-subject"
    # a lock that never frees is a bug, not dead code; freeing what is unused is behaviour
    assert r["[Bugfix] Remove dead lock in step (#7)"]["verdict"] == "real-gap"
    assert r["[Core] Free unused budget early (#8)"]["verdict"] == "real-gap"
    # the port's to turn off
    _, off = pair(
        tmp_path / "off",
        steps(
            (
                "[Refactor] Remove dead code in the scheduler (#5)",
                "        return request\n",
                "        return int(request)\n",
            )
        ),
        extra='[audit]\ndead_subject = ""\n',
    )
    assert off["[Refactor] Remove dead code in the scheduler (#5)"]["verdict"] == "real-gap"


def test_a_subject_is_read_only_as_far_as_a_subject_runs(tmp_path):
    # a queue file is the checkout's: a subject padded past any real one is not searched to its end,
    # so a pattern's backtracking stays bounded, and what lies beyond says nothing
    padded = "[Refactor] Remove " + "the scheduler " * (SUBJECT_READ // 14 + 1) + "dead code (#5)"
    near = "[Refactor] Remove " + "the scheduler " * 3 + "dead code (#6)"
    _, r = pair(
        tmp_path,
        steps(
            (padded, "        return request\n", "        return int(request)\n"),
            (near, "        return int(request)\n", "        return request\n"),
        ),
    )
    assert r[padded]["verdict"] == "real-gap"
    assert r[near]["rule"] == "dead-subject"


def test_mechanics_subject_is_the_ports_to_set_or_turn_off(tmp_path):
    old, new = (
        "        return compute_budget(tokens, self.budget)\n",
        "        return compute_budget(tokens, int(self.budget))\n",
    )
    _, r = pair(tmp_path, [("[CI] Fix mypy for core (#5)", edit(old, new))], extra='[audit]\nmechanics_subject = ""\n')
    assert r["[CI] Fix mypy for core (#5)"]["verdict"] == "real-gap"


REFACTOR_BASE = SCHED.replace(
    "    def step(self, tokens):\n",
    "    def step(self, tokens):\n"
    "        limit = self.budget\n"
    "        if tokens > limit:\n"
    "            raise ValueError(\n"
    '                f"{tokens} tokens exceed the budget {limit}"\n'
    "            )\n",
).replace(
    "    def free(self, request):\n",
    "    def free(\n        self,\n        request,\n        eager: bool = False,\n    ):\n",
) + ("\n\ndef clamp(tokens, budget):\n    if tokens < 0:\n        return 0\n    return min(tokens, budget)\n")


def test_no_op_names_code_that_carries_no_behaviour(tmp_path):
    """Moved code, reworded messages, renamed locals, parameters nothing read, gc calls: no-op."""
    clamp = REFACTOR_BASE[REFACTOR_BASE.index("def clamp") :]
    moved = REFACTOR_BASE.replace("\n\n" + clamp, "\n").replace(
        "import logging\n", "import logging\n\nfrom vllm.core.util import clamp\n"
    )
    renamed = moved.replace("limit", "cap").replace(
        'f"{tokens} tokens exceed the budget {cap}"', 'f"asked for {tokens} tokens, over the cap {cap}"'
    )
    unused = renamed.replace("        eager: bool = False,\n", "")
    collect = unused.replace("        return request\n", "        gc.collect()\n        return request\n").replace(
        "import logging\n", "import gc\nimport logging\n"
    )
    # and the shapes that are behaviour: a name that is no local, a string compared
    attribute = collect.replace("cap = self.budget", "cap = self.budget_cap")
    commits = [
        ("[Core] Move clamp", {"vllm/core/sched.py": moved, "vllm/core/util.py": clamp}),
        ("[Core] Reword", {"vllm/core/sched.py": renamed}),
        ("[Core] Drop eager", {"vllm/core/sched.py": unused}),
        ("[Core] Collect", {"vllm/core/sched.py": collect}),
        ("[Core] Cap attribute", {"vllm/core/sched.py": attribute}),
        ("[Core] Compare", {"vllm/core/util.py": clamp.replace("if tokens < 0:", 'if tokens == "any":')}),
    ]
    util_map = "[[map]]\nupstream = 'vllm/core/util.py'\nport = ['src/core/sched.cpp']\n"
    _, r = pair(tmp_path / "a", commits, base_sched=REFACTOR_BASE, extra=util_map)
    assert r["[Core] Move clamp"]["reason"] == "language-only change: import, moved code", r["[Core] Move clamp"]
    assert r["[Core] Reword"]["reason"] == "language-only change: renamed name, message text", r["[Core] Reword"]
    assert r["[Core] Drop eager"]["reason"] == "language-only change: unused parameter"
    assert r["[Core] Collect"]["reason"] == "language-only change: import, garbage collector"
    for behaviour in ("[Core] Cap attribute", "[Core] Compare"):
        assert r[behaviour]["verdict"] != "no-op", behaviour
    # a parameter the function read is behaviour when removed
    read = REFACTOR_BASE.replace("        return request\n", "        return request if eager else None\n")
    used_away = read.replace("        eager: bool = False,\n", "").replace("request if eager else None", "request")
    _, r = pair(tmp_path / "b", [("[Core] Drop eager", {"vllm/core/sched.py": used_away})], base_sched=read)
    assert r["[Core] Drop eager"]["verdict"] != "no-op"


FP8_BASE = (
    SCHED.replace(
        "        self.budget = budget\n",
        '        self.budget = budget\n        self.half = self.dtype.startswith("fp8")\n',
    )
    + '\n\ndef is_fp8(dtype):\n    return dtype.startswith("fp8")\n'
)


def test_an_expression_written_as_the_call_of_a_short_helper_moved_elsewhere_is_no_op(tmp_path):
    """The change moves a two-line helper to another module and calls it where the code spelled out
    what it returns: the same code runs. The helper returning something else is behaviour."""
    helper = FP8_BASE[FP8_BASE.index("def is_fp8") :]
    shared = (
        FP8_BASE.replace("\n\n" + helper, "\n")
        .replace("import logging\n", "import logging\n\nfrom vllm.core.util import is_fp8\n")
        .replace('self.dtype.startswith("fp8")', "is_fp8(self.dtype)")
    )
    util_map = "[[map]]\nupstream = 'vllm/core/util.py'\nport = ['src/core/sched.cpp']\n"
    for name, util, same in (("same", helper, True), ("other", helper.replace('"fp8"', '"fp16"'), False)):
        commit = ("[Core] Share the dtype check", {"vllm/core/sched.py": shared, "vllm/core/util.py": util})
        _, r = pair(tmp_path / name, [commit], base_sched=FP8_BASE, extra=util_map)
        got = r["[Core] Share the dtype check"]
        if same:
            assert (got["verdict"], got["reason"]) == (
                "no-op",
                "language-only change: import, call of what it returns, moved code",
            ), got
        else:
            assert got["verdict"] != "no-op", got


def test_an_assignment_the_code_makes_again_unread_is_no_op(tmp_path):
    """The change drops a first `limit = ...` that the same method computes again before reading
    it: no-op. Dropping one that is read in between is behaviour."""
    twice = SCHED.replace(
        "    def step(self, tokens):\n",
        "    def step(self, tokens):\n        limit = self.budget * 2\n        self.seen = tokens\n"
        "        limit = self.budget * 2\n        tokens = min(tokens, limit)\n",
    )
    read = twice.replace("        self.seen = tokens\n", "        self.seen = limit\n")
    for name, base, no_op in (("unread", twice, True), ("read", read, False)):
        dropped = base.replace("        limit = self.budget * 2\n", "", 1)
        _, r = pair(
            tmp_path / name, [("[Core] Drop the first limit", {"vllm/core/sched.py": dropped})], base_sched=base
        )
        got = r["[Core] Drop the first limit"]
        if no_op:
            assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: repeated assignment"), got
        else:
            assert got["verdict"] != "no-op", got


DEAD_BASE = SCHED.replace("import logging\n", "import logging\nimport os\n") + (
    "\n\ndef double(x):\n    return x * 2\n"
    "\n\ndef halve(x):\n    return x // 2\n"
    '\n\n@register("tidy")\ndef tidy(x):\n    return x\n'
    "\n\nSETTINGS = {\n"
    "    # how long to wait\n"
    '    "WAIT_S": lambda: int(os.getenv("WAIT_S", "5")),\n'
    '    "RETRIES": lambda: int(os.getenv("RETRIES", "3")),\n'
    "}\n"
)


def test_removed_code_that_nothing_in_the_tree_reads_is_no_op(tmp_path):
    """A removed function or settings entry that no code line of the upstream tree names (but the
    lines the change removes) is dead code; one read anywhere in the tree, even outside the queue's
    paths, or reachable through a registering decorator, is behaviour."""
    readers = {
        "tools/report.py": "from vllm.core.sched import halve\n\nprint(halve(4))\n",
        "vllm/core/use.py": "from vllm.core import sched\n\nN = sched.SETTINGS['RETRIES']()\n",
    }
    text, commits = DEAD_BASE, []
    for subject, old in (
        ("[Core] Drop double", "\n\ndef double(x):\n    return x * 2\n"),
        ("[Core] Drop WAIT_S", '    # how long to wait\n    "WAIT_S": lambda: int(os.getenv("WAIT_S", "5")),\n'),
        ("[Core] Drop halve", "\n\ndef halve(x):\n    return x // 2\n"),
        ("[Core] Drop tidy", '\n\n@register("tidy")\ndef tidy(x):\n    return x\n'),
        ("[Core] Drop RETRIES", '    "RETRIES": lambda: int(os.getenv("RETRIES", "3")),\n'),
    ):
        assert old in text, old
        text = text.replace(old, "")
        commits.append((subject, {"vllm/core/sched.py": text}))
    _, r = pair(tmp_path, commits, base_sched=DEAD_BASE, base_extra=readers)
    for dead in ("[Core] Drop double", "[Core] Drop WAIT_S"):
        assert (r[dead]["verdict"], r[dead]["reason"]) == ("no-op", "language-only change: dead code"), r[dead]
    for live in ("[Core] Drop halve", "[Core] Drop tidy", "[Core] Drop RETRIES"):
        assert r[live]["verdict"] != "no-op", (live, r[live])


def test_a_log_call_whose_argument_lines_name_no_string_is_no_op(tmp_path):
    """The lines of a log call are message text, its argument lines too (`budget,`, `)`), though
    they hold no string and name no logger: the file is parsed wherever a changed line may lie in
    a message, a line inside a call begun above included."""
    logged = SCHED.replace(
        "    def step(self, tokens):\n",
        "    def step(self, tokens):\n"
        "        logger.debug(\n"
        '            "step with %d tokens against %d",\n'
        "            tokens,\n"
        "            self.budget,\n"
        "        )\n",
    )
    _, r = pair(tmp_path, [("[Core] Log the step", {"vllm/core/sched.py": logged})])
    got = r["[Core] Log the step"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: log text, message text"), got


SHIM = (
    "\n\ndef plan(budget):\n"
    '    warnings.warn("`plan` has moved to `Scheduler`", DeprecationWarning, stacklevel=2)\n'
    "    return Scheduler(budget)\n"
)


def test_a_parameter_made_required_with_its_deprecation_shim_removed_is_no_op(tmp_path):
    optional = SCHED.replace(
        "    def step(self, tokens):\n        return compute_budget(tokens, self.budget)\n",
        '    def step(\n        self,\n        tokens,\n        cap: "int | None" = None,\n    ):\n'
        "        if cap is None:\n"
        '            logger.warning("step without a cap is deprecated")\n'
        "        return compute_budget(tokens, cap or self.budget)\n",
    )
    required = optional.replace('cap: "int | None" = None,', 'cap: "int",').replace(
        '        if cap is None:\n            logger.warning("step without a cap is deprecated")\n', ""
    )
    _, r = pair(tmp_path, [("[Core] Require a cap", {"vllm/core/sched.py": required})], base_sched=optional)
    got = r["[Core] Require a cap"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: deprecation shim, log text"), got
    # the default dropped while the shim stays: callers that left the cap out now fail
    kept = optional.replace('cap: "int | None" = None,', 'cap: "int",')
    _, r = pair(tmp_path / "kept", [("[Core] Require a cap", {"vllm/core/sched.py": kept})], base_sched=optional)
    assert r["[Core] Require a cap"]["verdict"] != "no-op"


def test_a_removed_deprecation_shim_is_no_op(tmp_path):
    """An old entry point that warns its caller it is deprecated, removed: code elsewhere still
    names it, so it is no dead code, but it kept an old spelling alive that a port never offered.
    The same function with no warning is behaviour."""
    reader = {"vllm/core/use.py": "from vllm.core.sched import plan\n\nS = plan(4)\n"}
    shim_base = SCHED.replace("import logging\n", "import logging\nimport warnings\n") + SHIM
    plain_base = SCHED + SHIM.replace(
        '    warnings.warn("`plan` has moved to `Scheduler`", DeprecationWarning, stacklevel=2)\n', ""
    )
    _, r = pair(
        tmp_path / "a",
        [("[Core] Drop the plan alias", {"vllm/core/sched.py": SCHED})],
        base_sched=shim_base,
        base_extra=reader,
    )
    got = r["[Core] Drop the plan alias"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: import, deprecation shim"), got
    _, r = pair(
        tmp_path / "b",
        [("[Core] Drop plan", {"vllm/core/sched.py": SCHED})],
        base_sched=plain_base,
        base_extra=reader,
    )
    assert r["[Core] Drop plan"]["verdict"] != "no-op", r["[Core] Drop plan"]


CLAMP = "\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return min(x, hi)\n"


def test_code_moved_in_from_outside_the_queues_paths_is_no_op(tmp_path):
    """The queue holds only the files under `[upstream] paths`; code moved into them from a file
    outside is moved all the same. The same code added while the outside file keeps it is a copy,
    which is behaviour in the mirrored file."""
    helpers = "import math\n" + CLAMP
    _, r = pair(
        tmp_path,
        [
            (
                "[Core] Copy clamp",
                {"vllm/core/sched.py": SCHED.replace("import logging\n", "import logging\n" + CLAMP)},
            ),
            ("[Core] Drop the copy", {"vllm/core/sched.py": SCHED}),
            ("[Core] Move clamp", {"vllm/core/sched.py": SCHED + CLAMP, "tools/helpers.py": "import math\n"}),
        ],
        base_extra={"tools/helpers.py": helpers},
    )
    moved = r["[Core] Move clamp"]
    assert (moved["verdict"], moved["reason"]) == ("no-op", "language-only change: moved code"), moved
    assert r["[Core] Copy clamp"]["verdict"] != "no-op", r["[Core] Copy clamp"]


def test_unmapped_code_is_surface_absent_and_unmapped_docs_are_ignored(tmp_path):
    _, r = pair(
        tmp_path,
        [
            (
                "[Spec] Add a proposer",
                {"vllm/spec/proposer.py": "class DraftProposer:\n    def propose(self):\n        return 1\n"},
            ),
            (
                "[Spec] Tweak the proposer",
                {"vllm/spec/proposer.py": "class DraftProposer:\n    def propose(self):\n        return 2\n"},
            ),
            ("[Docs] Spec notes", {"vllm/spec/NOTES.md": "notes\n"}),
            ("[Tests] Spec test", {"vllm/spec/tests/test_proposer.py": "def test_x():\n    assert True\n"}),
        ],
    )
    tweak = r["[Spec] Tweak the proposer"]
    assert (tweak["verdict"], tweak["rule"]) == ("surface-absent", "unmapped")
    assert "no [[map]] or provenance header gives vllm/spec/proposer.py a port counterpart" in tweak["evidence"]
    assert [g["probe"] for g in tweak["gates"]] == ["DraftProposer"] and tweak["gates"][0]["kind"] == "absent"
    for docs in ("[Docs] Spec notes", "[Tests] Spec test"):
        assert (r[docs]["verdict"], r[docs]["rule"]) == ("ignore", "ignore"), docs


POOL = """\
class Pool:
    def take(self, tokens):
        return tokens


class SharedPool(Pool):
    def take(self, tokens):
        return super().take(tokens)
"""


def test_calls_pointed_at_code_that_does_the_same_are_no_op(tmp_path):
    base = SCHED.replace("import logging\n", "import logging\n\nfrom vllm.layers.pool import SharedPool\n").replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.pool = SharedPool()\n"
    )
    commits = [
        (
            "[Core] Drop the shared pool",
            {
                "vllm/layers/pool.py": POOL.split("\n\n\nclass SharedPool")[0] + "\n",
                "vllm/core/sched.py": base.replace("SharedPool", "Pool"),
            },
        ),
    ]
    _, r = pair(tmp_path, commits, base_sched=base, base_extra={"vllm/layers/pool.py": POOL})
    got = r["[Core] Drop the shared pool"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: import, equivalent call, dead code"), got
    # the same call site, where the subclass did something of its own, is a change in behaviour
    busy = POOL.replace("return super().take(tokens)", "return super().take(tokens) // 2")
    commits[0][1]["vllm/layers/pool.py"] = busy.split("\n\n\nclass SharedPool")[0] + "\n"
    _, r = pair(tmp_path / "busy", commits, base_sched=base, base_extra={"vllm/layers/pool.py": busy})
    assert r["[Core] Drop the shared pool"]["verdict"] != "no-op"


def test_a_parameter_that_only_quiets_a_log_line_is_no_op(tmp_path):
    log = '        logger.debug("step with %d tokens", tokens)\n'
    base = SCHED.replace("    def step(self, tokens):\n", "    def step(self, tokens):\n" + log)
    quiet = base.replace(
        "    def step(self, tokens):\n" + log,
        "    def step(self, tokens, quiet=False):\n        if not quiet:\n    " + log,
    )
    _, r = pair(tmp_path, [("[Core] Quiet step", {"vllm/core/sched.py": quiet})], base_sched=base)
    got = r["[Core] Quiet step"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: message switch, log text"), got
    # a guard that also changes state is behaviour
    busy = quiet.replace("    " + log, "    " + log + "            self.budget -= 1\n")
    _, r = pair(tmp_path / "busy", [("[Core] Quiet step", {"vllm/core/sched.py": busy})], base_sched=base)
    assert r["[Core] Quiet step"]["verdict"] != "no-op"


def test_a_call_site_that_stops_passing_a_switch_its_callee_loses_outside_the_paths_is_no_op(tmp_path):
    # the callee lives in lib/, beyond the queue's `vllm/` paths; the change drops its switch there
    quiet = (
        "import logging\n\nlogger = logging.getLogger(__name__)\n\n\n"
        "def compute_budget(tokens, budget, quiet=False):\n"
        "    if not quiet:\n"
        '        logger.info("budget %d", budget)\n'
        "    return min(tokens, budget)\n"
    )
    loud = quiet.replace(", quiet=False)", ")").replace("    if not quiet:\n        logger", "    logger")
    base = "from lib.blocks import compute_budget\n" + SCHED.replace(
        "compute_budget(tokens, self.budget)", "compute_budget(tokens, self.budget, quiet=True)"
    )
    change = {"vllm/core/sched.py": base.replace(", quiet=True)", ")"), "lib/blocks.py": loud}
    _, r = pair(
        tmp_path, [("[Core] Always log the budget", change)], base_sched=base, base_extra={"lib/blocks.py": quiet}
    )
    got = r["[Core] Always log the budget"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: message switch"), got
    # where the callee's parameter does more than quiet a log line, dropping it is behaviour
    busy = quiet.replace("    return min(tokens, budget)\n", "    return min(tokens, budget) - quiet\n")
    _, r = pair(
        tmp_path / "busy",
        [("[Core] Always log the budget", change)],
        base_sched=base,
        base_extra={"lib/blocks.py": busy},
    )
    assert r["[Core] Always log the budget"]["verdict"] != "no-op"


def test_a_value_wrapped_in_a_call_that_only_warns_is_no_op(tmp_path):
    wrapper = (
        "import warnings\n\n\n"
        "def deprecated(value, why):\n"
        "    warnings.warn(why, FutureWarning)\n"
        "    return value\n\n\n"
    )
    wrapped = wrapper + SCHED.replace(
        "        self.budget = budget\n", '        self.budget = deprecated(budget, "pass a token budget")\n'
    )
    _, r = pair(tmp_path, [("[Core] Deprecate budget", {"vllm/core/sched.py": wrapped})])
    got = r["[Core] Deprecate budget"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: import, message wrapper"), got
    # a wrapper that hands back something else is behaviour
    halved = wrapped.replace("    return value\n", "    return value // 2\n")
    _, r = pair(tmp_path / "halved", [("[Core] Deprecate budget", {"vllm/core/sched.py": halved})])
    assert r["[Core] Deprecate budget"]["verdict"] != "no-op"


def test_the_same_code_over_other_lines_with_a_language_only_construct_added_is_no_op(tmp_path):
    base = SCHED.replace(
        "        return request\n", "        return torch.zeros([request, self.budget], dtype=torch.int32)\n"
    )
    pinned = base.replace(
        "        return torch.zeros([request, self.budget], dtype=torch.int32)\n",
        "        return torch.zeros(\n"
        "            [request, self.budget],\n"
        "            dtype=torch.int32,\n"
        "            pin_memory=True,\n"
        "        )\n",
    )
    _, r = pair(tmp_path, [("[Perf] Pin the buffer", {"vllm/core/sched.py": pinned})], base_sched=base)
    got = r["[Perf] Pin the buffer"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: reflowed code, pin_memory"), got
    # one argument more besides the construct is behaviour, however the lines break
    sized = pinned.replace("            [request, self.budget],\n", "            [request, self.budget, 2],\n")
    _, r = pair(tmp_path / "sized", [("[Perf] Pin the buffer", {"vllm/core/sched.py": sized})], base_sched=base)
    assert r["[Perf] Pin the buffer"]["verdict"] != "no-op", r["[Perf] Pin the buffer"]


def test_a_deferral_of_code_the_port_lacks_altogether_is_surface_absent(tmp_path):
    base = SCHED.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.canvas_mode = budget < 0\n"
    )
    change = edit(
        "        return compute_budget(tokens, self.budget)\n",
        "        if self.canvas_mode:\n"
        "            return self.canvas_cap(tokens)\n"
        "        return compute_budget(tokens, self.budget)\n\n"
        "    def canvas_cap(self, tokens):\n"
        "        return tokens // 2\n",
        base,
    )
    deferred = PORT_SCHED.replace("class Scheduler {{", "// DEFERRED: canvas_cap (canvas decoding)\nclass Scheduler {{")
    _, r = pair(tmp_path, [("[Core] Canvas cap", change)], base_sched=base, port_sched=deferred)
    got = r["[Core] Canvas cap"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), got["evidence"]


def test_deferral_record_in_the_counterpart_makes_real_gap(tmp_path):
    deferred = PORT_SCHED.replace(
        "class Scheduler {{",
        "// DEFERRED upstream fields, left out here:\n//   - spec_budget (speculative decoding)\nclass Scheduler {{",
    )
    _, r = pair(
        tmp_path,
        [
            (
                "[Spec] Budget for drafts",
                edit(
                    "    def free(self, request):\n",
                    "    def spec_budget(self):\n        return 0\n\n    def free(self, request):\n",
                ),
            )
        ],
        port_sched=deferred,
    )
    got = r["[Spec] Budget for drafts"]
    assert (got["verdict"], got["rule"]) == ("real-gap", "deferred"), got
    assert got["reason"] == "the port records spec_budget as left out (DEFERRED) at src/core/sched.cpp:4"


def test_a_record_of_another_class_member_of_the_same_name_is_no_deferral(tmp_path):
    """One class's record of its own `drain_all` is no record of another class's: a member's record
    counts in the counterparts or in a file whose code names the member's class, even where the
    file defines another symbol of the change (here `pick`)."""
    base = SCHED + "\n\ndef pick(tokens):\n    return tokens\n"
    change = base.replace(
        "    def free(self, request):\n",
        "    def drain_all(self):\n        return self.budget\n\n    def free(self, request):\n",
    ).replace("    return tokens\n", "    return tokens + 1\n")
    planner = (
        "int pick(int tokens) {{ return tokens; }}\n\n"
        "class Planner {{\n"
        " public:\n"
        "  // DEFERRED: drain_all (the planner flushes per step instead)\n"
        "  int drain_all();\n"
        "}};\n"
    )
    for name, where in (("other", {"src/core/planner.cpp": planner.format()}), ("own", {})):
        port_sched = PORT_SCHED
        if not where:  # control: the same record in the counterpart is a deferral
            port_sched = PORT_SCHED.replace("class Scheduler {{", "// DEFERRED: drain_all\nclass Scheduler {{")
        _, r = pair(
            tmp_path / name,
            [("[Core] Drain", {"vllm/core/sched.py": change})],
            base_sched=base,
            port_sched=port_sched,
            port_extra=where,
        )
        got = r["[Core] Drain"]
        assert (got["rule"] == "deferred") == (name == "own"), (name, got["reason"])


def test_a_library_version_gate_is_no_behaviour_a_port_needs(tmp_path):
    """A port pins its own dependencies: which version of a Python library a branch waits for
    says nothing it could need. A threshold on the engine's own state stays behaviour."""
    base = SCHED + (
        "\n    def widget_mode(self):\n"
        '        if Version(widgetlib.__version__) < Version("2.0"):\n'
        "            return 1\n"
        "        if self.budget < 2:\n"
        "            return 3\n"
        "        return 2\n"
    )
    commits = [
        ("[Deps] Require widgetlib 3", {"vllm/core/sched.py": base.replace('Version("2.0")', 'Version("3.0")')}),
        ("[Core] Raise the floor", {"vllm/core/sched.py": base.replace("self.budget < 2", "self.budget < 3")}),
    ]
    _, r = pair(tmp_path, commits, base_sched=base)
    assert r["[Deps] Require widgetlib 3"]["reason"] == "language-only change: library version", r
    assert r["[Core] Raise the floor"]["verdict"] != "no-op", r["[Core] Raise the floor"]


def test_prior_triage_is_cited_in_the_evidence(tmp_path):
    cites = PORT_SCHED.replace(
        "class Scheduler {{", "// free() returns the request as upstream #4321 fixed it\\nclass Scheduler {{"
    )
    up_change = edit("        return request\n", "        return request or None\n")
    _, r = pair(tmp_path, [("[Core] Free fix (#4321)", up_change)], port_sched=cites.replace("\\n", "\n"))
    got = r["[Core] Free fix (#4321)"]
    assert any(e.startswith("prior triage: the port cites #4321 at src/core/sched.cpp:4:") for e in got["evidence"]), (
        got["evidence"]
    )


def test_a_logger_the_port_defers_is_no_deferral_of_a_change_that_adds_one(tmp_path):
    """`logger = logging.getLogger(...)` is the module's plumbing: a port comment deferring its
    logger says nothing of a change that adds one beside new behaviour."""
    deferred = PORT_SCHED.replace(
        "class Scheduler {{", "// DEFERRED: the module logger (no logging yet)\nclass Scheduler {{"
    )
    base = SCHED.replace("logger = logging.getLogger(__name__)\n", "")
    change = base.replace("import logging\n", "import logging\n\nlogger = logging.getLogger(__name__)\n").replace(
        "        return request\n", "        logger.info('free')\n        return request + 1\n"
    )
    _, r = pair(tmp_path, [("[Core] Log frees", {"vllm/core/sched.py": change})], base_sched=base, port_sched=deferred)
    got = r["[Core] Log frees"]
    assert got["rule"] != "deferred", [got["reason"], got["evidence"]]


def test_a_file_renamed_with_its_importers_is_no_op(tmp_path):
    """A file renamed whole (its old path is diffed too, as `--no-renames` shows it removed there)
    and the module name renamed where it is imported: no behaviour."""
    fast = "def pick(req):\n    if req.size > 4:\n        return req.size * 2\n    return req.size\n"
    user = "from . import fast\n\n\ndef route(req):\n    return fast.pick(req)\n"
    renamed = user.replace("fast", "fast_rdna")
    commits = [
        (
            "[Core] Rename fast",
            {"vllm/core/fast.py": None, "vllm/core/fast_rdna.py": fast, "vllm/core/user.py": renamed},
        ),
        ("[Core] Rename and change", {"vllm/core/fast_rdna.py": fast.replace("* 2", "* 3")}),
    ]
    _, r = pair(tmp_path, commits, base_extra={"vllm/core/fast.py": fast, "vllm/core/user.py": user})
    assert r["[Core] Rename fast"]["verdict"] == "no-op", r["[Core] Rename fast"]
    assert "renamed name" in r["[Core] Rename fast"]["reason"] and "moved code" in r["[Core] Rename fast"]["reason"]
    assert r["[Core] Rename and change"]["verdict"] != "no-op"


def test_a_change_to_the_comments_of_a_cuda_file_is_no_op_and_its_code_is_not(tmp_path):
    """`//` and `/* */` are to a C-family file what `#` is to Python: no behaviour, and no word a
    port must spell."""
    pool = (
        "// Block pool kernels\n"
        "__global__ void fill_pool(int* blocks, int n) {\n"
        "  // one thread per block\n"
        "  blocks[threadIdx.x] = n;\n"
        "}\n"
    )
    explained = pool.replace(
        "  // one thread per block\n", "  /* one thread per block,\n   * each writes its count */\n"
    )
    fixed = explained.replace("= n;", "= n + 1;  // counts from one")
    port_pool = (
        "// Ported from: vllm/csrc/pool.cu\n__global__ void FillPool(int* blocks, int n) { blocks[threadIdx.x] = n; }\n"
    )
    _, r = pair(
        tmp_path,
        [
            ("[Kernel] Explain the pool", {"vllm/csrc/pool.cu": explained}),
            ("[Kernel] Count from one", {"vllm/csrc/pool.cu": fixed}),
        ],
        base_extra={"vllm/csrc/pool.cu": pool},
        port_extra={"src/kernels/pool.cu": port_pool},
    )
    said = r["[Kernel] Explain the pool"]
    assert (said["verdict"], said["reason"]) == ("no-op", "language-only change: comments and docstrings"), said
    assert r["[Kernel] Count from one"]["verdict"] != "no-op", r["[Kernel] Count from one"]


COMPILED = SCHED.replace(
    "class Scheduler:\n",
    '@compiled(\n    batch_dims={"tokens": 0},\n)\nclass Scheduler:\n',
)


def test_the_arguments_of_a_decorator_written_over_lines_are_the_decorators(tmp_path):
    """A decorator is language-only by default, and so are the arguments it spreads over lines
    below its opening line, which read alone look like code."""
    _, r = pair(
        tmp_path,
        [
            (
                "[Core] Mark the batch dim",
                edit(
                    '    batch_dims={"tokens": 0},\n',
                    '    batch_dims={"tokens": 0, "budget": 0},\n',
                    COMPILED,
                ),
            )
        ],
        base_sched=COMPILED,
    )
    got = r["[Core] Mark the batch dim"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: decorator"), got
    # the same lines as a call's arguments are behaviour
    called = COMPILED.replace("@compiled(\n", "LIMITS = dict(\n").replace(
        ")\nclass Scheduler:\n", ")\n\n\nclass Scheduler:\n"
    )
    _, r = pair(
        tmp_path / "called",
        [
            (
                "[Core] Mark the batch dim",
                edit(
                    '    batch_dims={"tokens": 0},\n',
                    '    batch_dims={"tokens": 0, "budget": 0},\n',
                    called,
                ),
            )
        ],
        base_sched=called,
    )
    assert r["[Core] Mark the batch dim"]["verdict"] != "no-op"


TRACED = SCHED.replace(
    "    def step(self, tokens):\n",
    "    def step(self, tokens):\n"
    "        trace_structured(\n"
    '            "artifact",\n'
    "            payload_fn=lambda: json.dumps(\n"
    "                {\n"
    '                    "budget": self.budget,\n'
    "                }\n"
    "            ),\n"
    "        )\n",
)


def test_what_a_structured_trace_log_writes_is_message_text(tmp_path):
    """PyTorch's structured trace log (`trace_structured`) writes for a person reading the trace,
    like a logger: what goes into its payload is message text."""
    guarded = (
        '                    "budget": self.budget,\n',
        '                    "budget": getattr(self, "budget", 0),\n',
    )
    _, r = pair(tmp_path, [("[Core] Guard the trace", edit(*guarded, TRACED))], base_sched=TRACED)
    got = r["[Core] Guard the trace"]
    assert (got["verdict"], got["reason"]) == ("no-op", "language-only change: message text"), got
    # the same payload handed to the program is behaviour
    handed = TRACED.replace("        trace_structured(\n", "        self.publish(\n")
    _, r = pair(tmp_path / "handed", [("[Core] Guard the trace", edit(*guarded, handed))], base_sched=handed)
    assert r["[Core] Guard the trace"]["verdict"] != "no-op"


def test_a_comment_the_port_repeats_word_for_word_marks_the_change_ported(tmp_path):
    """The port copied the fix with its explanation (wrapped differently, `//` for `#`), though it
    spells the code its own way: `echoed` says ported and cites the port's line."""
    port, r = pair(tmp_path, [("[Core] Free once", edit(*FREED_TWICE))], port_sched=PORT_FREED)
    got = r["[Core] Free once"]
    assert (got["verdict"], got["rule"]) == ("ported", "echoed"), got
    line = next(e for e in got["evidence"] if " is in the port at " in e)
    where = line.split(" is in the port at ")[1].split(":")[0:2]
    text = (port / where[0]).read_text().splitlines()[int(where[1]) - 1]
    assert "A request freed twice must not hand its blocks" in text, (line, text)


def test_a_comment_the_port_does_not_repeat_echoes_nothing(tmp_path):
    _, r = pair(tmp_path, [("[Core] Free once", edit(*FREED_TWICE))])
    assert r["[Core] Free once"]["rule"] != "echoed", r["[Core] Free once"]


def test_a_repeated_comment_beside_a_deferral_record_is_a_quote_of_what_is_left_out(tmp_path):
    deferring = PORT_FREED.replace(
        "  // A request freed twice", "  // DEFERRED: upstream's guard, which says:\n  // A request freed twice"
    )
    _, r = pair(tmp_path, [("[Core] Free once", edit(*FREED_TWICE))], port_sched=deferring)
    assert r["[Core] Free once"]["rule"] != "echoed", r["[Core] Free once"]


def test_a_comment_moved_within_its_file_is_no_new_text(tmp_path):
    """The comment stood above `step` before the change: the port holding it says nothing of this change."""
    comment = FREED_TWICE[1].split("        if")[0]
    base = SCHED.replace(
        "    def step(self, tokens):\n", comment.replace("        #", "    #") + "    def step(self, tokens):\n"
    )
    moved = base.replace(comment.replace("        #", "    #"), "").replace(*FREED_TWICE)
    _, r = pair(tmp_path, [("[Core] Free once", {"vllm/core/sched.py": moved})], base_sched=base, port_sched=PORT_FREED)
    assert r["[Core] Free once"]["rule"] != "echoed", r["[Core] Free once"]


def test_a_change_whose_comments_the_port_mostly_lacks_is_not_echoed(tmp_path):
    """One block of three repeated is no copy of the change."""
    more = (
        FREED_TWICE[0],
        FREED_TWICE[1]
        + "\n    def drain(self):\n        # Draining walks every queue once and drops the requests that\n"
        "        # finished while the scheduler was paused for a weight update.\n        return []\n"
        "\n    def pause(self):\n        # Pausing keeps the running requests in place but stops\n"
        "        # admitting waiting ones until the caller resumes the loop.\n        return None\n",
    )
    _, r = pair(tmp_path, [("[Core] Free once", edit(*more))], port_sched=PORT_FREED)
    assert r["[Core] Free once"]["rule"] != "echoed", r["[Core] Free once"]


@pytest.mark.parametrize("new_file", ["vllm/core/extra.py", "vllm/core/inc/extra.py"])
def test_a_licence_header_a_new_file_copies_is_no_new_text(tmp_path, new_file):
    """The header stood in other upstream files of the folder (of its parent, for a folder the
    change makes) before the change: a port file carrying it too (a vendored kernel, say) says
    nothing of this change."""
    header = "# Licensed under the Apache License, Version 2.0 (the License); you may\n# not use this file except in compliance with the License.\n"
    port_header = "// Licensed under the Apache License, Version 2.0 (the License); you may\n// not use this file except in compliance with the License.\n"
    change = {new_file: header + "\n\ndef extra(budget):\n    return budget * 3\n"}
    _, r = pair(
        tmp_path,
        [("[Core] Extra", change)],
        base_extra={"vllm/core/other.py": header + "\nX = 1\n"},
        port_extra={"src/vendored/kernel.cpp": port_header + "int k;\n"},
    )
    assert r["[Core] Extra"]["rule"] != "echoed", r["[Core] Extra"]


def test_a_comment_block_too_big_to_ask_git_about_counts_as_old(tmp_path):
    """A pasted blob of comment (40 lines of 60,000 characters) that the port repeats: asking
    `git grep` about every line would overflow the command line, so lines that long are not asked,
    count as old text, and the audit goes on."""
    blob = "".join(f"        # {' '.join(f'w{i}x{k}' for k in range(8000))}\n" for i in range(40))
    first = blob.splitlines()[0].replace("        #", "//")
    change = edit("        return request\n", blob + "        return request or None\n")
    _, r = pair(tmp_path, [("[Core] Blob", change)], port_extra={"src/core/blob.cpp": first + "\nint b;\n"})
    assert r["[Core] Blob"]["rule"] != "echoed", r["[Core] Blob"]["rule"]


PROPOSER = "class DraftProposer:\n    def propose(self, k):\n        return k\n"
PORT_PROPOSER = (
    "// Ported from: {cites} @ abc1234\n"
    "class DraftProposer {{\n public:\n  int propose(int k) {{ return k; }}\n}};\n"
    "int Use(DraftProposer& p) {{ return p.propose(1); }}\n"
)


MOVE = ("[Spec] Move the proposer", {"vllm/spec/proposer.py": None, "vllm/spec/draft/proposer.py": PROPOSER})


@pytest.mark.parametrize(
    "order, cites, route",
    [
        # the port's header still cites the file's old name; the change comes after the rename
        ("move first", "vllm/spec/proposer.py", "vllm/spec/proposer.py (entry 1)"),
        # the port's header already cites the new name; the change comes before the rename
        ("move last", "vllm/spec/draft/proposer.py", "vllm/spec/draft/proposer.py (entry 2)"),
    ],
)
def test_a_file_the_upstream_renames_keeps_its_counterpart_under_either_name(tmp_path, order, cites, route):
    path = "vllm/spec/draft/proposer.py" if order == "move first" else "vllm/spec/proposer.py"
    tweak = ("[Spec] Tweak the proposer", {path: PROPOSER.replace("return k", "return k + 1")})
    commits = [MOVE, tweak] if order == "move first" else [tweak, MOVE]
    port_file = {"src/spec/proposer.cpp": PORT_PROPOSER.format(cites=cites)}
    _, r = pair(tmp_path, commits, base_extra={"vllm/spec/proposer.py": PROPOSER}, port_extra=port_file)
    got = r["[Spec] Tweak the proposer"]
    assert got["rule"] != "unmapped", got
    assert any(f"renamed it to or from {route}" in x for x in got["evidence"]), got["evidence"]


# an upstream check with its own wording, and a port that carries the check and the words
NEGATIVE = (
    "        return request\n",
    "        if request.blocks < 0:\n"
    '            raise ValueError(f"a request cannot hand back a negative block count, got {request.blocks}")\n'
    "        return request\n",
)
PORT_NEGATIVE = PORT_SCHED.replace(
    "  int free(int request) {{ return request; }}",
    "  int free(int request) {{\n"
    "    if (request < 0)\n"
    '      throw std::invalid_argument("a request cannot hand back a negative block count, got " +\n'
    "                                  std::to_string(request));\n"
    "    return request;\n"
    "  }}",
)


def test_a_message_the_port_writes_word_for_word_marks_the_change_ported(tmp_path):
    """The port carries the check with its wording, though it names the code its own way: `quoted`
    says ported and cites the port's line."""
    port, r = pair(tmp_path, [("[Core] Refuse negative blocks", edit(*NEGATIVE))], port_sched=PORT_NEGATIVE)
    got = r["[Core] Refuse negative blocks"]
    assert (got["verdict"], got["rule"]) == ("ported", "quoted"), got
    line = next(e for e in got["evidence"] if " is in the port at " in e)
    path, number = line.split(" is in the port at ")[1].split(":")[0:2]
    assert (
        "a request cannot hand back a negative block count" in (port / path).read_text().splitlines()[int(number) - 1]
    )


def test_a_message_the_port_lacks_quotes_nothing(tmp_path):
    _, r = pair(tmp_path, [("[Core] Refuse negative blocks", edit(*NEGATIVE))])
    assert r["[Core] Refuse negative blocks"]["rule"] != "quoted", r["[Core] Refuse negative blocks"]


def test_a_message_upstream_wrote_before_the_change_is_no_new_text(tmp_path):
    """The same words stood in another upstream file before: the port may have them from there."""
    older = {
        "vllm/core/pool.py": 'def check(n):\n    if n < 0:\n        raise ValueError(f"a request cannot hand back a negative block count, got {n}")\n'
    }
    _, r = pair(
        tmp_path, [("[Core] Refuse negative blocks", edit(*NEGATIVE))], port_sched=PORT_NEGATIVE, base_extra=older
    )
    assert r["[Core] Refuse negative blocks"]["rule"] != "quoted", r["[Core] Refuse negative blocks"]


def test_a_message_beside_a_deferral_record_is_a_quote_of_what_is_left_out(tmp_path):
    deferring = PORT_NEGATIVE.replace(
        "    if (request < 0)\n", "    // DEFERRED: upstream's check, which raises:\n    if (false)\n"
    )
    _, r = pair(tmp_path, [("[Core] Refuse negative blocks", edit(*NEGATIVE))], port_sched=deferring)
    assert r["[Core] Refuse negative blocks"]["rule"] != "quoted", r["[Core] Refuse negative blocks"]


def test_messages_upstream_wrote_before_do_not_outvote_the_new_one(tmp_path):
    """Two messages moved in from another upstream file say nothing either way; the one new message
    the port holds decides."""
    moved = (
        '        raise ValueError(f"the pool was drained while a request still held its blocks: {n}")\n'
        '        raise ValueError(f"the scheduler saw a block handed out twice in one step: {n}")\n'
    )
    older = {"vllm/core/pool.py": "def check(n):\n    if n:\n" + moved}
    change = (
        NEGATIVE[0],
        NEGATIVE[1].replace(
            "        return request\n", "        if request.gone:\n" + moved + "        return request\n"
        ),
    )
    _, r = pair(
        tmp_path, [("[Core] Refuse negative blocks", edit(*change))], port_sched=PORT_NEGATIVE, base_extra=older
    )
    got = r["[Core] Refuse negative blocks"]
    assert (got["verdict"], got["rule"]) == ("ported", "quoted"), got


# an upstream change that creates a module, and a port file that names it as its source
WIDGET = {
    "vllm/core/widget.py": "class WidgetPool:\n"
    "    def __init__(self, size):\n"
    "        self.size = size\n"
    "        self.free = list(range(size))\n"
    "\n"
    "    def take(self):\n"
    "        return self.free.pop() if self.free else None\n"
    "\n"
    "    def release_block(self, block):\n"
    "        self.free.append(block)\n",
    "vllm/core/sched.py": SCHED.replace(
        "import logging\n", "import logging\n\nfrom vllm.core.widget import WidgetPool\n"
    ),
}
PORT_WIDGET = (
    "// Ported from: vllm/core/widget.py @ {pin}\n"
    "class Pool {{\n public:\n  explicit Pool(int n) : n_(n) {{}}\n  int Take();\n  void Give(int b);\n"
    " private:\n  int n_;\n}};\n"
)


def test_a_port_file_written_from_a_file_the_change_creates_marks_it_ported(tmp_path):
    """The port's source did not exist before this change: the port was written from it as the change
    left it or later (its pin, a commit this upstream clone lacks, cannot be placed), whatever it named
    the code."""
    widget = {"src/core/widget.cpp": PORT_WIDGET.format(pin="0123456789ab")}
    _, r = pair(tmp_path, [("[Core] Add a widget pool", WIDGET)], port_extra=widget)
    got = r["[Core] Add a widget pool"]
    assert (got["verdict"], got["rule"]) == ("ported", "written-from"), got
    assert any("creates vllm/core/widget.py; the port's src/core/widget.cpp name it" in x for x in got["evidence"])


def test_a_source_pinned_before_the_change_is_no_sign_of_it(tmp_path):
    """A header whose pin is placed before the change says the port was written from an older file."""
    cites_both = PORT_SCHED.replace(
        "// Ported from: vllm/core/sched.py @ {pin}", "// Ported from: vllm/core/sched.py + vllm/core/widget.py @ {pin}"
    )
    _, r = pair(tmp_path, [("[Core] Add a widget pool", WIDGET)], port_sched=cites_both)
    assert r["[Core] Add a widget pool"]["rule"] != "written-from", r["[Core] Add a widget pool"]


def test_a_created_file_that_holds_little_of_the_change_decides_nothing(tmp_path):
    body = "".join(f"        self.extra_{i} = budget * {i}\n" for i in range(12))
    more = {
        **WIDGET,
        "vllm/core/sched.py": WIDGET["vllm/core/sched.py"].replace(
            "        self.budget = budget\n", "        self.budget = budget\n" + body
        ),
    }
    widget = {"src/core/widget.cpp": PORT_WIDGET.format(pin="0123456789ab")}
    _, r = pair(tmp_path, [("[Core] Add a widget pool", more)], port_extra=widget)
    assert r["[Core] Add a widget pool"]["rule"] != "written-from", r["[Core] Add a widget pool"]


def test_a_port_file_that_records_part_of_its_source_left_out_is_judged_by_the_record_rules(tmp_path):
    """The port names the created file as its source but says it left `release_block` out: that part is work."""
    deferring = PORT_WIDGET.replace(
        " private:", " // DEFERRED: release_block (no caller hands blocks back yet).\n private:"
    )
    widget = {"src/core/widget.cpp": deferring.format(pin="0123456789ab")}
    _, r = pair(tmp_path, [("[Core] Add a widget pool", WIDGET)], port_extra=widget)
    assert r["[Core] Add a widget pool"]["rule"] != "written-from", r["[Core] Add a widget pool"]


def test_a_deviation_in_the_port_file_written_from_the_created_file_is_no_omission(tmp_path):
    """A deviation records that the port carries `release_block` its own way: the port was still
    written from the file the change creates. The same line as a deferral leaves it out."""
    rules = {}
    for word in ("DEVIATION", "DEFERRED"):
        noted = PORT_WIDGET.replace(
            " private:", f" // {word}: release_block hands the block to the caller's free list.\n private:"
        )
        widget = {"src/core/widget.cpp": noted.format(pin="0123456789ab")}
        _, r = pair(tmp_path / word, [("[Core] Add a widget pool", WIDGET)], port_extra=widget)
        rules[word] = r["[Core] Add a widget pool"]["rule"]
    assert rules["DEVIATION"] == "written-from" and rules["DEFERRED"] != "written-from", rules


def test_a_created_test_file_a_port_test_cites_is_no_source_of_the_code(tmp_path):
    """A port's test that cites upstream's test says what it checks, not what the code carries."""
    created = {
        "vllm/core/tests/test_widget.py": WIDGET["vllm/core/widget.py"].replace(
            "class WidgetPool", "class TestWidgetPool"
        )
    }
    port_test = {
        "src/core/tests/test_widget.cpp": PORT_WIDGET.format(pin="0123456789ab").replace(
            "vllm/core/widget.py", "vllm/core/tests/test_widget.py"
        )
    }
    _, r = pair(tmp_path, [("[Core] Test the widget pool", created)], port_extra=port_test)
    assert r["[Core] Test the widget pool"]["rule"] != "written-from", r["[Core] Test the widget pool"]


# an upstream module that a later commit deletes, adding a rewrite of it beside it under a new name
# (too different for git to call it a rename), and a port file written from the rewrite
OLD_POOL = WIDGET["vllm/core/widget.py"]
FRONT_FIRST = ("        self.free.append(block)\n", "        self.free.insert(0, block)\n")
REWRITE = {
    "vllm/core/widget.py": None,
    "vllm/core/widget_engine.py": "from collections import deque\n\n\nclass WidgetEngine:\n"
    "    def __init__(self, size):\n        self.queue = deque(range(size))\n\n"
    "    def next_block(self):\n        return self.queue.popleft() if self.queue else None\n",
}
PORT_ENGINE = (
    "// Ported from: vllm/core/widget_engine.py @ {pin}\nclass Engine {{\n public:\n  int Next();\n{record}}};\n"
)


def _replaced(tmp_path, *, queued=1, successor="vllm/core/widget_engine.py", named="", record="", pin="0123456789ab"):
    """The queue holds the fix to widget.py (and the rewrite, which adds `successor`, too with queued=2);
    the port names `named` (`successor` by default) as its source. Audit's result for the fix."""
    rewrite = {"vllm/core/widget.py": None, successor: REWRITE["vllm/core/widget_engine.py"]}
    header = PORT_ENGINE.replace("vllm/core/widget_engine.py", named or successor)
    port = {"src/core/widget_engine.cpp": header.format(pin=pin, record=record)}
    _, r = pair(
        tmp_path,
        [
            ("[Core] Hand released blocks out first", {"vllm/core/widget.py": OLD_POOL.replace(*FRONT_FIRST)}),
            ("[Core] Rewrite the widget pool as an engine", rewrite),
        ],
        base_extra={"vllm/core/widget.py": OLD_POOL},
        port_extra=port,
        queued=queued,
    )
    return r["[Core] Hand released blocks out first"]


def test_a_file_the_upstream_later_replaced_with_the_ports_source_is_ported(tmp_path):
    """The port names a file that exists only from a commit after the fix on: it was written from the
    upstream past the fix, whatever it named the code, though the queue ends before that commit."""
    got = _replaced(tmp_path)
    assert (got["verdict"], got["rule"]) == ("ported", "replaced"), got
    assert any(
        "vllm/core/widget.py: the upstream deleted it at" in x
        and "added vllm/core/widget_engine.py in its place" in x
        and "src/core/widget_engine.cpp name vllm/core/widget_engine.py" in x
        for x in got["evidence"]
    ), got["evidence"]


def test_a_replacement_inside_the_queue_ports_the_entries_before_it(tmp_path):
    got = _replaced(tmp_path, queued=2)
    assert (got["verdict"], got["rule"]) == ("ported", "replaced"), got


def test_a_file_added_beside_a_deleted_one_under_another_name_replaced_nothing(tmp_path):
    """A commit that deletes widget.py and adds an unrelated module beside it is no rewrite of it."""
    got = _replaced(tmp_path, successor="vllm/core/ledger.py")
    assert got["rule"] != "replaced", got


def test_a_replacement_the_port_does_not_name_says_nothing(tmp_path):
    got = _replaced(tmp_path, successor="vllm/core/widget_executor.py", named="vllm/core/widget_executor.py")
    assert got["rule"] == "replaced"  # the control: the same pair, its header naming the successor
    got = _replaced(tmp_path / "unnamed", successor="vllm/core/widget_executor.py", named="vllm/core/widget_engine.py")
    assert got["rule"] != "replaced", got


def test_a_port_file_that_records_the_change_left_out_is_judged_by_the_record_rules(tmp_path):
    got = _replaced(tmp_path, record="  // DEFERRED: release_block (released blocks go to the back).\n")
    assert got["rule"] != "replaced", got


def test_a_source_pinned_before_the_change_is_no_sign_the_port_follows_its_replacement(tmp_path):
    """A pin placed before the fix says the port was written from an older upstream, whatever it names."""
    assert _replaced(tmp_path / "first")["rule"] == "replaced"
    base = git(tmp_path / "first/up", "rev-list", "--max-parents=0", "HEAD").strip()
    got = _replaced(tmp_path / "again", pin=base)
    assert git(tmp_path / "again/up", "rev-list", "--max-parents=0", "HEAD").strip() == base  # same dates, same sha
    assert got["rule"] != "replaced", got


def test_a_run_too_big_for_one_grep_asks_each_entry_for_its_own_messages(tmp_path, monkeypatch):
    """Past the bound of one `git grep` of every entry's messages (a hostile diff may hold thousands of
    literals), each entry asks for its own, and the verdict is the same."""
    from porttrack.audit import subject

    monkeypatch.setattr(subject, "_HELD_TEXTS", 0)
    _, r = pair(tmp_path, [("[Core] Refuse negative blocks", edit(*NEGATIVE))], port_sched=PORT_NEGATIVE)
    got = r["[Core] Refuse negative blocks"]
    assert (got["verdict"], got["rule"]) == ("ported", "quoted"), got


def test_a_data_file_the_code_reads_is_part_of_the_surface_the_port_lacks(tmp_path):
    """A kernel's tuned configs (`.json`) with no port counterpart are surface the port lacks, like
    an unmapped code file, and gate on it; a test's JSON and a text file stay `ignore`. With
    `[audit] data_suffixes = []` the configs are `ignore` again."""
    commits = [
        ("[Perf] Tuned configs for a new GPU", {"vllm/ops/configs/E=8,device_name=GPU.json": '{"1": {"BLOCK": 16}}\n'}),
        ("[Test] Expected outputs", {"vllm/core/tests/expected.json": '{"ok": true}\n'}),
        ("[Misc] Notes", {"vllm/ops/NOTES.txt": "tuned on one GPU\n"}),
    ]
    _, r = pair(tmp_path / "a", commits)
    tuned = r["[Perf] Tuned configs for a new GPU"]
    assert (tuned["verdict"], tuned["rule"]) == ("surface-absent", "unmapped"), [tuned["reason"], tuned["evidence"]]
    assert [g["kind"] for g in tuned["gates"]] == ["unmapped"], tuned["gates"]
    for subject in ("[Test] Expected outputs", "[Misc] Notes"):
        assert r[subject]["verdict"] == "ignore", [subject, r[subject]["reason"]]
    _, r = pair(tmp_path / "b", commits[:1], extra="[audit]\ndata_suffixes = []\n")
    assert r["[Perf] Tuned configs for a new GPU"]["verdict"] == "ignore", r["[Perf] Tuned configs for a new GPU"]


def test_a_change_to_the_upstreams_tests_alone_is_no_op_even_where_the_port_maps_them(tmp_path):
    """A port that mirrors the upstream's tests maps them, but writes its own: a change that touches
    nothing else is no-op (tests-only), whatever test names the port lacks; a change beside code is
    still judged by its code."""
    tests, more = TESTS, FIRST_TEST + "\n\ndef test_free_twice():\n    assert make_sched() == 1\n"
    _, r = pair(
        tmp_path,
        [
            ("[Core] Test the scheduler", {tests: FIRST_TEST}),
            ("[Core] Test freeing twice", {tests: more}),
            (
                "[Core] Budget by half",
                {tests: more + "\n\ndef test_half():\n    pass\n", **edit("self.budget)", "self.budget // 2)")},
            ),
        ],
        port_extra=PORT_TESTS,
    )
    for subject in ("[Core] Test the scheduler", "[Core] Test freeing twice"):
        got = r[subject]
        assert (got["verdict"], got["rule"]) == ("no-op", "tests-only"), (got["reason"], got["evidence"])
        assert tests in got["reason"]
    assert r["[Core] Budget by half"]["verdict"] == "real-gap", r["[Core] Budget by half"]


def test_a_change_beside_the_upstreams_tests_is_judged_by_its_code(tmp_path):
    """Where the port maps the upstream's tests too, a change that rewords a comment in code and
    rewrites a test is judged by the comment: no-op, not the test's new lines."""
    commented = SCHED.replace(
        "    def free(self, request):\n", "    # hand the request back\n    def free(self, request):\n"
    )
    tests = FIRST_TEST + "\n\ndef test_free_twice():\n    assert 2 > 1\n"
    got = beside_tests(tmp_path, "[Core] Say what free does", commented, tests, port_extra=PORT_TESTS)
    assert (got["verdict"], got["rule"]) == ("no-op", "no-op"), (got["reason"], got["evidence"])
    assert any(TESTS in x and "judged by its code" in x for x in got["evidence"]), got["evidence"]
