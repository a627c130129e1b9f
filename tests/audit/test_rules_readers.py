"""Where a change reads what it adds (porttrack/audit/facts.py: `_read_only_where_port_lacks`): a
new name read only where the port has no place for it serves what the port lacks.

Each test builds a real upstream and port pair and audits it with the real CLI
(tests/audit/audit_pair.py).
"""

from __future__ import annotations

from audit_pair import SCHED, PORT_SCHED, pair


PREFETCH_BASE = SCHED.replace(
    "        self.budget = budget\n", "        self.budget = budget\n        self.prefetch_mode = budget < 0\n"
).replace(
    "        return compute_budget(tokens, self.budget)\n",
    "        prefetching = self.prefetch_mode and self.budget > 0\n"
    "        limit = self.budget\n"
    + "".join(f"        limit = max(limit, {k})\n" for k in range(8))  # keeps the two hunks of `step` apart
    + "        return compute_budget(tokens, limit)\n",
)
# the port spells the local the change starts empty, and subtracts it where upstream will
PORT_HELD = PORT_SCHED.replace(
    "  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}",
    "  int step(int tokens) {{ const int held_blocks = 0; return ComputeBudget(tokens, budget_ - held_blocks); }}",
)


def test_state_read_only_under_a_switch_the_port_lacks_serves_what_it_lacks(tmp_path):
    """The change keeps a set of pending loads in the port's Scheduler and holds back blocks for
    them, but only when `prefetching`, which the port's code names nowhere. Each part serves that:
    the new helper (called only under it, from a block whose empty start the port has), the set
    (read only by the helper: adding to it and discarding from it read nothing out of it). No work.
    The same change with the helper called outside the block is work."""
    guarded = (
        "        limit = self.budget\n"
        "        held_blocks = 0\n"
        "        if prefetching:\n"
        "            held_blocks = self._pending_load_blocks()\n"
    )
    helper = "\n    def _pending_load_blocks(self):\n        return sum(len(r) for r in self.pending_loads)\n"
    change = (
        PREFETCH_BASE.replace(
            "        self.prefetch_mode = budget < 0\n",
            "        self.prefetch_mode = budget < 0\n        self.pending_loads = set()\n",
        )
        .replace("        limit = self.budget\n", guarded)
        .replace(
            "        return compute_budget(tokens, limit)\n",
            "        return compute_budget(tokens, limit - held_blocks)\n",
        )
        .replace("        return request\n", "        self.pending_loads.discard(request)\n        return request\n")
        + helper
    )
    unguarded = change.replace(
        "        if prefetching:\n            held_blocks = self._pending_load_blocks()\n",
        "        held_blocks = self._pending_load_blocks()\n",
    )
    # a switch the port records as left out on purpose is a gap it owes, not a surface it lacks
    deferring = PORT_HELD.replace(
        "class Scheduler {{", "// `prefetching`: deferred until the port loads ahead\nclass Scheduler {{"
    )
    r = {}
    for i, (subject, text, port) in enumerate(
        [
            ("[Core] Hold back blocks for pending loads", change, PORT_HELD),
            ("[Core] Always hold back blocks", unguarded, PORT_HELD),
            ("[Core] Hold back blocks for deferred loads", change, deferring),
        ]
    ):
        files = {"vllm/core/sched.py": text}
        r.update(pair(tmp_path / str(i), [(subject, files)], base_sched=PREFETCH_BASE, port_sched=port)[1])
    got = r["[Core] Hold back blocks for pending loads"]
    assert (got["verdict"], got["rule"]) == ("surface-absent", "content-absent"), [got["reason"], got["evidence"]]
    said = " ".join(got["evidence"])
    assert "touches only lines that serve _pending_load_blocks, which" in said, got["evidence"]
    assert "serve pending_loads" in said, got["evidence"]
    for subject in ("[Core] Always hold back blocks", "[Core] Hold back blocks for deferred loads"):
        work = r[subject]
        assert work["verdict"] == "real-gap", [subject, work["reason"], "\n".join(work["evidence"])]


def test_a_reader_outside_the_queues_paths_still_reads_the_new_member(tmp_path):
    """A new member of the port's Scheduler is read in the queue's paths only by a method the port
    lacks, but the same commit also reads it in `engine/loop.py`, outside the queue's paths, in a
    function the port has: the member serves the port's code there, so the change is work."""
    drain = "\n    def drain_remote(self):\n        return self.budget\n"
    base = SCHED + drain
    member = base.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.remote_hits = 0\n"
    )
    member = member.replace("        return self.budget\n", "        return self.budget - self.remote_hits\n")
    loop = "def run_loop(sched):\n    return sched.step(1)\n"
    read = loop.replace("sched.step(1)", "sched.step(1) + sched.remote_hits")
    extra = "[[map]]\nupstream = 'engine/(?P<rest>.+)\\.py'\nport = [\"src/engine/{rest}.cpp\"]\n"
    port_loop = {"src/engine/loop.cpp": "int RunLoop(Scheduler& s) { return s.step(1); }\n"}
    r = {}
    for i, (subject, files) in enumerate(
        [
            ("[Core] Count remote hits for draining", {"vllm/core/sched.py": member}),
            ("[Core] Count remote hits for the loop", {"vllm/core/sched.py": member, "engine/loop.py": read}),
        ]
    ):
        r.update(
            pair(
                tmp_path / str(i),
                [(subject, files)],
                base_sched=base,
                base_extra={"engine/loop.py": loop},
                extra=extra,
                port_extra=port_loop,
            )[1]
        )
    absent = r["[Core] Count remote hits for draining"]
    assert absent["verdict"] == "surface-absent", [absent["reason"], absent["evidence"]]
    work = r["[Core] Count remote hits for the loop"]
    assert work["verdict"] == "real-gap", [work["reason"], work["evidence"]]


def test_a_new_constant_read_from_an_older_function_the_port_names_otherwise_is_work(tmp_path):
    """The change adds a module constant, `BATCH_FLOOR`, to a file the port maps, and reads it only in
    `trim_batch`, a function older than the change that the port's code names nowhere; the rest of
    the change the port has. The port may hold that function under a name of its own (here
    `Shrink`), so the constant is new behaviour on a surface it has: work. (A name read only under a switch the port lacks serves that switch:
    see the first test.)"""
    trim = (
        "    def trim_batch(self, batch):\n        lowest = 1\n        return max(batch, lowest)\n\n"
        "    def step(self, tokens):\n"
    )
    base = SCHED.replace("    def step(self, tokens):\n", trim)
    # the change also caps `step`, which the port has done already
    change = (
        base.replace("        lowest = 1\n", "        lowest = BATCH_FLOOR\n")
        .replace("logger = logging.getLogger(__name__)\n", "logger = logging.getLogger(__name__)\n\nBATCH_FLOOR = 2\n")
        .replace("compute_budget(tokens, self.budget)", "compute_budget(tokens, self.budget, strict_cap=True)")
    )
    port = PORT_SCHED.replace(
        "  int free(int request) {{ return request; }}",
        "  int free(int request) {{ return request; }}\n"
        "  int Shrink(int batch) {{ const int lowest = 1; return batch < lowest ? lowest : batch; }}",
    ).replace("ComputeBudget(tokens, budget_)", "ComputeBudget(tokens, budget_, /*strict_cap=*/true)")
    subject = "[Core] Floor trimmed batches"
    _, r = pair(tmp_path, [(subject, {"vllm/core/sched.py": change})], base_sched=base, port_sched=port)
    assert r[subject]["verdict"] == "real-gap", [r[subject]["reason"], "\n".join(r[subject]["evidence"])]
