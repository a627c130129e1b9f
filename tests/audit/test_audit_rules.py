"""audit's rules one by one, each on a small upstream and port built here (docs/audit.md lists them).

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it: one test per rule and per failure
shape that the rules guard against.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_files, git, init_repo, run_cli

from porttrack.queue import file as queuefile

CONFIG = """\
[upstream]
repo = "../up"
paths = ["vllm/"]

[port]
scopes = {{ code = ["src"], tests = ["tests"] }}

[[map]]
upstream = 'vllm/core/(?P<rest>.+)\\.py'
port = ["src/core/{{rest}}.cpp"]

[owners]
matrices = [".agents/*-matrix.md"]
{owners}
{extra}
"""

SCHED = """\
import logging

logger = logging.getLogger(__name__)


class Scheduler:
    def __init__(self, budget):
        self.budget = budget

    def step(self, tokens):
        return compute_budget(tokens, self.budget)

    def free(self, request):
        return request
"""

PORT_SCHED = """\
// Ported from: vllm/core/sched.py @ {pin}
int ComputeBudget(int tokens, int budget) {{ return tokens < budget ? tokens : budget; }}

class Scheduler {{
 public:
  explicit Scheduler(int budget) : budget_(budget) {{}}
  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}
  int free(int request) {{ return request; }}
 private:
  int budget_;
}};

int Run(Scheduler& s) {{ return s.step(4) + s.free(1); }}
"""

MATRIX = "# Engine matrix\n\n| ID | Item | Upstream code/tests | State |\n|---|---|---|---|\n"


def pair(
    tmp_path: Path,
    commits: list[tuple[str, dict]],
    *,
    port_sched: str = PORT_SCHED,
    port_extra: dict | None = None,
    rows: str = "",
    owners: str = "",
    extra: str = "",
    base_extra: dict | None = None,
    base_sched: str = SCHED,
) -> tuple[Path, dict[str, dict]]:
    """Upstream: a base with vllm/core/sched.py, then `commits` (subject, files). The port maps
    vllm/core/ to src/core/. Returns the port and audit's entry-level results by subject."""
    up = init_repo(tmp_path / "up")
    base = commit_files(
        up,
        {"vllm/core/sched.py": base_sched, **(base_extra or {})},
        "[Core] base (#1)",
        date="2026-03-01T00:00:00+00:00",
    )
    for i, (subject, files) in enumerate(commits):
        commit_files(up, files, subject, date=f"2026-03-{2 + i:02d}T00:00:00+00:00")
    port = init_repo(tmp_path / "port")
    files = {
        "porttrack.toml": CONFIG.format(owners=owners, extra=extra),
        ".agents/engine-matrix.md": MATRIX + rows,
        "src/core/sched.cpp": port_sched.format(pin=base[:10]),
        **(port_extra or {}),
    }
    commit_files(port, files, "port")
    run_cli("queue", "build", "--range", f"{base}..{git(up, 'rev-parse', 'HEAD')}", "--name", "c", cwd=port, check_rc=0)
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    subjects = {e.n: e.subject for e in queuefile.load(port / "queue/c.toml").queue.entries}
    return port, {subjects[r["entry"]]: r for r in data["results"] if r["part"] is None}


def edit(old: str, new: str, text: str = SCHED) -> dict:
    assert old in text
    return {"vllm/core/sched.py": text.replace(old, new)}


def steps(*changes: tuple[str, str, str]) -> list[tuple[str, dict]]:
    """Commits that each build on the last: (subject, old, new) applied to sched.py in turn."""
    text, out = SCHED, []
    for subject, old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
        out.append((subject, {"vllm/core/sched.py": text}))
    return out


# ---------------------------------------------------------------- ignore and no-op


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


def test_lines_that_serve_only_what_the_port_lacks_are_no_work_in_a_function_it_has(tmp_path):
    """The function is the port's, but the changed lines name only things upstream already had that
    the port's code names nowhere: surface-absent. A name the change defines on a class the port has
    is new behaviour for that surface: still work."""
    base = SCHED.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.stats_sink = StatsSink()\n"
    )
    flushed = base.replace(
        "        return request\n", "        self.stats_sink.flush_pending()\n        return request\n"
    )
    floored = flushed.replace(
        "        self.stats_sink = StatsSink()\n",
        "        self.stats_sink = StatsSink()\n        self.request_floor = 2\n",
    ).replace(
        "        return request\n",
        "        if request < self.request_floor:\n            request = self.request_floor\n        return request\n",
    )
    _, r = pair(
        tmp_path,
        [
            ("[Metrics] Flush the stats sink on free", {"vllm/core/sched.py": flushed}),
            ("[Core] A floor under each request", {"vllm/core/sched.py": floored}),
        ],
        base_sched=base,
    )
    sink = r["[Metrics] Flush the stats sink on free"]
    assert (sink["verdict"], sink["rule"]) == ("surface-absent", "content-absent"), sink
    assert "change only lines that serve what the port lacks" in sink["reason"]
    assert any("flush_pending" in ev and "names nowhere" in ev for ev in sink["evidence"])
    floor = r["[Core] A floor under each request"]
    assert floor["verdict"] in ("real-gap", "owned", "blocked"), [floor["reason"], floor["evidence"]]


# ---------------------------------------------------------------- surface, deferral, content


def test_member_counts_only_inside_its_class(tmp_path):
    # the port has a `free` (in Scheduler), but no Allocator: Allocator.free is not there
    other = "class Allocator:\n    def free(self, block):\n        return block\n"
    _, r = pair(
        tmp_path,
        [
            ("[Core] Fix free", {"vllm/core/alloc.py": other.replace("return block", "return block + 1")}),
        ],
        base_extra={"vllm/core/alloc.py": other},
        port_extra={
            "src/core/alloc.cpp": "// Ported from: vllm/core/alloc.py @ 0000000000\nint Unrelated() { return 0; }\n"
        },
    )
    fix = r["[Core] Fix free"]
    assert fix["verdict"] == "surface-absent", fix
    assert any(
        "Allocator.free: its 1 file(s) with code hits are none of the port counterparts" in e for e in fix["evidence"]
    )


def test_content_evidence_ported_gap_and_absent(tmp_path):
    old = "        return compute_budget(tokens, self.budget)\n"
    new = "        return compute_token_budget(tokens, self.budget, max_batch_tokens)\n"
    ported_port = (
        PORT_SCHED.replace("ComputeBudget", "ComputeTokenBudget")
        .replace(
            "int ComputeTokenBudget(int tokens, int budget)",
            "constexpr int kMaxBatchTokens = 8;\nint ComputeTokenBudget(int tokens, int budget, int max_batch_tokens)",
        )
        .replace("ComputeTokenBudget(tokens, budget_)", "ComputeTokenBudget(tokens, budget_, kMaxBatchTokens)")
    )
    _, r = pair(tmp_path / "a", [("[Core] Cap the budget", edit(old, new))], port_sched=ported_port)
    got = r["[Core] Cap the budget"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), got
    assert any(e.startswith("hunk vllm/core/sched.py:11 vs src/core/sched.cpp: ported") for e in got["evidence"])
    # the port still has the old side: work is left
    _, r = pair(tmp_path / "b", [("[Core] Cap the budget", edit(old, new))])
    assert r["[Core] Cap the budget"]["verdict"] == "real-gap"
    assert any(
        ": gap; " in e and "old side still there ['compute_budget']" in e
        for e in r["[Core] Cap the budget"]["evidence"]
    )
    # the port has the method but neither side of the hunk: it lacks the code the change edits
    bare = PORT_SCHED.replace("ComputeBudget(tokens, budget_)", "tokens").replace(
        "int ComputeBudget(int tokens, int budget) {{ return tokens < budget ? tokens : budget; }}\n", ""
    )
    _, r = pair(tmp_path / "c", [("[Core] Cap the budget", edit(old, new))], port_sched=bare)
    got = r["[Core] Cap the budget"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), got


def test_content_counts_telling_tokens_over_the_whole_change(tmp_path):
    # one new name per method: neither hunk tells enough alone, the change as a whole does
    change = edit(
        "        return request\n",
        "        return release_blocks(request)\n",
        SCHED.replace(
            "        return compute_budget(tokens, self.budget)\n",
            "        return compute_budget(tokens, self.budget) + headroom_tokens\n",
        ),
    )
    port = PORT_SCHED.replace(
        "ComputeBudget(tokens, budget_); }}", "ComputeBudget(tokens, budget_) + kHeadroomTokens; }}"
    )
    port = port.replace("return request; }}", "return ReleaseBlocks(request); }}")
    _, r = pair(tmp_path, [("[Core] Headroom", change)], port_sched=port)
    got = r["[Core] Headroom"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), got
    assert sum(": ported; new side found" in e for e in got["evidence"]) == 2


def test_names_the_file_already_used_prove_nothing(tmp_path):
    # the new side only reuses names the upstream file had: any port of that file has them too
    _, r = pair(
        tmp_path,
        [("[Core] Clamp", edit("        return request\n", "        return compute_budget(request, self.budget)\n"))],
    )
    got = r["[Core] Clamp"]
    assert got["verdict"] == "real-gap", got
    assert any(e.startswith("hunk vllm/core/sched.py:") and ": neutral; " in e for e in got["evidence"]), got[
        "evidence"
    ]


def test_raise_statements_and_stdlib_modules_tell_nothing(tmp_path):
    # the port checks the same condition with its own exception and wording, under another name:
    # the upstream method has no port counterpart, yet its change is there
    base = SCHED + "\n    def _check_args(self, tokens):\n        return tokens\n"
    change = edit(
        "    def _check_args(self, tokens):\n        return tokens\n",
        "    def _check_args(self, tokens):\n"
        "        if not math.isnan(tokens) or tokens > max_step_tokens:\n"
        "            raise ValueError(\n"
        '                f"tokens must be a finite count below the cap, got {tokens}"\n'
        "            )\n"
        "        return tokens\n",
        base,
    )
    port = PORT_SCHED.replace(
        "int step(int tokens) {{",
        "int step(int tokens) {{\n    if (!std::isnan(tokens) || tokens > kMaxStepTokens) "
        'throw std::invalid_argument("bad tokens");\n   ',
    )
    _, r = pair(tmp_path, [("[Core] Finite tokens", change)], port_sched=port, base_sched=base)
    got = r["[Core] Finite tokens"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), got
    hunk = next(e for e in got["evidence"] if e.startswith("hunk "))
    assert "new side found ['isnan', 'max_step_tokens'] missing []" in hunk, hunk


def test_a_member_hit_that_belongs_to_another_class_of_the_file_is_absent(tmp_path):
    # the port has LocalPool.free; RemoteAllocator (same upstream file) it lacks, members and all
    pool = (
        "class LocalPool:\n    def free(self, block):\n        return block\n\n\n"
        "class RemoteAllocator:\n    def free(self, block):\n        return block\n"
    )
    port_pool = (
        "// Ported from: vllm/core/pool.py @ 0000000000\n"
        "class LocalPool {\n public:\n  int free(int block) { return block; }\n};\n"
        "int Use(LocalPool& p) { return p.free(1); }\n"
    )
    fixed = (
        pool[: pool.index("class RemoteAllocator")]
        + "class RemoteAllocator:\n    def free(self, block):\n        return block + 1\n"
    )
    grown = fixed + "\n    def evict(self, block):\n        return block\n"
    _, r = pair(
        tmp_path,
        [("[Core] Remote free", {"vllm/core/pool.py": fixed}), ("[Core] Remote evict", {"vllm/core/pool.py": grown})],
        base_extra={"vllm/core/pool.py": pool},
        port_extra={"src/core/pool.cpp": port_pool},
    )
    fix = r["[Core] Remote free"]
    assert (fix["verdict"], fix["rule"]) == ("surface-absent", "surface-absent"), fix
    assert any("its free hits are those of LocalPool.free" in e for e in fix["evidence"]), fix["evidence"]
    grow = r["[Core] Remote evict"]
    assert (grow["verdict"], grow["rule"]) == ("surface-absent", "surface-absent"), grow
    assert grow["reason"] == "adds RemoteAllocator.evict only to classes the port lacks (RemoteAllocator)"


def test_a_block_guarded_by_a_name_the_port_lacks_is_surface_absent(tmp_path):
    guarded = (
        "        if self.canvas_mode:\n"
        "            return min(tokens, self.canvas_limit)\n"
        "        return compute_budget(tokens, self.budget)\n"
    )
    init = "        self.budget = budget\n"
    base = SCHED.replace(init, init + "        self.canvas_mode = budget < 0\n")
    change = edit(init, init + "        self.canvas_limit = 8\n", base)
    change = edit("        return compute_budget(tokens, self.budget)\n", guarded, change["vllm/core/sched.py"])
    _, r = pair(tmp_path / "a", [("[Core] Cap canvas steps", change)], base_sched=base)
    got = r["[Core] Cap canvas steps"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), "\n".join(got["evidence"])
    assert got["reason"] == "1 hunk(s) in vllm/core/sched.py can never run here: it lacks the code the change edits"
    said = " ".join(got["evidence"])
    assert "only adds (or rewrites) a block guarded by canvas_mode" in said
    assert "git grep -i -E 'canvas_?mode' -- src: no line outside comments" in said
    assert "adds canvas_limit only for code the port lacks or can never run" in said
    # a comment naming it is no code; the port's code naming it (in any spelling) makes the block live
    noted = PORT_SCHED.replace("class Scheduler {{", "// canvas_mode: deferred\nclass Scheduler {{")
    _, r = pair(tmp_path / "b", [("[Core] Cap canvas steps", change)], base_sched=base, port_sched=noted)
    assert r["[Core] Cap canvas steps"]["rule"] == "content-absent"
    live = PORT_SCHED.replace("int budget_;", "int budget_;\n  bool canvasMode_ = false;")
    _, r = pair(tmp_path / "c", [("[Core] Cap canvas steps", change)], base_sched=base, port_sched=live)
    assert r["[Core] Cap canvas steps"]["verdict"] == "real-gap"
    # `if not SWITCH:` is the branch that runs where the switch is missing: work, not guarded
    negated = edit("if self.canvas_mode:", "if not self.canvas_mode:", change["vllm/core/sched.py"])
    _, r = pair(tmp_path / "e", [("[Core] Cap canvas steps", negated)], base_sched=base)
    assert r["[Core] Cap canvas steps"]["verdict"] == "real-gap", r["[Core] Cap canvas steps"]["evidence"]
    # a switch the change defines itself is new behaviour the port may need
    new_switch = edit(init, init + "        self.canvas_mode = budget < 0\n        self.canvas_limit = 8\n")
    new_switch = edit("        return compute_budget(tokens, self.budget)\n", guarded, new_switch["vllm/core/sched.py"])
    _, r = pair(tmp_path / "d", [("[Core] Cap canvas steps", new_switch)])
    assert r["[Core] Cap canvas steps"]["verdict"] == "real-gap"


def test_old_lines_wrapped_in_the_else_of_a_guard_the_port_lacks_still_run_there(tmp_path):
    """`if GUARD: new else: old`: where the port lacks GUARD only the old lines run, as before, and
    a method the change adds to the port's class for the new branch alone serves nothing there."""
    init = "        self.budget = budget\n"
    # far enough below `step` for the diff to show the new method as a hunk of its own
    tail = "".join(f"\n    def spare_{k}(self):\n        return {k}\n" for k in range(3))
    base = SCHED.replace(init, init + "        self.canvas_mode = budget < 0\n") + tail
    wrapped = (
        "        if self.canvas_mode:\n"
        "            # a canvas step is capped\n"
        "            return self.capped_step(tokens)\n"
        "        else:\n"
        "            return compute_budget(tokens, self.budget)\n"
    )
    capped = "\n    def capped_step(self, tokens):\n        return min(tokens, self.budget // 2)\n"

    def change(branch: str) -> dict[str, str]:
        grown = base + capped
        return edit("        return compute_budget(tokens, self.budget)\n", branch, grown)

    _, r = pair(tmp_path / "a", [("[Core] Cap canvas steps", change(wrapped))], base_sched=base)
    got = r["[Core] Cap canvas steps"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), "\n".join(got["evidence"])
    said = " ".join(got["evidence"])
    assert "only adds (or rewrites) a block guarded by canvas_mode" in said
    assert "adds capped_step only for code the port lacks or can never run" in said
    # the else, which is what runs where the guard is absent, changes too: that is work
    changed = wrapped.replace("compute_budget(tokens, self.budget)", "compute_budget(tokens, self.free(self.budget))")
    _, r = pair(tmp_path / "b", [("[Core] Cap canvas steps", change(changed))], base_sched=base)
    assert r["[Core] Cap canvas steps"]["verdict"] == "real-gap", "\n".join(r["[Core] Cap canvas steps"]["evidence"])


def test_a_name_of_three_words_tells_alone_and_a_shorter_one_does_not(tmp_path):
    init = "        self.budget = budget\n"
    port = PORT_SCHED.replace(
        "int budget_;", "int budget_;\n  int max_blocks_per_request_ = 0;\n  int step_count_ = 0;"
    )
    _, r = pair(
        tmp_path,
        [
            ("[Core] Block cap", edit(init, init + "        self.max_blocks_per_request = 0\n")),
            (
                "[Core] Count steps",
                edit(init, init + "        self.max_blocks_per_request = 0\n        self.step_count = 0\n"),
            ),
        ],
        port_sched=port,
    )
    assert (r["[Core] Block cap"]["verdict"], r["[Core] Block cap"]["rule"]) == ("ported", "content-ported")
    assert r["[Core] Count steps"]["verdict"] != "ported"  # `step_count` alone tells too little


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


def test_an_old_side_gone_alone_is_not_ported(tmp_path):
    # the port never had what the change deletes: that is no evidence it ported the deletion
    trimmed = SCHED.replace(
        "        return request\n", "        request = trim_request(request, max_trim_tokens)\n        return request\n"
    )
    _, r = pair(tmp_path, [("[Core] Stop trimming", {"vllm/core/sched.py": SCHED})], base_sched=trimmed)
    got = r["[Core] Stop trimming"]
    assert got["verdict"] != "ported", got
    assert any("gone ['max_trim_tokens', 'trim_request']" in e for e in got["evidence"]), got["evidence"]


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


# ---------------------------------------------------------------- blocked


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


def test_blocked_only_on_surface_absent_entries_is_surface_absent(tmp_path):
    _, r = pair(
        tmp_path,
        [
            (
                "[Spec] Proposer",
                {"vllm/spec/proposer.py": "class DraftProposer:\n    def propose(self):\n        return 1\n"},
            ),
            (
                "[Spec] Proposer helper",
                {
                    "vllm/spec/proposer.py": "class DraftProposer:\n    def propose(self):\n        return 1\n\n\ndef draft_helper():\n    return 3\n"
                },
            ),
            ("[Core] Use the helper", edit("        return request\n", "        return draft_helper() + request\n")),
        ],
    )
    use = r["[Core] Use the helper"]
    assert r["[Spec] Proposer helper"]["verdict"] == "surface-absent"
    assert (use["verdict"], use["rule"]) == ("surface-absent", "absent-blockers"), use
    assert use["gates"] and all(g["kind"] == "absent" for g in use["gates"])


def test_a_logger_an_earlier_entry_adds_blocks_nothing(tmp_path):
    """A module's logger is plumbing: the port logs its own way, so a change that logs through the
    logger an earlier entry added waits on nobody."""
    base = SCHED.replace("logger = logging.getLogger(__name__)\n", "")
    logged = base.replace("import logging\n", "import logging\n\nlogger = logging.getLogger(__name__)\n")
    uses = logged.replace("        return request\n", "        logger.info('free')\n        return request + 1\n")
    _, r = pair(
        tmp_path,
        [("[Core] Add a logger", {"vllm/core/sched.py": logged}), ("[Core] Log frees", {"vllm/core/sched.py": uses})],
        base_sched=base,
    )
    got = r["[Core] Log frees"]
    assert got["verdict"] != "blocked" and not got.get("blocked_by"), [got["reason"], got["evidence"]]


def test_blocked_drops_removed_symbols_and_docstring_mentions(tmp_path):
    _, r = pair(
        tmp_path,
        steps(
            (
                "[Core] Add a pacer",
                "    def free(self, request):\n",
                "    def pace(self):\n        return 1\n\n    def free(self, request):\n",
            ),
            (
                "[Core] Document free",
                "    def free(self, request):\n        return request\n",
                '    def free(self, request):\n        """Unlike pace, this frees."""\n        return request\n',
            ),
            ("[Core] Call the pacer", "        return request\n", "        return self.pace() + request\n"),
            ("[Core] Drop the pacer", "    def pace(self):\n        return 1\n\n", ""),
        ),
    )
    # the pacer's removal waits on nobody; a docstring mention waits on nobody; a real call does
    assert r["[Core] Drop the pacer"]["verdict"] != "blocked"
    assert r["[Core] Document free"]["verdict"] != "blocked"
    called = r["[Core] Call the pacer"]
    assert called["verdict"] == "blocked" and called["blocked_by"], called


def test_a_name_inside_a_multi_line_docstring_blocks_nothing(tmp_path):
    port, r = pair(
        tmp_path,
        steps(
            (
                "[Core] Add a pacer",
                "    def free(self, request):\n",
                "    def pace(self):\n        return 1\n\n    def free(self, request):\n",
            ),
            (
                "[Core] Document free at length",
                "    def free(self, request):\n        return request\n",
                '    def free(self, request):\n        """Free a request.\n\n        Unlike pace, this frees at once.\n        """\n'
                "        return request or 0\n",
            ),
        ),
    )
    assert r["[Core] Document free at length"]["verdict"] != "blocked", r["[Core] Document free at length"]
    # even where the queue says the entry uses the name (a hand-edited or imported queue), the
    # diff decides: a mention inside a docstring, on a line of its own, is no use
    qpath = port / "queue" / "c.toml"
    q = queuefile.load(qpath)
    n = next(e.n for e in q.queue.entries if e.subject == "[Core] Document free at length")
    text = qpath.read_text()
    head = text.index(f"\nn = {n}\n")
    at = text.index("uses = [", head)
    qpath.write_text(text[:at] + 'uses = ["pace", ' + text[at + len("uses = [") :])
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    doc = next(x for x in data["results"] if x["entry"] == n and x["part"] is None)
    assert doc["verdict"] != "blocked", doc


# ---------------------------------------------------------------- owned


def test_owned_needs_the_pr_a_symbol_or_an_overlapping_line_range(tmp_path):
    change = edit(
        "    def free(self, request):\n        return request\n",
        "    def free(self, request):\n        return request or None\n",
    )
    rows = (
        "| `SCHED-WHOLE` | whole file | `vllm/core/sched.py` | `ACTIVE` |\n"
        "| `SCHED-TOP` | top lines | `vllm/core/sched.py:1-3` | `ACTIVE` |\n"
    )
    _, r = pair(tmp_path / "a", [("[Core] Free fix", change)], rows=rows)
    assert r["[Core] Free fix"]["verdict"] == "real-gap"  # a whole-file row and other lines own nothing
    _, r = pair(
        tmp_path / "b",
        [("[Core] Free fix", change)],
        rows=rows + "| `SCHED-FREE` | free | `vllm/core/sched.py:13-15` | `ACTIVE` |\n",
    )
    got = r["[Core] Free fix"]
    assert (got["verdict"], got["owner"].split(" ")[0]) == ("owned", "SCHED-FREE")
    assert any("cites vllm/core/sched.py:13-15, which overlaps the change" in e for e in got["evidence"])
    # a parked row owns nothing
    _, r = pair(
        tmp_path / "c",
        [("[Core] Free fix", change)],
        rows="| `SCHED-FREE` | free | `vllm/core/sched.py:13-15` | `PARKED` |\n",
        owners='parked_states = ["PARKED"]',
    )
    assert r["[Core] Free fix"]["verdict"] == "real-gap"


# ---------------------------------------------------------------- naming


def test_snake_pascal_and_renamed_members_are_found_in_their_class(tmp_path):
    pascal = PORT_SCHED.replace("int free(int request)", "int Free(int request)").replace("s.free(1)", "s.Free(1)")
    change = edit("        return request\n", "        return request or None\n")
    _, r = pair(tmp_path / "a", [("[Core] Free fix", change)], port_sched=pascal)
    got = r["[Core] Free fix"]
    assert got["verdict"] != "surface-absent" and "Scheduler.free is spelled Free in the port" in got["evidence"]
    renamed = PORT_SCHED.replace("int free(int request)", "int release(int request)").replace(
        "s.free(1)", "s.release(1)"
    )
    _, r = pair(tmp_path / "b", [("[Core] Free fix", change)], port_sched=renamed)
    assert r["[Core] Free fix"]["verdict"] == "surface-absent"  # not found under any spelling ...
    _, r = pair(
        tmp_path / "c",
        [("[Core] Free fix", change)],
        port_sched=renamed,
        extra='[naming]\nrenames = { free = "release" }',
    )
    assert r["[Core] Free fix"]["verdict"] != "surface-absent"  # ... until the rename is declared


def test_a_python_change_respelled_in_cpp_is_found_ported(tmp_path):
    """The port spells each change its own way: an enum constant as `kPascalCase`, a field with a
    trailing underscore, `x if x is not None else y` as `value_or`, `and not` as `&& !`, a property
    as a method call, `len(x)` as `.size()`. Content evidence compares names in one spelling and
    leaves the language's words out, so each change is found ported all the same."""
    step = "        return compute_budget(tokens, self.budget)\n"
    port_step = "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}"
    cases = [
        (
            "        if self.mode == SchedulerMode.CHUNKED_PREFILL_ONLY:\n            return tokens\n" + step,
            "  int step(int tokens) {{\n    if (mode_ == SchedulerMode::kChunkedPrefillOnly) return tokens;\n"
            "    return ComputeBudget(tokens, budget_);\n  }}",
        ),
        (
            "        limit = self.max_step_tokens if self.max_step_tokens is not None else self.budget\n"
            "        return compute_budget(tokens, limit)\n",
            "  int step(int tokens) {{\n    const int limit = max_step_tokens_.value_or(budget_);\n"
            "    return ComputeBudget(tokens, limit);\n  }}",
        ),
        (
            "        if self.use_chunking and not self.is_paused:\n            return min(len(tokens), self.budget)\n"
            + step,
            "  int step(const std::vector<int>& tokens) {{\n"
            "    if (use_chunking_ && !is_paused()) return std::min(static_cast<int>(tokens.size()), budget_);\n"
            "    return ComputeBudget(tokens.size(), budget_);\n  }}",
        ),
    ]
    for i, (new, cpp) in enumerate(cases):
        _, r = pair(
            tmp_path / str(i), [("[Core] Step", edit(step, new))], port_sched=PORT_SCHED.replace(port_step, cpp)
        )
        got = r["[Core] Step"]
        assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [i, got["reason"], got["evidence"]]


def test_a_hunk_the_port_never_had_beside_a_ported_one_leaves_the_change_ported(tmp_path):
    """One hunk's new form is the port's; the other edits `widget_len`, which the port never had
    (neither side is there). The change is there as far as the port goes: ported, not absent."""
    base = SCHED + "\n\ndef widget_len(widgets):\n    return len(widgets) * widget_scale\n"
    change = base.replace("compute_budget(tokens, self.budget)", "clamp_step_budget(tokens, self.budget)").replace(
        "len(widgets) * widget_scale", "len(widgets) + widget_margin"
    )
    port = PORT_SCHED.replace("ComputeBudget", "ClampStepBudget")
    _, r = pair(
        tmp_path / "a", [("[Core] Clamp steps", {"vllm/core/sched.py": change})], base_sched=base, port_sched=port
    )
    got = r["[Core] Clamp steps"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    assert "(1 hunk(s)); 1 hunk(s) edit code the port never had" in got["reason"], got["reason"]
    # without the ported hunk, the port lacks what the change edits
    alone = base.replace("len(widgets) * widget_scale", "len(widgets) + widget_margin")
    _, r = pair(tmp_path / "b", [("[Core] Widen", {"vllm/core/sched.py": alone})], base_sched=base, port_sched=port)
    assert r["[Core] Widen"]["verdict"] == "surface-absent", r["[Core] Widen"]


def test_lines_a_later_commit_rewrote_are_superseded_and_the_rest_decides(tmp_path):
    """A change whose only gap is lines a later commit of the queue rewrote, in a form the port has,
    is ported: its missing name is gone from upstream by the queue's target. Without that later
    commit the same change leaves work."""
    init = "        self.budget = budget\n"
    cap = edit(init, init + "        self.max_blocks_per_request = 0\n")
    cap = edit(
        "        return compute_budget(tokens, self.budget)\n",
        "        return cap_step_budget(tokens, self.max_blocks_per_request)\n",
        cap["vllm/core/sched.py"],
    )
    renamed = {"vllm/core/sched.py": cap["vllm/core/sched.py"].replace("cap_step_budget", "clamp_step_budget")}
    port = PORT_SCHED.replace("int budget_;", "int budget_;\n  int max_blocks_per_request_ = 0;").replace(
        "return ComputeBudget(tokens, budget_);", "return ClampStepBudget(tokens, max_blocks_per_request_);"
    )
    _, r = pair(tmp_path / "a", [("[Core] Cap steps", cap), ("[Core] Rename the cap", renamed)], port_sched=port)
    got = r["[Core] Cap steps"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    assert "1 hunk(s) a later upstream commit rewrote (superseded)" in got["reason"]
    assert any("cap_step_budget, which upstream no longer has" in ev for ev in got["evidence"]), got["evidence"]
    _, r = pair(tmp_path / "b", [("[Core] Cap steps", cap)], port_sched=port)
    assert r["[Core] Cap steps"]["verdict"] == "real-gap", r["[Core] Cap steps"]["evidence"]
    # a target upstream cannot show (a queue file edited, a clone without it) proves no later form
    port, _ = pair(tmp_path / "c", [("[Core] Cap steps", cap), ("[Core] Rename the cap", renamed)], port_sched=port)
    queue = port / "queue" / "c.toml"
    text = queue.read_text()
    target = git(tmp_path / "c" / "up", "rev-parse", "HEAD")
    queue.write_text(text.replace(f'target = "{target}"', f'target = "{"e" * 40}"'))
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    got = next(x for x in data["results"] if x["entry"] == 1 and x["part"] is None)
    assert got["verdict"] == "real-gap", [got["reason"], got["evidence"]]


# ---------------------------------------------------------------- pins


def test_a_pin_the_upstream_lacks_is_said_once_loudly_and_content_decides(tmp_path):
    unknown = "f" * 40
    port, r = pair(
        tmp_path,
        [("[Core] Free fix", edit("        return request\n", "        return request or None\n"))],
        port_sched=PORT_SCHED.replace("@ {pin}", f"@ {unknown[:12]}"),
    )
    proc = run_cli("audit", cwd=port, check_rc=0)
    loud = [line for line in proc.stderr.splitlines() if line.startswith("PINS NOT PLACED")]
    assert len(loud) == 1 and f"{unknown[:12]} (stated by 1 port file(s), e.g. src/core/sched.cpp)" in loud[0]
    assert "fetch it into" in loud[0] and "content evidence decides" in loud[0]
    assert json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)["notices"] == loud
    sync = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert f"- **Pins not placed:** {unknown[:12]}" in sync.split("\n## ", 1)[0]
    assert r["[Core] Free fix"]["verdict"] != "ported"  # no pin places it, and its content is not in the port


# ---------------------------------------------------------------- controls


def test_an_absent_probe_gets_a_control_of_its_own_class_or_file(tmp_path):
    base = SCHED.replace(
        "    def free(self, request):\n", "    def drain(self):\n        return 0\n\n    def free(self, request):\n"
    )
    base += "\n\ndef plan_batch(n):\n    return n\n"
    _, r = pair(
        tmp_path,
        [
            ("[Core] Drain more", edit("        return 0\n", "        return 1\n", base)),
            ("[Core] Plan less", edit("    return n\n", "    return n - 1\n", base)),
            ("[Core] Free fix", edit("        return request\n", "        return request or None\n", base)),
        ],
        base_sched=base,
    )
    drain, plan = r["[Core] Drain more"], r["[Core] Plan less"]
    assert (drain["verdict"], plan["verdict"]) == ("surface-absent", "surface-absent")
    # a member's control is its class, where the port has it
    assert drain["gates"][0]["probe"] == "Scheduler.drain" and drain["gates"][0]["control"] == "Scheduler"
    assert any(
        e.startswith("control for Scheduler.drain: Scheduler, its class, defined at src/core/sched.cpp:")
        for e in drain["evidence"]
    )
    # a top-level name's control is a sibling from the same upstream file, defined in its counterpart
    assert plan["gates"][0]["control"] == "Scheduler"
    assert any(
        "a sibling from vllm/core/sched.py, defined in its port counterpart at src/core/sched.cpp:" in e
        for e in plan["evidence"]
    )


def test_an_absent_name_of_a_file_without_counterpart_gets_a_control_from_its_folder(tmp_path):
    ops = "def fused_gemm(a, b):\n    return a * b\n"
    _, r = pair(
        tmp_path,
        [
            ("[Core] Free fix", edit("        return request\n", "        return request or None\n")),
            ("[Ops] Gemm fix", {"vllm/core/ops.py": ops.replace("a * b", "b * a")}),
        ],
        base_extra={"vllm/core/ops.py": ops},
    )
    gemm = r["[Ops] Gemm fix"]
    assert gemm["verdict"] == "surface-absent" and gemm["gates"][0]["probe"] == "fused_gemm"
    # the port has no ops file: the control is a name the queue changes in the same folder, where the port has it
    assert gemm["gates"][0]["control"] == "Scheduler", gemm
    assert any(
        "a neighbour from vllm/core/sched.py, defined in its port counterpart at src/core/sched.cpp:" in e
        for e in gemm["evidence"]
    ), gemm["evidence"]


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


def test_a_one_word_constant_is_not_its_lower_case_word(tmp_path):
    """`EMPTY` may be `kEmpty` in the port, never the `.empty()` of every container."""
    base = SCHED.replace("\n\nclass Scheduler:", "\nEMPTY = -1\n\n\nclass Scheduler:")
    queue = "#include <deque>\nstruct Queue {\n  std::deque<int> q;\n  bool idle() const { return q.empty(); }\n};\n"
    _, r = pair(
        tmp_path,
        [("[Core] Mark empty slots with -2", {"vllm/core/sched.py": base.replace("EMPTY = -1", "EMPTY = -2")})],
        base_sched=base,
        port_extra={"src/core/queue.cpp": queue},
    )
    entry = r["[Core] Mark empty slots with -2"]
    assert "consumer" not in entry["reason"] and entry["verdict"] != "real-gap", entry


def test_a_neighbour_control_is_found_as_the_port_spells_it(tmp_path):
    base = SCHED + "\n\ndef compute_budget(tokens, budget):\n    return min(tokens, budget)\n"
    ops = "def fused_gemm(a, b):\n    return a * b\n"
    _, r = pair(
        tmp_path,
        [
            (
                "[Core] Budget fix",
                edit("    return min(tokens, budget)\n", "    return max(0, min(tokens, budget))\n", base),
            ),
            ("[Ops] Gemm fix", {"vllm/core/ops.py": ops.replace("a * b", "b * a")}),
        ],
        base_sched=base,
        base_extra={"vllm/core/ops.py": ops},
        port_extra={"src/aaa/first.cpp": "int FirstDefined() { return 0; }\n"},  # the scan's automatic control
    )
    gemm = r["[Ops] Gemm fix"]
    # the only name the queue changes in the folder is compute_budget, which the port spells ComputeBudget
    assert gemm["gates"][0]["control"] == "ComputeBudget", gemm
    assert any(
        e.startswith("control for fused_gemm: ComputeBudget, a neighbour from vllm/core/sched.py, defined in its port")
        for e in gemm["evidence"]
    ), gemm["evidence"]


def test_a_twin_the_port_took_from_another_upstream_file_is_not_the_code_changed(tmp_path):
    """Upstream defines `clamp_tokens` in two files; the port's cites the other one, so a change to
    this one's is to code the port lacks. A name only one upstream file defines stays the port's."""
    ops = "def clamp_tokens(tokens, cap):\n    return min(tokens, cap)\n"
    legacy = ops + "\n\ndef pad_tokens(tokens):\n    return tokens + 1\n"
    port_ops = (
        "// Ported from: vllm/core/ops.py @ {pin}\n"
        "int clamp_tokens(int tokens, int cap) {{ return tokens < cap ? tokens : cap; }}\n"
        "int pad_tokens(int tokens) {{ return tokens + 1; }}\n"
        "int Use(int t) {{ return clamp_tokens(t, 4) + pad_tokens(t); }}\n"
    )
    _, r = pair(
        tmp_path,
        [
            (
                "[Legacy] Clamp at zero",
                {"vllm/legacy/ops.py": legacy.replace("min(tokens, cap)", "max(0, min(tokens, cap))")},
            ),
            (
                "[Legacy] Pad by two",
                {
                    "vllm/legacy/ops.py": legacy.replace("min(tokens, cap)", "max(0, min(tokens, cap))").replace(
                        "+ 1", "+ 2"
                    )
                },
            ),
            ("[Core] Clamp at zero", {"vllm/core/ops.py": ops.replace("min(tokens, cap)", "max(0, min(tokens, cap))")}),
        ],
        base_extra={"vllm/core/ops.py": ops, "vllm/legacy/ops.py": legacy},
        port_extra={"src/core/ops.cpp": port_ops.format(pin="0" * 10)},
    )
    twin = r["[Legacy] Clamp at zero"]
    assert (twin["verdict"], twin["rule"]) == ("surface-absent", "unmapped"), [twin["reason"], twin["evidence"]]
    assert any(
        "the port's clamp_tokens (src/core/ops.cpp) is the counterpart of upstream's other clamp_tokens in vllm/core/ops.py"
        in ev
        for ev in twin["evidence"]
    ), twin["evidence"]
    # the port's pad_tokens cites a file that has none: nothing says it is another file's code
    assert r["[Legacy] Pad by two"]["verdict"] == "real-gap", r["[Legacy] Pad by two"]["reason"]
    assert r["[Core] Clamp at zero"]["verdict"] == "real-gap", r["[Core] Clamp at zero"]["reason"]


def test_a_log_line_beside_plain_behaviour_does_not_make_a_hunk_reach_for_what_the_port_lacks(tmp_path):
    # the port has no logger: the log line names something it lacks, but it carries no behaviour,
    # and `return request + 1` in a function the port has and calls is work
    change = edit(
        "    def free(self, request):\n        return request\n",
        '    def free(self, request):\n        logger.debug("free %s", request)\n        return request + 1\n',
    )
    _, r = pair(tmp_path, [("[Core] Free one more", change)])
    got = r["[Core] Free one more"]
    assert (got["verdict"], got["rule"]) == ("real-gap", "real-gap"), got


def test_lines_inside_a_docstring_that_opens_above_the_hunk_are_no_names(tmp_path):
    # the hunk edits a line in the middle of a docstring: read alone it looks like code, and its
    # words like names the port lacks; read against the whole file it is text
    base = SCHED.replace(
        "    def free(self, request):\n        return request\n",
        '    def free(self, request):\n        """Free a request.\n\n        Its blocks go back to the pool.\n        """\n'
        "        return request\n",
    )
    change = edit(
        '        Its blocks go back to the pool.\n        """\n        return request\n',
        '        Its blocks go back to the pool, oldest evictable first.\n        """\n'
        "        return release_pool_blocks(request)\n",
        base,
    )
    port = PORT_SCHED.replace(
        "int free(int request) {{ return request; }}", "int free(int request) {{ return ReleasePoolBlocks(request); }}"
    )
    reword = edit("        Its blocks go back to the pool.\n", "        Its blocks go back to the shared pool.\n", base)
    _, r = pair(
        tmp_path,
        [("[Doc] Say which pool", reword), ("[Core] Free releases its blocks", change)],
        base_sched=base,
        port_sched=port,
    )
    got = r["[Core] Free releases its blocks"]
    assert not any("evictable" in ev for ev in got["evidence"]), got["evidence"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    # a change to those lines alone changes text, not behaviour
    doc = r["[Doc] Say which pool"]
    assert (doc["verdict"], doc["rule"]) == ("no-op", "no-op"), [doc["reason"], doc["evidence"]]


def test_lines_that_each_reach_for_what_the_port_lacks_are_no_work_even_with_nothing_new(tmp_path):
    """Moving a call the port lacks from one method to another adds no new token, yet every changed
    line names something the port's code names nowhere: no work. Reordering names the port has is
    still work, and a name imported from a library (typing, torch...) is never what the port lacks."""
    base = SCHED.replace("import logging\n", "import logging\nfrom typing import Any, cast\n").replace(
        "        return request\n", "        self.audit_trail.record_free(request)\n        return cast(Any, request)\n"
    )
    moved = base.replace("        self.audit_trail.record_free(request)\n", "").replace(
        "        return compute_budget(tokens, self.budget)\n",
        "        self.audit_trail.record_free(tokens)\n        return compute_budget(tokens, self.budget)\n",
    )
    _, r = pair(
        tmp_path,
        [
            ("[Metrics] Record on step instead", {"vllm/core/sched.py": moved}),
            (
                "[Core] Budget first",
                edit("compute_budget(tokens, self.budget)", "compute_budget(self.budget, tokens)", moved),
            ),
            ("[Core] Typed free", edit("cast(Any, request)", "cast(Any, (request))", moved)),
            (
                "[Metrics] Record one more",
                edit(
                    "        self.audit_trail.record_free(tokens)\n",
                    "        self.audit_trail.record_free(\n            tokens,\n            1,\n        )\n",
                    moved,
                ),
            ),
        ],
        base_sched=base,
    )
    # the argument lines of a call that spans lines belong to the line that names the call
    more = r["[Metrics] Record one more"]
    assert (more["verdict"], more["rule"]) == ("surface-absent", "content-absent"), [more["reason"], more["evidence"]]
    move = r["[Metrics] Record on step instead"]
    assert (move["verdict"], move["rule"]) == ("surface-absent", "content-absent"), [move["reason"], move["evidence"]]
    assert "change only lines that each name something the port lacks" in move["reason"]
    assert any("audit_trail" in ev and "names nowhere" in ev for ev in move["evidence"]), move["evidence"]
    assert any(g["probe"] == "audit_trail" and g["kind"] == "absent" for g in move["gates"]), move["gates"]
    for work in ("[Core] Budget first", "[Core] Typed free"):
        assert r[work]["verdict"] in ("real-gap", "owned", "blocked"), [work, r[work]["reason"], r[work]["evidence"]]


def test_a_local_bound_above_the_hunk_from_what_the_port_lacks_serves_it(tmp_path):
    """The changed line tests a local; the unchanged line that binds it reads only an attribute
    the port lacks (spelled in a string): the line serves that attribute, so it is no work. A local
    bound from what the port has, or one the port names itself, keeps the line work."""
    base = SCHED.replace(
        "        return request\n",
        '        policy = getattr(self, "spill_policy", None)\n'
        "        if policy is not None:\n"
        "            request = request + 1\n"
        "        limit = self.budget\n"
        "        if limit is not None:\n"
        "            request = request + 2\n"
        "        return request\n",
    )
    spill = edit("        if policy is not None:\n", "        if policy is not None and request > 0:\n", base)
    limit = edit(
        "        if limit is not None:\n",
        "        if limit is not None and request > 0:\n",
        spill["vllm/core/sched.py"],
    )
    _, r = pair(tmp_path, [("[Core] Spill only real requests", spill), ("[Core] Limit only real requests", limit)],
                base_sched=base)  # fmt: skip
    got = r["[Core] Spill only real requests"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [got["reason"], got["evidence"]]
    assert any("spill_policy" in ev and "names nowhere" in ev for ev in got["evidence"]), got["evidence"]
    work = r["[Core] Limit only real requests"]
    assert work["verdict"] in ("real-gap", "owned", "blocked"), [work["reason"], work["evidence"]]
    # the same spill line, where the port names the local: it has the thing, however it gets it
    port = PORT_SCHED.replace("int free(int request) {{ return request; }}",
                              "int free(int request) {{ int policy = 0; return request + policy; }}")  # fmt: skip
    _, r = pair(tmp_path / "b", [("[Core] Spill only real requests", spill)], base_sched=base, port_sched=port)
    got = r["[Core] Spill only real requests"]
    assert got["verdict"] in ("real-gap", "owned", "blocked"), [got["reason"], got["evidence"]]


def test_a_hunk_whose_every_line_serves_what_the_port_lacks_is_no_work_though_some_names_are_the_ports(tmp_path):
    """A hunk may call what the port has (`step`, `free`) and still serve only what it lacks: a local
    set from the port's missing collector taints the lines that read it, and an `if` over changed
    lines does what its body does, and so does a new method. A bare `return` is behaviour of its own,
    a new field of the port's class is work whatever its type names, a log line serves nothing, and a
    hunk with a new name the port has is not judged this way."""
    step = "        return compute_budget(tokens, self.budget)\n"
    stats = (
        "        if self.budget:\n"
        "            step_stats = self.stats_collector.take_step_stats()\n"
        '            logger.warning("stats %s", step_stats)\n'
        "            if step_stats is not None and step_stats.step(tokens):\n"
        "                step_stats.free(tokens)\n"
    )
    runaway = (
        "        if tokens > self.budget * 16:\n"
        "            flagged = self.stats_collector.flag_runaway(tokens)\n"
        "            return\n"
    )
    field = "        self.stats_collector: StatsCollector | None = None\n"
    free = "    def free(self, request):\n        return request\n"
    reset = "        self.stats_collector.reset_step_stats()\n"  # a new method does what its body does
    left = "        return compute_budget(tokens, self.budget) - tokens\n"
    taken = PORT_SCHED.replace("int budget_;", "int budget_;\n  int TakeStepStats() {{ return 0; }}")
    r = {}
    for i, (subject, change, port) in enumerate(
        [
            ("[Metrics] Merge step stats", edit(step, stats + step), PORT_SCHED),
            ("[Core] Stop a runaway step", edit(step, runaway + step), PORT_SCHED),
            (
                "[Metrics] Collector field",
                edit("        self.budget = budget\n", "        self.budget = budget\n" + field),
                PORT_SCHED,
            ),
            ("[Metrics] Merge what the port takes", edit(step, stats + step), taken),
            ("[Metrics] Reset stats", edit(free, free + "\n    def reset_stats(self):\n" + reset), PORT_SCHED),
            ("[Core] Budget left", edit(free, free + "\n    def budget_left(self, tokens):\n" + left), PORT_SCHED),
        ]
    ):
        r.update(pair(tmp_path / str(i), [(subject, change)], port_sched=port)[1])
    merged = r["[Metrics] Merge step stats"]
    assert (merged["verdict"], merged["rule"]) == ("surface-absent", "content-absent"), merged["evidence"]
    assert "change only lines that serve what the port lacks" in merged["reason"]
    assert {g["probe"] for g in merged["gates"]} == {"stats_collector", "take_step_stats"}, merged["gates"]
    assert (r["[Metrics] Reset stats"]["verdict"], r["[Metrics] Reset stats"]["rule"]) == (
        "surface-absent",
        "content-absent",
    ), r["[Metrics] Reset stats"]["evidence"]
    for work in (
        "[Core] Stop a runaway step",
        "[Metrics] Collector field",
        "[Metrics] Merge what the port takes",
        "[Core] Budget left",
    ):
        assert r[work]["verdict"] == "real-gap", [work, r[work]["reason"], r[work]["evidence"]]


def test_lines_inside_a_function_the_port_lacks_have_no_place_in_it(tmp_path):
    """A change to `step` (the port's) that says nothing, with lines inside `drain_remote`, a method the
    port's code names nowhere: those lines have nowhere to go, so the change is surface-absent. A
    port comment naming the method is its counterpart under another name, unless it records the
    method as left out; and a name the port has, new on those lines, may be the method's job done
    elsewhere, unless it is recorded as left out."""
    drain = "    def drain_remote(self, tokens):\n        return compute_budget(tokens, self.budget)\n"
    base = SCHED + "\n" + drain
    step = "        return compute_budget(tokens, self.budget)\n"
    quiet = "        assert tokens >= 0\n" + step  # names only what the file had: nothing to tell by
    drained = drain.replace(
        "        return compute_budget(", "        tokens = tokens - 1\n        return compute_budget("
    )
    # `reserve` is the port's, `remote_slots` is not: the hunk leaves work unless the method is left out
    reserving = drain.replace("        return", "        self.reserve(tokens, self.remote_slots)\n        return")

    def change(new_drain: str) -> dict:
        text = SCHED.replace(step, quiet, 1) + "\n" + new_drain
        return {"vllm/core/sched.py": text}

    reserve = PORT_SCHED.replace("int budget_;", "int budget_;\n  int reserve(int n) {{ return n; }}")
    cited = reserve + "// drain_remote: remote drains run inside Run() below\n"
    deferred = reserve + "// Deferred: drain_remote (remote drains are not ported)\n"
    r = {}
    for i, (subject, new_drain, port) in enumerate(
        [
            ("[Core] Drain one less", drained, reserve),
            ("[Core] Drain one less, cited", drained, cited),
            ("[Core] Drain one less, deferred", drained, deferred),
            ("[Core] Reserve while draining", reserving, reserve),
            ("[Core] Reserve while draining, deferred", reserving, deferred),
        ]
    ):
        r.update(pair(tmp_path / str(i), [(subject, change(new_drain))], port_sched=port, base_sched=base)[1])
    for absent in (
        "[Core] Drain one less",
        "[Core] Drain one less, deferred",
        "[Core] Reserve while draining, deferred",
    ):
        got = r[absent]
        assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [absent, got["evidence"]]
        assert any("Scheduler.drain_remote, which the port's code names nowhere" in x for x in got["evidence"]), absent
    for work in ("[Core] Drain one less, cited", "[Core] Reserve while draining"):
        assert r[work]["verdict"] == "real-gap", [work, r[work]["reason"], r[work]["evidence"]]


def test_a_new_member_read_only_where_the_port_lacks_code_serves_what_it_lacks(tmp_path):
    """A change gives the port's Scheduler a new member, `remote_hits`, and reads it. Read only in a
    file the port has no counterpart of, or only inside a method the port lacks, the member serves
    what the port lacks: no work. Read in `step`, the port's, it is work; so is a member nothing in
    the change reads (its readers may be anyone's)."""
    drain = "\n    def drain_remote(self):\n        return self.budget\n"
    stats = "def free(s):\n    return {}\n"  # `free` is a name the port has, in a file it has no counterpart of
    base_extra = {"vllm/core/stats.py": stats}
    init = "        self.budget = budget\n"
    member = init + "        self.remote_hits = 0\n"
    read_by_stats = {"vllm/core/stats.py": stats.replace("{}", "{'hits': s.remote_hits}")}
    cases = {
        "[Core] Count remote hits for stats": {**edit(init, member, SCHED + drain), **read_by_stats},
        "[Core] Count remote hits for draining": edit(
            init + "\n    def step",
            member + "\n    def step",
            (SCHED + drain).replace("        return self.budget\n", "        return self.budget - self.remote_hits\n"),
        ),
        "[Core] Count remote hits in step": edit(
            "        return compute_budget(tokens, self.budget)\n",
            "        return compute_budget(tokens, self.budget) - self.remote_hits\n",
            (SCHED + drain).replace(init, member),
        ),
        "[Core] Count remote hits, read by nothing here": edit(init, member, SCHED + drain),
    }
    r = {}
    for i, (subject, files) in enumerate(cases.items()):
        r.update(pair(tmp_path / str(i), [(subject, files)], base_sched=SCHED + drain, base_extra=base_extra)[1])
    for absent in ("[Core] Count remote hits for stats", "[Core] Count remote hits for draining"):
        got = r[absent]
        assert got["verdict"] == "surface-absent", [absent, got["reason"], got["evidence"]]
    for work in ("[Core] Count remote hits in step", "[Core] Count remote hits, read by nothing here"):
        assert r[work]["verdict"] == "real-gap", [work, r[work]["reason"], r[work]["evidence"]]


def test_a_twin_implementation_the_port_has_carries_a_change_to_the_other_copy(tmp_path):
    """Upstream implements the scheduler twice: vllm/core/sched.py, which the port maps, and
    vllm/v2/sched.py, which nothing in the port maps. A change made to both copies is ported when the
    port's copy has its new side: the v2 hunk is read against the port file of its twin. Where the
    port's copy lacks it, the twin says nothing (upstream may change one copy alone) and the v2 hunk
    stays a hunk with no counterpart."""
    step = "        return compute_budget(tokens, self.budget)\n"
    new = "        return clamp_window(compute_budget(tokens, self.budget), 4096)\n"
    port_step = "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}"
    clamped = (
        "  static int ClampWindow(int n, int w) {{ return n < w ? n : w; }}\n"
        "  int step(int tokens) {{ return ClampWindow(ComputeBudget(tokens, budget_), 4096); }}"
    )
    both = {"vllm/core/sched.py": SCHED.replace(step, new), "vllm/v2/sched.py": SCHED.replace(step, new)}
    change = [("[Core] Clamp the step", both)]
    v2 = {"vllm/v2/sched.py": SCHED}
    _, has = pair(tmp_path / "has", change, base_extra=v2, port_sched=PORT_SCHED.replace(port_step, clamped))
    got = has["[Core] Clamp the step"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    assert any(x.startswith("hunk vllm/v2/sched.py:") and "vs src/core/sched.cpp: ported" in x for x in got["evidence"])
    _, lacks = pair(tmp_path / "lacks", change, base_extra=v2)
    got = lacks["[Core] Clamp the step"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]
    assert any(x.startswith("hunk vllm/v2/sched.py:") and "(no port counterpart)" in x for x in got["evidence"]), got


def test_a_port_file_is_a_twin_only_of_what_its_upstream_file_defines(tmp_path):
    """The port's sched.cpp defines ComputeBudget and has the clamp, but the file it maps upstream
    only calls compute_budget: a change to compute_budget in another upstream file has no twin in the
    port, and is not found ported there."""
    budget = "def compute_budget(tokens, budget):\n    return min(tokens, budget)\n"
    port_step = "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}"
    clamped = (
        "  static int ClampWindow(int n, int w) {{ return n < w ? n : w; }}\n"
        "  int step(int tokens) {{ return ClampWindow(ComputeBudget(tokens, budget_), 4096); }}"
    )
    new = budget.replace("return min(tokens, budget)", "return clamp_window(min(tokens, budget), 4096)")
    _, r = pair(
        tmp_path,
        [("[Core] Clamp the budget", {"vllm/v2/budget.py": new})],
        base_extra={"vllm/v2/budget.py": budget},
        port_sched=PORT_SCHED.replace(port_step, clamped),
    )
    got = r["[Core] Clamp the budget"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]


TRIMMED = SCHED.replace(
    "        return request\n",
    "        request = trim_request(sorted(request), max_trim_tokens)\n        return request\n",
)


def test_a_change_that_only_removes_what_the_port_lacks_is_no_work_in_the_ports_files(tmp_path):
    """A change whose hunks in the port's files only delete code the port never had, and whose added
    code lies in a file with no counterpart and needs something the port lacks, leaves the port's
    files nothing to do: surface-absent by `untouched`, gated on a name the port lacks. Where the port
    still has the deleted code, the same change is work."""
    policy = (
        "def trim_request(request, max_trim_tokens):\n"
        "    budget = compute_budget(request, 2)\n"
        "    return shorten_tokens(budget, max_trim_tokens)\n"
    )
    change = [
        ("[Core] Move trimming out of the scheduler", {"vllm/core/sched.py": SCHED, "vllm/trim/policy.py": policy})
    ]
    _, r = pair(tmp_path / "lacks", change, base_sched=TRIMMED)
    got = r["[Core] Move trimming out of the scheduler"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert {g["probe"] for g in got["gates"]} <= {"trim_request", "max_trim_tokens", "shorten_tokens"}, got["gates"]
    assert got["gates"], got
    port_free = "  int free(int request) {{ return request; }}"
    has_trim = (
        "  int free(int request) {{ request = TrimRequest(request, kMaxTrimTokens); return request; }}\n"
        "  static int TrimRequest(int r, int n) {{ return r < n ? r : n; }}\n"
        "  static constexpr int kMaxTrimTokens = 8;"
    )
    _, r = pair(tmp_path / "has", change, base_sched=TRIMMED, port_sched=PORT_SCHED.replace(port_free, has_trim))
    got = r["[Core] Move trimming out of the scheduler"]
    assert got["verdict"] == "real-gap", [got["reason"], got["evidence"]]


def test_a_change_that_leaves_the_port_no_work_is_no_work_whatever_it_waits_on_or_whoever_tracks_it(tmp_path):
    """The code is read first: a change whose hunks leave the port's files nothing to do (it removes
    only what the port lacks, and adds code, in a file with no counterpart, that needs what the port
    lacks) is `untouched`, even where it uses a name an earlier unported entry adds (which made it
    `blocked`) or an open matrix row cites its lines (which made it `owned`). Waiting and ownership
    are about work, and this change has none for the port."""
    helper = "\n\ndef trim_budget(request):\n    return compute_budget(request, 4)\n"
    policy = (
        "def trim_request(request, max_trim_tokens):\n"
        "    budget = trim_budget(request)\n"
        "    return shorten_tokens(budget, max_trim_tokens)\n"
    )
    changes = [
        ("[Core] Add a trim budget (#5)", {"vllm/core/sched.py": TRIMMED + helper}),
        (
            "[Core] Move trimming out of the scheduler (#6)",
            {"vllm/core/sched.py": SCHED + helper, "vllm/trim/policy.py": policy},
        ),
    ]
    _, r = pair(tmp_path / "waits", changes, base_sched=TRIMMED)
    assert r["[Core] Add a trim budget (#5)"]["verdict"] == "real-gap", r["[Core] Add a trim budget (#5)"]
    got = r["[Core] Move trimming out of the scheduler (#6)"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert not got["blocked_by"], got
    row = "| `SCHED-TRIM` | trimming | `vllm/core/sched.py:13-15` | `ACTIVE` |\n"
    _, r = pair(
        tmp_path / "tracked",
        [("[Core] Trim nothing (#7)", {"vllm/core/sched.py": SCHED})],
        base_sched=TRIMMED,
        rows=row,
    )
    got = r["[Core] Trim nothing (#7)"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert not got["owner"], got


def test_absent_gates_are_controlled_by_the_name_as_the_port_spells_it_so_check_agrees(tmp_path):
    """An `untouched` change's absent gates take their control from a name the entry changes that
    the port has, here the constant `MAX_TRIM`, which the port spells `max_trim`. The control and
    the line it cites are the port's spelling: `check` right after `audit --write` finds both,
    where `MAX_TRIM` itself has no code hit and no mention on that line."""
    const = "\nMAX_TRIM = 8\n"
    trim = "\n\ndef trim_request(request, max_trim_tokens):\n    return shorten_tokens(request, max_trim_tokens)\n"
    port_sched = PORT_SCHED.replace("int Run(Scheduler& s)", "static const int max_trim = 8;\nint Run(Scheduler& s)")
    port, r = pair(
        tmp_path,
        [("[Core] Drop trimming (#7)", {"vllm/core/sched.py": SCHED + const.replace("= 8", "= (8)")})],
        base_sched=SCHED + const + trim,
        port_sched=port_sched.replace("s.step(4)", "s.step(max_trim)"),
    )
    got = r["[Core] Drop trimming (#7)"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert got["gates"] and {g["control"] for g in got["gates"]} == {"max_trim"}, got["gates"]
    run_cli("audit", "--write", cwd=port, check_rc=0)
    assert run_cli("check", cwd=port).returncode == 0


def test_code_added_without_counterpart_that_needs_only_what_the_port_has_is_work(tmp_path):
    """The scheduler's deletion is the same, but the edit in the file with no counterpart needs only
    what the port has (the port keeps that policy in a file of its own): it may be behaviour the port
    needs, so `untouched` does not take the change."""
    policy = "def trim_policy(request):\n    return request\n"
    change = {
        "vllm/core/sched.py": SCHED,
        "vllm/trim/policy.py": policy.replace("return request", "return compute_budget(request, 2)"),
    }
    port_policy = {"src/trim.cpp": "int TrimPolicy(int request) { return request; }\n"}
    _, r = pair(
        tmp_path,
        [("[Core] Trim by the budget", change)],
        base_sched=TRIMMED,
        base_extra={"vllm/trim/policy.py": policy},
        port_extra=port_policy,
    )
    got = r["[Core] Trim by the budget"]
    assert got["rule"] != "untouched", [got["reason"], got["evidence"]]


def test_a_hunk_in_the_ports_file_that_leaves_work_keeps_the_change_work(tmp_path):
    """A hunk in the port's file that needs something the port lacks beside what it has leaves work
    there, whatever the other hunks are: `untouched` does not take the change."""
    both = TRIMMED.replace(
        "        return compute_budget(tokens, self.budget)\n",
        "        return shorten_tokens(clamp_window(compute_budget(tokens, self.budget), 4096))\n",
    )
    clamp = "  static int ClampWindow(int n, int w) {{ return n < w ? n : w; }}\n  int step(int tokens)"
    port = PORT_SCHED.replace("  int step(int tokens)", clamp)
    _, r = pair(
        tmp_path, [("[Core] Shorten the step", {"vllm/core/sched.py": both})], base_sched=TRIMMED, port_sched=port
    )
    got = r["[Core] Shorten the step"]
    assert (got["verdict"], got["rule"]) == ("real-gap", "real-gap"), [got["reason"], got["evidence"]]


def test_a_deleted_check_is_gated_on_the_attribute_its_string_names(tmp_path):
    """Deleting `hasattr(request, "attach_hook")` from a condition the port never had is no work
    there; the gate watches `attach_hook`, which the string names, not `hasattr`, the language's word
    that no port spells."""
    guarded = SCHED.replace(
        "        return request\n",
        '        if request is not None and hasattr(\n            request, "attach_hook"\n        ):\n'
        "            request.attach_hook(self.budget)\n        return request\n",
    )
    plain = guarded.replace(
        'if request is not None and hasattr(\n            request, "attach_hook"\n        ):', "if request is not None:"
    )
    _, r = pair(tmp_path, [("[Core] Bind the pool always", {"vllm/core/sched.py": plain})], base_sched=guarded)
    got = r["[Core] Bind the pool always"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert [g["probe"] for g in got["gates"]] == ["attach_hook"], got["gates"]


def test_a_method_added_to_a_class_the_port_lacks_needs_that_class(tmp_path):
    """Code added in a file with no counterpart that names only what the port has, but inside a
    class the port's code names nowhere, needs that class: with the port's files left nothing to
    do, the change is `untouched`, gated on the class."""
    policy = "class TrimPolicy:\n    def size(self):\n        return 1\n"
    grown = policy + "\n    def free(self, request):\n        return compute_budget(request, 2)\n"
    change = {"vllm/core/sched.py": SCHED, "vllm/trim/policy.py": grown}
    _, r = pair(
        tmp_path,
        [("[Core] Trim in the policy", change)],
        base_sched=TRIMMED,
        base_extra={"vllm/trim/policy.py": policy},
    )
    got = r["[Core] Trim in the policy"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert "TrimPolicy" in {g["probe"] for g in got["gates"]}, got["gates"]


def test_a_new_method_of_a_port_class_that_serves_only_what_the_port_lacks_is_no_work(tmp_path):
    """A new method of the port's Scheduler whose every line serves a manager the port lacks is no
    work, even when a number it returns happens to be in the port's file: a literal found is not
    the port doing the method's job."""
    usage = (
        "    def free(self, request):\n"
        "        return request\n\n"
        "    def trim_usage(self):\n"
        "        manager = self.trim_manager\n"
        "        if manager.size == 0:\n"
        "            return 4096\n"
        "        return manager.used / manager.size\n"
    )
    added = SCHED.replace("    def free(self, request):\n        return request\n", usage)
    clamp = "  static int ClampWindow(int n) {{ return n < 4096 ? n : 4096; }}\n  int step(int tokens)"
    port = PORT_SCHED.replace("  int step(int tokens)", clamp)
    _, r = pair(tmp_path, [("[Core] Report trim usage", {"vllm/core/sched.py": added})], port_sched=port)
    got = r["[Core] Report trim usage"]
    assert got["verdict"] == "surface-absent", [got["reason"], got["evidence"]]
    assert any("found ['4096']" in e for e in got["evidence"]), got["evidence"]


def test_an_old_side_another_upstream_file_of_the_port_file_still_uses_is_not_the_change_left_undone(tmp_path):
    """The port's sched.cpp ports both sched.py and pool.py. A change moves sched.py from
    drain_pool_blocks to release_pool_blocks; pool.py still uses drain_pool_blocks after it, so the
    port's DrainPoolBlocks is there because of pool.py and says nothing of this change: with
    ReleasePoolBlocks in the port, the change is ported. When pool.py stops using it too, the name
    left in the port is the old side still there, and the change is not ported."""
    pool = "def drain_pool_blocks(n):\n    return n\n\n\ndef release_pool_blocks(n):\n    return drain_pool_blocks(n) + 1\n"
    free = "        return request\n"
    base_sched = SCHED.replace(free, "        return drain_pool_blocks(request)\n")
    moved = SCHED.replace(free, "        return release_pool_blocks(request)\n")
    port = (
        PORT_SCHED.replace(
            "// Ported from: vllm/core/sched.py @ {pin}",
            "// Ported from: vllm/core/sched.py + vllm/core/pool.py @ {pin}",
        )
        .replace(
            "  int free(int request) {{ return request; }}",
            "  int free(int request) {{ return ReleasePoolBlocks(request); }}",
        )
        .replace(
            "class Scheduler {{",
            "int DrainPoolBlocks(int n) {{ return n; }}\nint ReleasePoolBlocks(int n) {{ return DrainPoolBlocks(n) + 1; }}\n\nclass Scheduler {{",
        )
    )
    change = [("[Core] Release on free", {"vllm/core/sched.py": moved})]
    _, r = pair(
        tmp_path / "kept", change, base_sched=base_sched, base_extra={"vllm/core/pool.py": pool}, port_sched=port
    )
    got = r["[Core] Release on free"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    inlined = "def release_pool_blocks(n):\n    return n + 1\n"
    change = [("[Core] Release on free", {"vllm/core/sched.py": moved, "vllm/core/pool.py": inlined})]
    _, r = pair(
        tmp_path / "gone", change, base_sched=base_sched, base_extra={"vllm/core/pool.py": pool}, port_sched=port
    )
    got = r["[Core] Release on free"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]


def test_a_field_only_guarded_code_reads_through_a_string_is_plumbing(tmp_path):
    """A new field of the port's Scheduler that only a block the port can never run reads, through
    `getattr(self, "trim_cache")`, is plumbing for that block: the change is no work here."""
    grown = SCHED.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.trim_cache = None\n"
    ).replace(
        "    def step(self, tokens):\n",
        '    def step(self, tokens):\n        if self.uses_canvas:\n            return getattr(self, "trim_cache", None)\n',
    )
    _, r = pair(tmp_path, [("[Core] Canvas trimming", {"vllm/core/sched.py": grown})])
    got = r["[Core] Canvas trimming"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [got["reason"], got["evidence"]]
    assert any("only for code the port lacks or can never run" in e for e in got["evidence"]), got["evidence"]


def test_an_old_side_is_owed_to_another_upstream_file_only_by_a_port_file_that_holds_it(tmp_path):
    """pool.cpp ports sched.py and pool.py, which still uses drain_pool_blocks after the change, but
    pool.cpp does not hold DrainPoolBlocks: sched.cpp does, and it ports only sched.py. The name left
    there is the old side still there, so the change is not ported."""
    pool = "def drain_pool_blocks(n):\n    return n\n\n\ndef release_pool_blocks(n):\n    return drain_pool_blocks(n) + 1\n"
    free = "        return request\n"
    base_sched = SCHED.replace(free, "        return drain_pool_blocks(request)\n")
    moved = SCHED.replace(free, "        return release_pool_blocks(request)\n")
    port = PORT_SCHED.replace(
        "  int free(int request) {{ return request; }}",
        "  int free(int request) {{ return DrainPoolBlocks(request); }}",
    ).replace("class Scheduler {{", "int DrainPoolBlocks(int n) {{ return n; }}\n\nclass Scheduler {{")
    port_pool = "// Ported from: vllm/core/sched.py + vllm/core/pool.py @ 0000000000\nint ReleasePoolBlocks(int n) { return n + 1; }\n"
    _, r = pair(
        tmp_path,
        [("[Core] Release on free", {"vllm/core/sched.py": moved})],
        base_sched=base_sched,
        base_extra={"vllm/core/pool.py": pool},
        port_sched=port,
        port_extra={"src/core/pool.cpp": port_pool},
    )
    got = r["[Core] Release on free"]
    assert any("vs src/core/pool.cpp, src/core/sched.cpp" in e for e in got["evidence"]), got["evidence"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]


def test_a_class_the_port_took_from_another_upstream_file_grows_no_surface_of_the_ports(tmp_path):
    """Upstream has two classes called `Runner`; the port's cites the other file. A method added to
    this file's `Runner` adds to a class the port lacks; the same method on the port's own is work."""
    v1 = "class Runner:\n    def step(self):\n        return 1\n"
    v2 = "class Runner:\n    def step(self):\n        return 2\n"
    grown = "class Runner:\n    def step(self):\n        return self.flush_drafts()\n\n    def flush_drafts(self):\n        return 1\n"
    port = {
        "src/core/v2/runner.cpp": "// Ported from: vllm/core/v2/runner.py @ {pin}\n"
        "class Runner {{\n public:\n  int step() {{ return 2; }}\n}};\n".format(pin="0" * 10),
        # the port has this file's helpers too, so it is no file without a counterpart
        "src/core/runner.cpp": "// Ported from: vllm/core/runner.py @ {pin}\nint prepare(int n) {{ return n; }}\n".format(
            pin="0" * 10
        ),
    }
    _, r = pair(
        tmp_path,
        [
            ("[Runner] Flush drafts", {"vllm/core/runner.py": grown}),
            ("[Runner v2] Flush drafts", {"vllm/core/v2/runner.py": grown}),
        ],
        base_extra={"vllm/core/runner.py": v1, "vllm/core/v2/runner.py": v2},
        port_extra=port,
    )
    other = r["[Runner] Flush drafts"]
    assert (other["verdict"], other["rule"]) == ("surface-absent", "surface-absent"), [
        other["reason"],
        other["evidence"],
    ]
    assert any(
        "the port's Runner (src/core/v2/runner.cpp) is the counterpart of upstream's other Runner in vllm/core/v2/runner.py"
        in ev
        for ev in other["evidence"]
    ), other["evidence"]
    own = r["[Runner v2] Flush drafts"]
    assert own["verdict"] == "real-gap", [own["reason"], own["evidence"]]


def test_another_class_defining_a_member_of_the_same_name_is_not_compared(tmp_path):
    """The port's `Ledger::free` holds the change's new names, but it is not `Scheduler.free`: a
    member's definitions count only in files that name its class, so the change stays work."""
    ledger = (
        "// Ported from: vllm/core/ledger.py @ 0000000000\n"
        "class Ledger {\n public:\n  int free(int r) { spare_cache.release_all(r); return r; }\n  Cache spare_cache;\n};\n"
    )
    change = edit(
        "    def free(self, request):\n",
        "    def free(self, request):\n        self.spare_cache.release_all(request)\n",
    )
    _, r = pair(tmp_path, [("[Core] Release on free", change)], port_extra={"src/core/ledger.cpp": ledger})
    got = r["[Core] Release on free"]
    assert got["verdict"] == "real-gap", [got["reason"], got["evidence"]]
    hunk = next(e for e in got["evidence"] if e.startswith("hunk vllm/core/sched.py"))
    assert "src/core/ledger.cpp" not in hunk and "missing ['release_all', 'spare_cache']" in hunk, hunk


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


def test_a_helper_only_code_the_port_lacks_calls_is_no_work(tmp_path):
    """The change adds `_drain_widgets` to a class the port has, but only `widget_step`, which the
    port lacks, calls it: the helper serves that code, though its body holds a number the port has."""
    base = SCHED.replace(
        "    def step(self, tokens):\n", "    def widget_step(self):\n        return 0\n\n    def step(self, tokens):\n"
    )
    change = base.replace(
        "    def widget_step(self):\n        return 0\n",
        "    def widget_step(self):\n        return self._drain_widgets()\n",
    )
    change += "\n    def _drain_widgets(self):\n        return self.budget * 4\n"
    _, r = pair(tmp_path, [("[Widgets] Drain", {"vllm/core/sched.py": change})], base_sched=base)
    got = r["[Widgets] Drain"]
    assert got["verdict"] == "surface-absent", [got["reason"], got["evidence"]]
    assert any("touches only lines that serve _drain_widgets" in e for e in got["evidence"]), got["evidence"]


def test_a_comment_in_the_ports_code_that_cites_the_pr_makes_it_ported(tmp_path):
    """The change reads as work by its names, but a comment in the port's code cites its PR: the
    port says it carries it. A line that defers the PR, or a citation in the docs, says no such thing."""
    change = edit("        return request\n", "        return release_pool_blocks(request)\n")
    subject = "[Core] Free releases its blocks (#4242)"
    cite = PORT_SCHED.replace(
        "  int free(int request)", "  // pool release as upstream #4242 does\n  int free(int request)"
    )
    _, r = pair(tmp_path / "a", [(subject, change)], port_sched=cite)
    got = r[subject]
    assert (got["verdict"], got["rule"]) == ("ported", "cited"), [got["reason"], got["evidence"]]
    assert "src/core/sched.cpp:" in got["reason"], got["reason"]
    deferred = PORT_SCHED.replace(
        "  int free(int request)", "  // Deferred: pool release (#4242)\n  int free(int request)"
    )
    _, r = pair(tmp_path / "b", [(subject, change)], port_sched=deferred)
    assert r[subject]["rule"] != "cited", r[subject]["reason"]
    _, r = pair(tmp_path / "c", [(subject, change)], port_extra={"docs/notes.md": "Pool release follows #4242.\n"})
    assert r[subject]["rule"] != "cited", r[subject]["reason"]
    # another project's PR of the same number says nothing of this one
    other = PORT_SCHED.replace("  int free(int request)", "  // works around pytorch#4242\n  int free(int request)")
    _, r = pair(tmp_path / "d", [(subject, change)], port_sched=other)
    assert r[subject]["rule"] != "cited", r[subject]["reason"]


def test_a_top_level_helper_only_code_the_port_lacks_calls_is_no_work(tmp_path):
    """New top-level names of a file the port maps are a new surface only if something the port
    has may read them: here only `pump`, in a file with no port counterpart, calls `drain_widgets`,
    and only `drain_widgets` reads `WIDGET_FACTOR`; a comment that names the helper reads nothing."""
    helper = (
        "\n\nWIDGET_FACTOR = widget_registry.factor()  # read by drain_widgets\n\n\n"
        "def drain_widgets(n):\n    return n * WIDGET_FACTOR\n"
    )
    pump = "from vllm.core.sched import drain_widgets\n\n\ndef pump(n):\n    return drain_widgets(n)\n"
    _, r = pair(
        tmp_path / "a", [("[Widgets] Drain", {"vllm/core/sched.py": SCHED + helper, "vllm/widgets/pump.py": pump})]
    )
    got = r["[Widgets] Drain"]
    assert got["verdict"] == "surface-absent", [got["reason"], got["evidence"]]
    # called from `step`, which the port has, the same helper is work
    used = SCHED.replace(
        "        return compute_budget(", "        drain_widgets(tokens)\n        return compute_budget("
    )
    _, r = pair(
        tmp_path / "b", [("[Widgets] Drain", {"vllm/core/sched.py": used + helper, "vllm/widgets/pump.py": pump})]
    )
    assert r["[Widgets] Drain"]["verdict"] in ("real-gap", "owned", "blocked"), r["[Widgets] Drain"]["reason"]


def test_a_hook_only_code_outside_the_change_calls_serves_that_code(tmp_path):
    """The change adds `pin_numa_node` to a class the port has, and its only caller is a file
    outside the queue's paths with no port counterpart: the hook serves that code, so it is no
    work. Where a function the port has calls it, the same hook is work; so it is when nothing
    in the upstream tree calls it at all."""
    hook = "\n    def pin_numa_node(self):\n        return self.budget % 4\n"
    caller = "from vllm.core.sched import Scheduler\n\n\ndef bind(s: Scheduler):\n    return s.pin_numa_node()\n"
    _, r = pair(tmp_path / "a", [("[NUMA] Pin", {"vllm/core/sched.py": SCHED + hook, "plugins/numa.py": caller})])
    got = r["[NUMA] Pin"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [got["reason"], got["evidence"]]
    assert any("touches only lines that serve pin_numa_node" in e for e in got["evidence"]), got["evidence"]
    # the caller's file has a port counterpart that has `bind`: the hook is the port's business
    ported = {"src/plugins/numa.cpp": "// Ported from: plugins/numa.py\nint bind(int s) { return s; }\n"}
    changes = [("[NUMA] Pin", {"vllm/core/sched.py": SCHED + hook, "plugins/numa.py": caller})]
    _, r = pair(tmp_path / "b", changes, port_extra=ported)
    assert r["[NUMA] Pin"]["verdict"] in ("real-gap", "owned", "blocked"), r["[NUMA] Pin"]["reason"]
    # the commit calls it nowhere: a new member of the port's class may serve anyone, and stays work
    _, r = pair(tmp_path / "c", [("[NUMA] Pin", {"vllm/core/sched.py": SCHED + hook})])
    assert r["[NUMA] Pin"]["verdict"] in ("real-gap", "owned", "blocked"), r["[NUMA] Pin"]["reason"]


def test_a_host_mirror_of_an_array_the_port_has_tells_nothing(tmp_path):
    """Upstream reads `pending_total_cpu`, the host copy of `pending_total`; a port with one buffer
    names it `pending_total`, so the change is ported. A port without the array lacks the mirror too."""
    change = edit(
        "        return request\n",
        "        self.freed_tokens += self.pending_total_cpu[request]\n        self.drain_count += 1\n        return request\n",
    )
    port = PORT_SCHED.replace(
        "  int free(int request) {{ return request; }}",
        "  int free(int request) {{ freed_tokens += pending_total[request]; drain_count += 1; return request; }}\n"
        "  int freed_tokens = 0;\n  int drain_count = 0;\n  int pending_total[8] = {{}};",
    )
    _, r = pair(tmp_path / "a", [("[Core] Count frees", change)], port_sched=port)
    got = r["[Core] Count frees"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    without = port.replace("pending_total", "pending_sum")
    _, r = pair(tmp_path / "b", [("[Core] Count frees", change)], port_sched=without)
    got = r["[Core] Count frees"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]
    assert any("missing ['pending_total_cpu']" in e for e in got["evidence"]), got["evidence"]


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


def test_a_row_of_literals_found_whole_on_one_port_line_is_ported(tmp_path):
    """A table row whose every literal the file used before tells nothing token by token; the
    port holding the row whole, on one line, does."""
    table = 'RETIRED = {\n    "OldNet": "0.2.0",\n}\nSUPPORTED = ["Dots"]\n\n'
    base = SCHED.replace("logger = logging", table + "logger = logging")
    change = {
        "vllm/core/sched.py": base.replace('    "OldNet": "0.2.0",\n', '    "OldNet": "0.2.0",\n    "Dots": "0.2.0",\n')
    }
    whole = PORT_SCHED + 'const char* kRetired[][2] = {{{{"OldNet", "0.2.0"}}, {{"Dots", "0.2.0"}}}};\n'
    _, r = pair(tmp_path / "a", [("[Model] Retire Dots", change)], base_sched=base, port_sched=whole)
    got = r["[Model] Retire Dots"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), got
    assert any("found whole on one line of the port (src/core/sched.cpp:14)" in e for e in got["evidence"]), got
    # the same literals on different lines are no row of the port's
    apart = (
        PORT_SCHED + 'const char* kRetired[][2] = {{{{"OldNet", "0.2.0"}}}};\nconst char* kSupported[] = {{"Dots"}};\n'
    )
    _, r = pair(tmp_path / "b", [("[Model] Retire Dots", change)], base_sched=base, port_sched=apart)
    assert r["[Model] Retire Dots"]["verdict"] != "ported", r["[Model] Retire Dots"]


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
