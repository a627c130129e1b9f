"""A change its tokens cannot tell (porttrack/audit/facts.py: `_shapes_found`): it swaps an
operator, or reorders names the file had, so the port holds every token either way. The shape of
its changed lines (porttrack/evidence/shapes.py) tells whether the port's counterpart has the
new form and not the old.

Each test builds a real upstream and port pair and audits it with the real CLI
(tests/audit/audit_pair.py).
"""

from __future__ import annotations

from audit_pair import SCHED, PORT_SCHED, pair


WAITING = SCHED.replace(
    "        self.budget = budget\n", "        self.budget = budget\n        self.waiting = []\n"
).replace(
    "        return compute_budget(tokens, self.budget)\n",
    "        if tokens == len(self.waiting):\n            return 0\n        return compute_budget(tokens, self.budget)\n",
)
FIXED = WAITING.replace("if tokens == len(self.waiting):", "if tokens <= len(self.waiting):")


def _port(op: str) -> str:
    return PORT_SCHED.replace(
        "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}",
        "  int step(int tokens) {{\n"
        f"    if (tokens {op} static_cast<int>(waiting_.size())) return 0;\n"
        "    return ComputeBudget(tokens, budget_);\n"
        "  }}",
    ).replace("  int budget_;\n", "  int budget_;\n  std::vector<int> waiting_;\n")


def test_an_operator_the_port_already_swapped_is_ported_and_one_it_did_not_is_work(tmp_path):
    """The change turns `==` into `<=` in a condition whose every name the file had. A port whose
    counterpart spells the condition with `<=` (and a cast and `.size()` for `len`) has it; one
    that still spells `==` does not."""
    subject = "[Bugfix] Skip when the waiting list covers the tokens"
    r = {}
    for op in ("<=", "=="):
        got = pair(
            tmp_path / ("le" if op == "<=" else "eq"),
            [(subject, {"vllm/core/sched.py": FIXED})],
            base_sched=WAITING,
            port_sched=_port(op),
        )[1][subject]
        r[op] = got
    have = r["<="]
    assert (have["verdict"], have["rule"]) == ("ported", "content-ported"), [have["reason"], have["evidence"]]
    said = " ".join(have["evidence"])
    assert (
        "rewrites lines in place, and the port holds each new line's shape and none of the old (src/core/sched.cpp:8)"
        in said
    ), have["evidence"]
    lacks = r["=="]
    assert lacks["verdict"] == "real-gap", [lacks["reason"], lacks["evidence"]]


def test_the_rewritten_line_counts_in_a_port_file_that_defines_the_changed_function(tmp_path):
    """The port defines the changed method in a file of its own, which no header maps to the
    upstream file: the shape is read there too, as the tokens are."""
    subject = "[Bugfix] Skip when the waiting list covers the tokens"
    declared = _port("<=").replace(
        "  int step(int tokens) {{\n"
        "    if (tokens <= static_cast<int>(waiting_.size())) return 0;\n"
        "    return ComputeBudget(tokens, budget_);\n"
        "  }}",
        "  int step(int tokens);",
    )
    elsewhere = {
        "src/core/steps.cpp": "int Scheduler::step(int tokens) {\n"
        "  if (tokens <= static_cast<int>(waiting_.size())) return 0;\n"
        "  return ComputeBudget(tokens, budget_);\n"
        "}\n"
    }
    got = pair(
        tmp_path,
        [(subject, {"vllm/core/sched.py": FIXED})],
        base_sched=WAITING,
        port_sched=declared,
        port_extra=elsewhere,
    )[1][subject]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
    assert "none of the old (src/core/steps.cpp:2)" in " ".join(got["evidence"]), got["evidence"]
