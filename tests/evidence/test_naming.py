"""How an upstream name may be spelled in the port (porttrack/evidence/naming.py)."""

from __future__ import annotations

import pytest

from porttrack.evidence import naming


@pytest.mark.parametrize(
    ("symbol", "want"),
    [
        ("apply_top_k_top_p", ["apply_top_k_top_p", "ApplyTopKTopP", "applyTopKTopP", "kApplyTopKTopP"]),
        (
            "Sampler.max_num_seqs",
            ["Sampler.max_num_seqs", "Sampler.MaxNumSeqs", "Sampler.maxNumSeqs", "Sampler.kMaxNumSeqs"],
        ),
        ("BLOCK_SIZE", ["BLOCK_SIZE", "block_size", "BlockSize", "blockSize", "kBlockSize"]),
        # a one-word constant in lower case is a common word, not the constant
        ("EMPTY", ["EMPTY", "Empty", "kEmpty"]),
        ("_DTYPE", ["_DTYPE", "Dtype", "kDtype"]),
        ("Request.__init__", ["Request.__init__"]),
    ],
)
def test_spellings(symbol, want):
    assert naming.spellings(symbol) == want


@pytest.mark.parametrize(
    ("symbol", "want"),
    [("main", True), ("cli.main", True), ("Server::main", True), ("main_loop", False), ("domain", False)],
)
def test_a_program_entry_point_is_main_however_qualified(symbol, want):
    assert naming.is_entry_point(symbol) is want
