"""The positive control every absent probe of audit carries (porttrack/audit/subject.py).

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it (tests/audit/audit_pair.py).
"""

from __future__ import annotations

from conftest import run_cli
from audit_pair import SCHED, PORT_SCHED, pair, edit


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
