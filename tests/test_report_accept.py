"""Acceptance-pass checks of the reports."""

from __future__ import annotations

import pytest

from porttrack.model import Queue, QueueMeta
from porttrack.outputs.report import upstream_name


@pytest.mark.parametrize(
    "upstream, name",
    [
        ("vllm-project/vllm", "vllm"),
        ("vllm", "vllm"),
        ("vllm.git", "vllm"),  # queue build names an upstream by its folder when config gives no name: a bare clone
        ("/srv/mirrors/vllm.git/", "vllm"),
        ("", "upstream"),
        (".git", "upstream"),
    ],
)
def test_upstream_name_drops_a_bare_clones_git_suffix(upstream, name):
    assert upstream_name(Queue(QueueMeta(name="q", upstream=upstream))) == name


def test_reproduce_command_quotes_paths_with_spaces():
    from porttrack.outputs.report import command_line

    assert (
        command_line("sync", "1-3", "queue/demo.toml", "out/s.md")
        == "porttrack report sync --entries 1-3 --queue queue/demo.toml --out out/s.md"
    )
    assert (
        command_line("deferral", None, "queue/my queue.toml", "/tmp/My Reports/d.md")
        == "porttrack report deferral --queue 'queue/my queue.toml' --out '/tmp/My Reports/d.md'"
    )


def test_an_entry_without_a_sha_prints_no_empty_code_span():
    from porttrack.model import Entry
    from porttrack.outputs.report import _upstream_cell, entry_line

    e = Entry(n=1, sha="", subject="Drain recorded block ids (#52310)", pr=52310)
    assert (
        entry_line(e, "nothing reads them", "vllm")
        == "- vllm#52310 `Drain recorded block ids (#52310)` — nothing reads them."
    )
    assert _upstream_cell(e, "vllm") == "vllm#52310 Drain recorded block ids (#52310)"
    assert entry_line(Entry(n=2, sha="", subject="x", pr=None), "y", "vllm") == "- vllm `x` — y."
