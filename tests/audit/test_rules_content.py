"""audit's content rules (porttrack/audit/rules_content.py): telling tokens, ported and real-gap,
names as the port spells them, twins and pins.

Each test builds a real upstream git repository with a base and the commits under test, a port
that maps it, builds the queue with the real CLI and audits it (tests/audit/audit_pair.py).
"""

from __future__ import annotations

import json

from conftest import git, run_cli
from audit_pair import SCHED, PORT_SCHED, pair, edit


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


def test_an_old_side_gone_alone_is_not_ported(tmp_path):
    # the port never had what the change deletes: that is no evidence it ported the deletion
    trimmed = SCHED.replace(
        "        return request\n", "        request = trim_request(request, max_trim_tokens)\n        return request\n"
    )
    _, r = pair(tmp_path, [("[Core] Stop trimming", {"vllm/core/sched.py": SCHED})], base_sched=trimmed)
    got = r["[Core] Stop trimming"]
    assert got["verdict"] != "ported", got
    assert any("gone ['max_trim_tokens', 'trim_request']" in e for e in got["evidence"]), got["evidence"]


def test_numbers_alone_found_in_the_port_are_no_evidence_it_ported_the_hunk(tmp_path):
    """A 7 and an 8 stand somewhere in any port: a hunk whose only telling tokens are numbers the
    port has is not ported by them. With a name of the change beside them, it is."""
    base = SCHED + "\n    def align(self, offset):\n        return offset + 1\n"
    rounded = base.replace("        return offset + 1\n", "        return (offset + 7) // 8 * 8\n")
    sevens = PORT_SCHED.replace("return s.step(4) + s.free(1);", "return s.step(8) + s.free(7);")
    _, r = pair(tmp_path / "n", [("[Core] Round offsets", {"vllm/core/sched.py": rounded})],
                base_sched=base, port_sched=sevens)  # fmt: skip
    got = r["[Core] Round offsets"]
    assert got["verdict"] != "ported", [got["reason"], got["evidence"]]
    assert any("new side found ['7', '8']" in e and ": neutral;" in e for e in got["evidence"]), got["evidence"]
    named = rounded.replace("(offset + 7) // 8 * 8", "(offset + 7) // 8 * 8 + self.budget_floor")
    floored = sevens.replace("  int budget_;", "  int budget_;\n  int budget_floor_ = 0;")
    _, r = pair(tmp_path / "f", [("[Core] Round offsets", {"vllm/core/sched.py": named})],
                base_sched=base, port_sched=floored)  # fmt: skip
    got = r["[Core] Round offsets"]
    assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]


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


def test_a_member_of_a_class_the_port_took_from_another_upstream_file_is_absent(tmp_path):
    """The port's `Runner` cites the other upstream file, whose `Runner` has no `drain`; the port's
    `drain` is its own. A change to this file's `Runner.drain` changes code the port lacks, where the
    same port citing this file has it (and reads it)."""
    v1 = "class Runner:\n    def drain(self):\n        return 1\n"
    v2 = "class Runner:\n    def step(self):\n        return 2\n"
    changed = v1.replace("return 1", "return 7")
    runner = (
        "// Ported from: {src} @ {pin}\n"
        "class Runner {{\n public:\n  int step() {{ return 2; }}\n  int drain() {{ return 1; }}\n}};\n"
        "int Tick(Runner& r) {{ return r.drain(); }}\n"
    )
    helpers = "// Ported from: vllm/core/runner.py @ {pin}\nint prepare(int n) {{ return n; }}\n".format(pin="0" * 10)
    for case, src, want in (
        ("v2", "vllm/core/v2/runner.py", "surface-absent"),
        ("v1", "vllm/core/runner.py", "real-gap"),
    ):
        _, r = pair(
            tmp_path / case,
            [("[Runner] Drain drafts", {"vllm/core/runner.py": changed})],
            base_extra={"vllm/core/runner.py": v1, "vllm/core/v2/runner.py": v2},
            port_extra={
                "src/core/v2/runner.cpp": runner.format(src=src, pin="0" * 10),
                "src/core/runner.cpp": helpers,
            },
        )
        got = r["[Runner] Drain drafts"]
        assert got["verdict"] == want, [case, got["reason"], got["evidence"]]
        said = any(
            "Runner.drain: the port's Runner is the counterpart of upstream's other Runner" in ev
            for ev in got["evidence"]
        )
        assert said == (case == "v2"), got["evidence"]


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


CLI = """\
def parse_budget(argv):
    return len(argv)


def run(budget):
    return budget


def main(argv):
    budget = parse_budget(argv)
    return run(budget)
"""

PORT_CLI = """\
int parse_budget(int argc) { return argc; }
int run(int budget) { return budget; }
int main(int argc, char** argv) { return run(parse_budget(argc)); }
"""


def test_a_program_entry_point_that_no_code_reads_is_not_inert(tmp_path):
    """The runtime calls `main`; no code reads it, and production reaches it all the same. A
    function of the same shape under another name, read by nothing, stays inert."""
    change = (
        "[CLI] Never run with no budget (#5)",
        "budget = parse_budget(argv)",
        "budget = max(parse_budget(argv), 1)",
    )
    for name, want in (("main", "real-gap"), ("kickoff", "inert")):
        _, r = pair(
            tmp_path / name,
            [(change[0], {"vllm/core/cli.py": CLI.replace("main", name).replace(change[1], change[2])})],
            base_extra={"vllm/core/cli.py": CLI.replace("main", name)},
            port_extra={"src/core/cli.cpp": PORT_CLI.replace("main", name)},
        )
        got = r[change[0]]
        assert got["verdict"] == want, (name, got["reason"], got["evidence"])


def test_a_local_the_port_names_its_own_way_tells_nothing_missing(tmp_path):
    """The change adds a helper and reads it into a new local. The port has the helper and reads it
    into a local of its own name: the local's name is the upstream author's choice, so the port
    lacking it says nothing and the change is ported. A name the file also passes as a keyword
    (`usable_budget=usable_budget`) is an interface's, not a local's: the port lacking it still counts."""
    step = "        return compute_budget(tokens, self.budget)\n"
    helper = "\n    def _free_budget(self):\n        return self.budget - self.held_blocks\n"
    port_step = "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}"
    port_cpp = (
        "  int step(int tokens) {{\n    const int avail = FreeBudget();\n    return ComputeBudget(tokens, avail);\n  }}\n"
        "  int FreeBudget() const {{ return budget_ - held_blocks_; }}"
    )
    cases = [
        (
            "        usable_budget = self._free_budget()\n        return compute_budget(tokens, usable_budget)\n",
            "ported",
        ),
        (
            "        usable_budget = self._free_budget()\n"
            "        return compute_budget(tokens, usable_budget=usable_budget)\n",
            "work",
        ),
    ]
    for i, (new, want) in enumerate(cases):
        text = SCHED.replace(step, new).replace("        return request\n", "        return request\n" + helper)
        _, r = pair(
            tmp_path / str(i),
            [("[Core] Step within the free budget", {"vllm/core/sched.py": text})],
            port_sched=PORT_SCHED.replace(port_step, port_cpp),
        )
        got = r["[Core] Step within the free budget"]
        if want == "ported":
            assert (got["verdict"], got["rule"]) == ("ported", "content-ported"), [got["reason"], got["evidence"]]
        else:
            assert got["verdict"] in ("real-gap", "owned", "blocked"), [got["reason"], got["evidence"]]
