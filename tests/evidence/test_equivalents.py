"""equivalents: call sites a change points at code that does the same, on a real commit's diff."""

from __future__ import annotations

from pathlib import Path

from conftest import one_change

from porttrack import gitio
from porttrack.evidence import equivalents, refactor
from porttrack.evidence.hunks import code_line_indices

LAYER = """\
class Layer:
    def forward(self, x, scale):
        return x * scale

    @staticmethod
    def mapping(model, gate, up):
        return [(model, gate), (model, up)]


class SharedLayer(Layer):
    \"\"\"A layer that also runs shared experts.\"\"\"

    def forward(self, x, scale):
        return super().forward(x, scale)
"""

MODEL = """\
from layers import Layer, SharedLayer


class Model:
    def __init__(self):
        self.experts = SharedLayer()

    def load(self, model):
        return Layer.mapping(model, "gate", "up")
"""


def explained(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> tuple[dict, list[gitio.Hunk]]:
    """What the finder explains in model.py's hunks of a real commit."""
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, ["model.py"]) or []
    return equivalents.explain(hunks, refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))), hunks


def code_lines(hunks: list[gitio.Hunk]) -> int:
    return sum(len(code_line_indices(h.old)) + len(code_line_indices(h.new)) for h in hunks)


def test_a_removed_subclass_that_adds_nothing_is_its_base(tmp_path):
    model = MODEL.replace("SharedLayer()", "Layer()").replace(", SharedLayer", "")
    after = {"layers.py": LAYER.split("\n\n\nclass SharedLayer")[0] + "\n", "model.py": model}
    found, hunks = explained(tmp_path, {"layers.py": LAYER, "model.py": MODEL}, after)
    assert set(found.values()) == {equivalents.EQUIVALENT}
    assert len(found) == 2 == code_lines(hunks) - 2  # the call site, old and new; the import line is not its to explain


def test_a_subclass_that_changes_its_base_or_stays_is_no_equivalent(tmp_path):
    busy = LAYER.replace("return super().forward(x, scale)", "return super().forward(x, scale) + 1")
    after = {
        "layers.py": busy.split("\n\n\nclass SharedLayer")[0] + "\n",
        "model.py": MODEL.replace("SharedLayer()", "Layer()"),
    }
    found, _ = explained(tmp_path / "busy", {"layers.py": busy, "model.py": MODEL}, after)
    assert found == {}
    # the subclass stays: both still exist, and code elsewhere may tell them apart
    found, _ = explained(
        tmp_path / "kept",
        {"layers.py": LAYER, "model.py": MODEL},
        {"model.py": MODEL.replace("SharedLayer()", "Layer()")},
    )
    assert found == {}


CALLED = MODEL.replace("Layer.mapping(", "layer_mapping(").replace("SharedLayer\n", "SharedLayer, layer_mapping\n")
FORWARDER = """

def layer_mapping(model, gate, up):
    return Layer.mapping(model, gate, up)
"""


def test_a_new_function_that_only_forwards_stands_for_its_target(tmp_path):
    after = {"layers.py": LAYER + FORWARDER, "model.py": CALLED}
    found, hunks = explained(tmp_path, {"layers.py": LAYER, "model.py": MODEL}, after)
    assert len(found) == 2 == code_lines(hunks) - 2  # the call site; the import line is the import construct's
    # a forwarder that reorders its parameters, or adds to the call, runs other code
    for body in ("Layer.mapping(model, up, gate)", "Layer.mapping(model, gate, up, 1)"):
        other = FORWARDER.replace("Layer.mapping(model, gate, up)", body)
        after = {"layers.py": LAYER + other, "model.py": CALLED}
        found, _ = explained(tmp_path / body[-4:-1].strip(), {"layers.py": LAYER, "model.py": MODEL}, after)
        assert found == {}, body


def test_a_line_that_changes_more_than_the_name_is_not_explained(tmp_path):
    after = {
        "layers.py": LAYER + FORWARDER,
        "model.py": CALLED.replace('layer_mapping(model, "gate", "up")', 'layer_mapping(model, "gate", "down")'),
    }
    found, _ = explained(tmp_path, {"layers.py": LAYER, "model.py": MODEL}, after)
    assert found == {}


def test_a_call_the_file_still_makes_the_old_way_may_differ(tmp_path):
    model = CALLED + "\n\nOTHER = Layer.mapping(1, 2, 3)\n"
    found, _ = explained(
        tmp_path, {"layers.py": LAYER, "model.py": MODEL}, {"layers.py": LAYER + FORWARDER, "model.py": model}
    )
    assert found == {}


def test_a_name_is_found_through_a_package_that_re_exports_it(tmp_path):
    before = {
        "pkg/__init__.py": "from .layers import Layer, SharedLayer\n",
        "pkg/layers.py": LAYER,
        "model.py": MODEL.replace("from layers import", "from pkg import"),
    }
    after = {
        "pkg/__init__.py": "from .layers import Layer\n",
        "pkg/layers.py": LAYER.split("\n\n\nclass SharedLayer")[0] + "\n",
        "model.py": before["model.py"].replace("SharedLayer()", "Layer()").replace(", SharedLayer", ""),
    }
    found, hunks = explained(tmp_path, before, after)
    assert len(found) == 2 and all(k == 1 for k, _, _ in found), (found, hunks)  # the call site, not the import


def test_a_relative_import_above_the_root_or_a_file_that_does_not_parse_explains_nothing(tmp_path):
    model = "from .... import SharedLayer\n\nX = SharedLayer()\n"
    after = {"model.py": model.replace("SharedLayer", "Layer"), "layers.py": "def broken(:\n"}
    found, hunks = explained(tmp_path, {"model.py": model, "layers.py": LAYER}, after)
    assert hunks and found == {}


KERNEL = """\
import torch


def isa_hint(dtype):
    supported = torch._C._cpu._is_wide_tile_supported()
    return "amx" if supported else "avx"
"""


def test_a_library_function_reached_by_its_new_path_is_the_same_call(tmp_path):
    moved = KERNEL.replace("torch._C._cpu._is_wide", "torch.cpu._is_wide")
    found, hunks = explained(tmp_path, {"model.py": KERNEL}, {"model.py": moved})
    assert set(found.values()) == {equivalents.EQUIVALENT} and len(found) == code_lines(hunks) == 2
    # another function of the library is another call
    other = KERNEL.replace("torch._C._cpu._is_wide_tile_supported", "torch.cpu._is_avx512_supported")
    found, _ = explained(tmp_path / "other", {"model.py": KERNEL}, {"model.py": other})
    assert found == {}
    # a module of the tree itself may do anything under its new path
    own = KERNEL.replace("import torch", "import vllm").replace("torch.", "vllm.")
    tree = {"vllm/__init__.py": "", "model.py": own}
    found, _ = explained(tmp_path / "own", tree, {**tree, "model.py": own.replace("vllm._C._cpu.", "vllm.cpu.")})
    assert found == {}


def test_a_public_path_swapped_for_another_is_no_same_call(tmp_path):
    public = KERNEL.replace("torch._C._cpu._is_wide", "torch.cuda._is_wide")
    found, _ = explained(tmp_path, {"model.py": public}, {"model.py": public.replace("torch.cuda.", "torch.xpu.")})
    assert found == {}


DTYPES = """\
def is_fp8(dtype):
    return dtype.startswith("fp8")


def eights(dtype):
    return dtype.count("8")
"""

CACHE = """\
from dtypes import eights


class Cache:
    def __init__(self, dtype, other):
        self.dtype = dtype
        self.scaled = self.dtype.startswith("fp8") and other
        self.eight_count = eights(self.dtype)
"""


def inlined(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> tuple[dict, list[gitio.Hunk]]:
    """What explain_inlined finds among the code lines of model.py's hunks of a real commit, its
    imports aside (the no-op rule's import finder explains those before)."""
    repo, sha, show = one_change(tmp_path, before, after)
    hunks = gitio.diff_hunks(repo, sha, ["model.py"]) or []
    texts = refactor.Texts(lambda p: show(f"{sha}^", p), lambda p: show(sha, p))
    every = [
        (k, side, i)
        for k, h in enumerate(hunks)
        for side in ("old", "new")
        for i in code_line_indices(getattr(h, side))
        if not getattr(h, side)[i].startswith("from ")
    ]
    return equivalents.explain_inlined(hunks, texts, every), hunks


def test_an_expression_written_as_the_call_of_a_function_that_returns_it_is_the_same_code(tmp_path):
    called = CACHE.replace("from dtypes import eights", "from dtypes import eights, is_fp8").replace(
        'self.dtype.startswith("fp8") and other', "is_fp8(self.dtype) and other"
    )
    found, hunks = inlined(
        tmp_path, {"dtypes.py": DTYPES, "model.py": CACHE}, {"dtypes.py": DTYPES, "model.py": called}
    )
    assert set(found.values()) == {equivalents.INLINED}
    assert len(found) == code_lines(hunks) - 2 == 2  # the import lines are not its to explain


def test_a_call_spelled_out_as_what_it_returned_is_the_same_code(tmp_path):
    spelled = CACHE.replace("from dtypes import eights\n", "").replace("eights(self.dtype)", 'self.dtype.count("8")')
    found, hunks = inlined(
        tmp_path, {"dtypes.py": DTYPES, "model.py": CACHE}, {"dtypes.py": DTYPES, "model.py": spelled}
    )
    assert set(found.values()) == {equivalents.INLINED}
    assert len(found) == code_lines(hunks) - 1 == 2


def test_a_call_of_a_function_that_returns_something_else_is_behaviour(tmp_path):
    imported = CACHE.replace("from dtypes import eights", "from dtypes import eights, is_fp8")
    spelled, called = 'self.dtype.startswith("fp8") and other', "is_fp8(self.dtype) and other"
    two = DTYPES.replace("    return dtype.startswith", "    dtype = dtype.lower()\n    return dtype.startswith")
    # an operator in the argument binds otherwise once put in: `self.dtype or other.startswith(...)`
    wide = 'self.dtype or other.startswith("fp8") and other'
    for name, dtypes, before, after in (
        ("other body", DTYPES.replace('"fp8"', '"fp16"'), CACHE, imported.replace(spelled, called)),
        ("two statements", two, CACHE, imported.replace(spelled, called)),
        ("keyword argument", DTYPES, CACHE, imported.replace(spelled, "is_fp8(dtype=self.dtype) and other")),
        (
            "operator",
            DTYPES,
            CACHE.replace(spelled, wide),
            imported.replace(spelled, "is_fp8(self.dtype or other) and other"),
        ),
    ):
        files = {"dtypes.py": dtypes}
        found, _ = inlined(
            tmp_path / name.replace(" ", "-"), {**files, "model.py": before}, {**files, "model.py": after}
        )
        assert equivalents.INLINED not in set(found.values()), name
