"""Acceptance-pass checks of the reports."""

from __future__ import annotations

import pytest

from porttrack.model import Queue, QueueMeta
from porttrack.report import upstream_name


@pytest.mark.parametrize("upstream, name", [
    ("vllm-project/vllm", "vllm"),
    ("vllm", "vllm"),
    ("vllm.git", "vllm"),  # queue build names an upstream by its folder when config gives no name: a bare clone
    ("/srv/mirrors/vllm.git/", "vllm"),
    ("", "upstream"),
    (".git", "upstream"),
])
def test_upstream_name_drops_a_bare_clones_git_suffix(upstream, name):
    assert upstream_name(Queue(QueueMeta(name="q", upstream=upstream))) == name
