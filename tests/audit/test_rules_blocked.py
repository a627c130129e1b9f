"""audit's blocked and owned rules (porttrack/audit/rules_blocked.py): an earlier entry adds what
this one uses; a matrix row tracks it.

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it (tests/audit/audit_pair.py).
"""

from __future__ import annotations

import json

from conftest import run_cli
from audit_pair import FIRST_TEST, PORT_SCHED, SCHED, beside_tests, pair, edit, steps

from porttrack.queue import file as queuefile


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


def test_blocked_on_an_entry_the_port_left_out_on_purpose_is_surface_absent(tmp_path):
    """The port records the member an earlier entry adds as DEFERRED: a later entry that uses it has
    no surface to land on until that choice is undone. Without the record it is blocked work."""
    adds = (
        "[Spec] Budget for drafts",
        "    def free(self, request):\n",
        "    def spec_budget(self):\n        return 0\n\n    def free(self, request):\n",
    )
    uses = (
        "[Core] Spend the draft budget",
        "        return request\n",
        "        return request + self.spec_budget()\n",
    )
    record = PORT_SCHED.replace(
        "class Scheduler {{", "// DEFERRED: spec_budget (speculative decoding)\nclass Scheduler {{"
    )
    _, r = pair(tmp_path / "record", steps(adds, uses), port_sched=record)
    made = r["[Spec] Budget for drafts"]
    assert (made["verdict"], made["rule"]) == ("real-gap", "deferred"), made
    use = r["[Core] Spend the draft budget"]
    assert (use["verdict"], use["rule"]) == ("surface-absent", "absent-blockers"), use
    assert use["reason"] == "waits only on entries the port records as left out 1"
    assert [(g["kind"], g.get("probe") or g.get("entry")) for g in use["gates"]] == [
        ("absent", "spec_budget"),  # what it uses of the left-out entry, as any absent surface is gated
        ("entry-ported", 1),  # live once the port takes that entry after all
    ]
    assert use["gates"][0]["control"], use["gates"][0]  # a zero with its positive control
    _, r = pair(tmp_path / "none", steps(adds, uses))
    use = r["[Core] Spend the draft budget"]
    assert (use["verdict"], use["rule"]) == ("blocked", "blocked"), use


def test_an_earlier_stage_that_needs_nothing_blocks_nothing(tmp_path):
    """A series stage a port needs nothing of (here a comment) is settled as no-op: the next stage
    has no work to wait for."""
    _, r = pair(
        tmp_path,
        steps(
            (
                "[1/2][Floor] Say why",
                "    def free(self, request):\n",
                "    def free(self, request):\n        # a floor\n",
            ),
            ("[2/2][Floor] A floor", "        return request\n", "        return max(request, 2)\n"),
        ),
    )
    assert r["[1/2][Floor] Say why"]["verdict"] == "no-op"
    second = r["[2/2][Floor] A floor"]
    assert second["verdict"] != "blocked" and not second.get("blocked_by"), second


def test_a_stage_queued_before_the_stage_it_waits_on_reads_that_stages_verdict(tmp_path):
    """The upstream merged stage 2 of a series before stage 1. Stage 1 adds a file the port has no
    counterpart of (surface-absent), so stage 2 waits only on an absent surface: audit judges
    stage 1 first, whatever the queue's order, and a second run says the same."""
    port, r = pair(
        tmp_path,
        [
            ("[2/2][Pager] Free through the pager", edit("        return request\n", "        return request + 1\n")),
            ("[1/2][Pager] A pager", {"vllm/core/pager.py": "class Pager:\n    def evict(self):\n        return 0\n"}),
        ],
    )
    assert r["[1/2][Pager] A pager"]["verdict"] == "surface-absent"
    second = r["[2/2][Pager] Free through the pager"]
    assert (second["verdict"], second["rule"]) == ("surface-absent", "absent-blockers"), second
    again = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)["results"]
    assert [x["verdict"] for x in again] == [r[s]["verdict"] for s in r], again


def test_entries_are_judged_after_those_they_wait_on():
    from porttrack.audit.graph import waited_on_first

    assert waited_on_first({}, [1, 2, 3]) == [1, 2, 3]
    assert waited_on_first({1: [3]}, [1, 2, 3]) == [2, 3, 1]  # 1 waits on the later 3
    assert waited_on_first({1: [3], 3: [1]}, [1, 2, 3]) == [2, 1, 3]  # a cycle: its earliest first
    assert waited_on_first({2: [9]}, [1, 2]) == [1, 2]  # an entry not judged here waits on nothing


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


def test_a_test_or_test_helper_an_earlier_entry_added_blocks_nothing(tmp_path):
    """The upstream's tests (`[audit] non_code`) are no surface of the port: a change that edits a test
    and calls a test helper an earlier entry added waits on nobody, and its evidence says why."""
    safe = SCHED.replace(
        "        return request\n", "        if request is None:\n            return 0\n        return request\n"
    )
    tests = FIRST_TEST.replace("    assert make_sched()\n", "    assert make_sched() == 1\n")
    got = beside_tests(
        tmp_path,
        "[Core] Free a missing request safely",
        safe,
        tests + "\n\ndef test_free_none():\n    assert make_sched() is not None\n",
    )
    assert got["verdict"] != "blocked" and not got.get("blocked_by"), [got["reason"], got["evidence"]]
    assert any("only the upstream's tests define" in x and "test_free" in x for x in got["evidence"]), got["evidence"]
    # the code half is still judged: the port has `free` and lacks the guard
    assert got["verdict"] == "real-gap", got


def test_a_hostile_subject_of_brackets_is_read_once_for_its_series():
    # A series name runs to the next bracket: from every `[` of an unclosed run, the old pattern
    # read to the end of the subject again (minutes for this one; no time is asserted).
    from porttrack.audit.graph import series_of

    assert series_of("[" * 60_000 + "a") is None
    assert series_of("[a" * 30_000 + "] [2/N] fix") == ("a", 2, "N")
    assert series_of("[3/5][KV Layout] move") == ("KV Layout", 3, "5")
