"""The shape of a code line (porttrack/evidence/shapes.py): one spelling for a Python upstream and
a C-family port, in which an operator change shows."""

from __future__ import annotations

from porttrack.evidence import shapes
from porttrack.evidence.shapes import shape


def test_python_and_cpp_spellings_of_one_condition_share_a_shape():
    pairs = [
        ("if num_required < len(self.blocks):", "if (num_required < static_cast<int>(blocks_.size())) {"),
        ("if self.limit is not None and not done:", "if (limit_ != std::nullopt && !done) {"),
        ("elif seen.get(key) >= 3:", "} else if (seen->get(key) >= 3) {"),
        ("total = (int)count * 2", "total = count * 2;"),
        ("label = 'ready' if ok else None", 'label = "ready" if ok else nullptr;'),
    ]
    for py, cpp in pairs:
        assert shapes.holds(shape(cpp), shape(py)), (shape(py), shape(cpp))


def test_an_operator_or_an_order_changes_the_shape():
    assert shape("if num_required == len(blocks):") != shape("if num_required <= len(blocks):")
    assert shape("left = total - used") != shape("left = used - total")
    assert shape("if ready and not waiting:") != shape("if ready or not waiting:")
    assert shape("if x is None:") != shape("if x is not None:")


def test_only_lines_rewritten_in_place_with_the_same_names_count():
    old = ["if num_required == len(blocks):", "    return x", "count = 0"]
    new = ["if num_required <= len(blocks):", "    return x", "count = 1"]
    # `count = 1` is too short to tell: short lines recur by chance
    assert shapes.rewritten(old, new) == (
        [("if", "numrequired", "<=", "blocks")],
        [("if", "numrequired", "==", "blocks")],
    )
    # a line that gains a name, or one only added, is no rewrite: its shape may be another line's
    assert shapes.rewritten(old, ["if num_required <= len(blocks) + spare:"]) is None
    assert shapes.rewritten([], new) is None


def test_found_needs_every_new_shape_and_no_old_one():
    pair = shapes.rewritten(["if a_count == b_count:"], ["if a_count <= b_count:"])
    assert pair is not None
    files = {
        "new.cpp": shapes.of_text("int x = 1;\nif (a_count <= b_count && ready) {\n"),
        "both.cpp": shapes.of_text("if (a_count <= b_count) {}\nif (a_count == b_count) {}\n"),
        "swapped.cpp": shapes.of_text("if (b_count <= a_count) {}\n"),
    }
    assert shapes.found(pair, ["new.cpp"], files.__getitem__) == [(pair[0][0], ("new.cpp", 2))]
    assert shapes.found(pair, ["both.cpp"], files.__getitem__) == []
    assert shapes.found(pair, ["swapped.cpp"], files.__getitem__) == []
