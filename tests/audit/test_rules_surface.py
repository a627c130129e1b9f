"""audit's surface rules (porttrack/audit/rules_content.py): surface-absent and untouched, where
the changed lines serve only what the port lacks.

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it (tests/audit/audit_pair.py).
"""

from __future__ import annotations

import json

from conftest import run_cli_process
from audit_pair import SCHED, PORT_SCHED, pair, edit


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


def test_a_table_row_that_registers_what_the_port_lacks_is_no_work(tmp_path):
    """The change adds a model in a file the port has no counterpart of, and a row naming it in a
    table the port maps: a row of literals registers, by name, something the port does not have.
    Where the port has a model of that name, the same row is its business."""
    table = '_NETS = {\n    "AlphaNetForLM": ("alpha_net", "AlphaNetForLM"),\n}\n\n\ndef net_names():\n    return list(_NETS)\n'
    grown = table.replace("}\n", '    "ZetaNetForLM": ("zeta_net", "ZetaNetForLM"),\n}\n', 1)
    model = "class ZetaNetForLM:\n    def forward(self, tokens):\n        return tokens\n"
    port_table = (
        "// Ported from: vllm/core/nets.py @ 0000000000\n"
        'const char* kNets[] = {"AlphaNetForLM"};\nint NetCount() { return sizeof(kNets) / sizeof(kNets[0]); }\n'
    )
    changes = [("[Model] Zeta", {"vllm/core/nets.py": grown, "vllm/models/zeta_net.py": model})]
    extra = {"src/core/nets.cpp": port_table}
    _, r = pair(tmp_path / "a", changes, base_extra={"vllm/core/nets.py": table}, port_extra=extra)
    got = r["[Model] Zeta"]
    assert got["verdict"] == "surface-absent", [got["rule"], got["reason"], got["evidence"]]
    assert any("touches only lines that serve" in e and "ZetaNetForLM" in e for e in got["evidence"]), got["evidence"]
    extra["src/models/zeta.cpp"] = "class ZetaNetForLM { public: int forward(int t) { return t; } };\n"
    _, r = pair(tmp_path / "b", changes, base_extra={"vllm/core/nets.py": table}, port_extra=extra)
    assert not any("touches only lines that serve" in e for e in r["[Model] Zeta"]["evidence"]), r["[Model] Zeta"]


def test_a_rows_names_are_said_in_the_rows_order_whatever_the_hash_seed(tmp_path):
    """The names a row of literals spells go into the evidence as the row spells them: the same
    bytes from every run, so `audit --write` does not rewrite the queue for nothing."""
    table = '_NETS = {\n    "AlphaNetForLM": ("alpha_net", "AlphaNetForLM"),\n}\n'
    row = '    "ZetaNetForLM": ("zeta_net", "ZetaTokenizerFast", "zeta_processor", "ZetaImageProcessor"),\n'
    model = "class ZetaNetForLM:\n    def forward(self, tokens):\n        return tokens\n"
    port_table = '// Ported from: vllm/core/nets.py @ 0000000000\nconst char* kNets[] = {"AlphaNetForLM"};\n'
    changes = [("[Model] Zeta", {"vllm/core/nets.py": table.replace("}\n", row + "}\n"), "vllm/models/zeta.py": model})]
    port, _ = pair(
        tmp_path, changes, base_extra={"vllm/core/nets.py": table}, port_extra={"src/core/nets.cpp": port_table}
    )
    said = set()
    for seed in ("0", "1", "2"):
        out = json.loads(run_cli_process("audit", "--json", cwd=port, check_rc=0, env={"PYTHONHASHSEED": seed}).stdout)
        evidence = next(r["evidence"] for r in out["results"] if r["part"] is None)
        said |= {e for e in evidence if "touches only lines that serve" in e}
    assert [e.split(" serve ")[1].split(", which")[0] for e in said] == [
        "ZetaNetForLM, zeta_net, ZetaTokenizerFast, zeta_processor, ZetaImageProcessor"
    ]


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


def test_a_local_the_change_binds_is_no_evidence_that_the_port_has_the_lines(tmp_path):
    """`step` is the port's, but the lines the change adds to it serve `canvas_config`, which the
    port lacks: a local they bind from it (`tile_rows`) is the upstream's word, and the port
    spelling the same word for something else proves nothing. The same lines reading the port's
    own `budget` are work."""
    port = PORT_SCHED.replace(
        "class Scheduler", "int TileRows(int tile_rows) {{ return tile_rows * 2; }}\n\nclass Scheduler"
    )
    lines = (
        "    def step(self, tokens):\n"
        "        tile_rows = self.{src}\n"
        "        if tile_rows is not None:\n"
        "            tokens = min(tokens, tile_rows)\n"
    )
    change = [
        ("[Canvas] Cap the step", edit("    def step(self, tokens):\n", lines.format(src="canvas_config.tile_rows")))
    ]
    _, r = pair(tmp_path / "a", change, port_sched=port)
    got = r["[Canvas] Cap the step"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [got["reason"], got["evidence"]]
    assert any("touches only lines that serve canvas_config" in e for e in got["evidence"]), got["evidence"]
    change = [("[Core] Cap the step", edit("    def step(self, tokens):\n", lines.format(src="budget")))]
    _, r = pair(tmp_path / "b", change, port_sched=port)
    assert r["[Core] Cap the step"]["verdict"] in ("real-gap", "owned", "blocked"), r["[Core] Cap the step"]["reason"]


def test_an_empty_start_serves_what_the_local_is_later_set_from(tmp_path):
    """A block moved to another method under a narrower guard, that starts a local empty (`x: T | None = None`) and sets it only under a
    guard the port lacks, serves that guard's feature: no work. Where the local is never set from
    what the port lacks, its start is behaviour of its own."""

    def moved(setter: str) -> tuple[str, str]:
        block = "        spill: list[int] | None = None\n        if {}self.spill_policy is not None:\n" + setter
        before = SCHED.replace("    def step(self, tokens):\n", "    def step(self, tokens):\n" + block.format(""))
        after = SCHED.replace(
            "    def free(self, request):\n", "    def free(self, request):\n" + block.format("request and ")
        )
        return before, after

    serving = moved("            spill = self.spill_policy.plan(self.budget)\n")
    own = moved("            self.spill_policy.plan(self.budget)\n")
    for name, (before, after) in (("serving", serving), ("own", own)):
        _, r = pair(tmp_path / name, [("[Core] Plan spills on free", {"vllm/core/sched.py": after})], base_sched=before)
        got = r["[Core] Plan spills on free"]
        if name == "serving":
            assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [
                got["reason"],
                got["evidence"],
            ]
        else:
            assert got["verdict"] in ("real-gap", "owned", "blocked"), [got["reason"], got["evidence"]]


def test_the_names_a_hunk_reaches_for_are_listed_the_same_in_every_run(tmp_path):
    """A moved line that reads two locals bound from what the port lacks: the evidence lists what
    they come from in one order, whatever the interpreter's hash seed (the locals are a set)."""
    base = SCHED.replace(
        "    def step(self, tokens):\n",
        "    def step(self, tokens):\n        gate_b = self.widget_beta\n        gate_a = self.widget_alpha\n"
        "        self.audit_trail.note(gate_b, gate_a)\n",
    )
    moved = base.replace("        self.audit_trail.note(gate_b, gate_a)\n", "").replace(
        "        return compute_budget(tokens, self.budget)\n",
        "        return compute_budget(tokens, self.budget)\n        self.audit_trail.note(gate_b, gate_a)\n",
    )
    port, _ = pair(tmp_path, [("[Metrics] Note last", {"vllm/core/sched.py": moved})], base_sched=base)
    runs = set()
    for seed in ("1", "2", "3", "4"):
        out = json.loads(run_cli_process("audit", "--json", cwd=port, check_rc=0, env={"PYTHONHASHSEED": seed}).stdout)
        (got,) = [r for r in out["results"] if r["part"] is None]
        runs.add(tuple(ev for ev in got["evidence"] if "names nowhere" in ev))
    assert len(runs) == 1, runs
    (lines,) = runs
    assert lines and all("widget_alpha, widget_beta" in ev for ev in lines), lines


def test_a_part_the_port_made_does_not_outweigh_a_part_that_waits_on_a_surface_it_lacks(tmp_path):
    """A change that frees a request's blocks in the scheduler, which the port already does, and adds
    a trimming policy in a file the port has no counterpart of, on names the port lacks: the part the
    port made leaves nothing, and the rest waits on a surface the port lacks, so `untouched` says
    surface-absent (a reader takes the part that needs the most). Where the change is the
    scheduler's part alone, it is ported."""
    freed = edit("        return request\n", "        return release_pool_blocks(request)\n")
    policy = (
        "def trim_request(request, max_trim_tokens):\n"
        "    budget = compute_budget(request, 2)\n"
        "    return shorten_tokens(budget, max_trim_tokens)\n"
    )
    port = PORT_SCHED.replace("{{ return request; }}", "{{ return ReleasePoolBlocks(request); }}")
    subject = "[Core] Free blocks, and trim requests"
    change = [(subject, {**freed, "vllm/trim/policy.py": policy})]
    _, r = pair(tmp_path / "made", change, port_sched=port)
    got = r[subject]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "untouched"), [got["reason"], got["evidence"]]
    assert "made in the port" in got["reason"], got["reason"]
    assert got["gates"] and {g["probe"] for g in got["gates"]} <= {"trim_request", "max_trim_tokens", "shorten_tokens"}
    _, r = pair(tmp_path / "alone", [(subject, freed)], port_sched=port)
    assert (r[subject]["verdict"], r[subject]["rule"]) == ("ported", "content-ported"), r[subject]
