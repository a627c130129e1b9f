"""symbols: definitions (defs), their diff (textdiff), used identifiers, incremental reparse and the blob-id cache (extractor)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from porttrack import cache as cache_mod
from porttrack.errors import UserError
from porttrack.symbols import extractor as symbols
from porttrack.symbols.defs import _captures, comment_spans, definitions, diff_definitions, parse
from porttrack.symbols.extractor import Extractor, pair_key, reparse
from porttrack.symbols.textdiff import added_lines, line_edits, rows

PY = b'''"""module doc"""
import os

LIMIT = 4
T: int = 2


class Pool:
    """doc"""

    size: int = 0
    other = 1

    @property
    def free(self):
        return self.size

    class Meta:
        kind = "x"

    def _take(self, n):
        def helper():  # nested functions are part of their parent
            return n
        return helper()


if os.environ:
    FLAG = True

try:
    import fast
except ImportError:
    def fast_path():
        pass


def top(a, b=1):
    return a
'''

CPP = b"""// header
#pragma once
#define KV_LIMIT 16
#define KV_MAX(a, b) ((a) > (b) ? (a) : (b))
#ifndef NO_POOL
namespace vllm { namespace core {
template <typename T>
struct Block { T id; };
class Manager : public Base {
 public:
  Manager(int n);
  ~Manager();
  int take_new_block_ids(int n) const;
  static int count() { return 1; }
  enum Kind { kFull, kSliding };
 private:
  int n_;
};
enum class State : int { kIdle = 0, kBusy };
int free_function(int);
}}  // namespace vllm::core
#endif
int vllm::core::Manager::take_new_block_ids(int n) const { return n; }
typedef struct { int q; } Plain;
using BlockId = int;
extern "C" { void c_entry(void); }
static int* pointer_fn(int x) { return nullptr; }
"""


def test_python_definitions():
    assert sorted(definitions(PY, "python")) == [
        "FLAG",
        "LIMIT",
        "Pool",
        "Pool.Meta",
        "Pool.Meta.kind",
        "Pool._take",
        "Pool.free",
        "Pool.other",
        "Pool.size",
        "T",
        "fast_path",
        "top",
    ]


def test_cpp_definitions():
    # Names as written with `::`, scoped by namespace and class; macros unscoped; the out-of-line
    # definition of take_new_block_ids merges with its in-class declaration. The destructor, which
    # no identifier spells, is part of the class's text.
    assert sorted(definitions(CPP, "cpp")) == [
        "BlockId",
        "KV_LIMIT",
        "KV_MAX",
        "Plain",
        "c_entry",
        "pointer_fn",
        "vllm::core::Block",
        "vllm::core::Manager",
        "vllm::core::Manager::Kind",
        "vllm::core::Manager::Kind::kFull",
        "vllm::core::Manager::Kind::kSliding",
        "vllm::core::Manager::Manager",
        "vllm::core::Manager::count",
        "vllm::core::Manager::take_new_block_ids",
        "vllm::core::State",
        "vllm::core::State::kBusy",
        "vllm::core::State::kIdle",
        "vllm::core::free_function",
    ]


def test_cuda_and_c():
    cu = b"__global__ void zero_kernel(float* p) { p[0] = 0; }\nstruct Args { int n; };\n"
    assert sorted(definitions(cu, "cuda")) == ["Args", "zero_kernel"]
    c = b"#define N 3\nstatic int add(int a) { return a + N; }\nenum color { RED, GREEN };\n"
    assert sorted(definitions(c, "c")) == ["N", "add", "color", "color::GREEN", "color::RED"]


def test_cpp_names_are_what_a_probe_can_look_for():
    """A specialisation is defined under its template's name (its arguments may hold `::`, which
    would split it into nonsense parts); an operator or a destructor, which no identifier spells,
    stays in its class's text, and an edit of it is an edit of the class."""
    src = b"""namespace attn {
template <typename T, int D>
class Impl<ISA::AMX, T, D> {
 public:
  void forward(int x) { }
};
template <typename T>
void Holder<T>::run(int y) {}
template <typename T> struct Traits<std::vector<T>> { int n; };
struct Op { bool operator()(int a) const { return a; } ~Op() {} };
}
"""
    assert sorted(definitions(src, "cpp")) == [
        "attn::Holder::run",
        "attn::Impl",
        "attn::Impl::forward",
        "attn::Op",
        "attn::Traits",
    ]
    edited = definitions(src.replace(b"return a;", b"return !a;"), "cpp")
    assert diff_definitions(definitions(src, "cpp"), edited) == ([], ["attn::Op"], [])


def test_member_edit_changes_member_not_class():
    old = definitions(PY, "python")
    new = definitions(PY.replace(b"return self.size", b"return self.size - 1"), "python")
    assert diff_definitions(old, new) == ([], ["Pool.free"], [])


def test_comments_and_blank_lines_are_not_changes():
    old = definitions(PY, "python")
    new = definitions(PY.replace(b"return a\n", b"return a  # why\n\n\n").replace(b"# nested", b"# inner"), "python")
    assert diff_definitions(old, new) == ([], [], [])


def test_signature_change_and_field_add():
    old = definitions(PY, "python")
    edited = PY.replace(b"def top(a, b=1):", b"def top(a, b=2):").replace(
        b"    other = 1\n", b"    other = 1\n    extra: str = ''\n"
    )
    assert diff_definitions(old, definitions(edited, "python")) == (["Pool.extra"], ["top"], [])


def test_cpp_class_field_is_a_class_change_method_edit_is_not():
    old = definitions(CPP, "cpp")
    fields = definitions(CPP.replace(b"int n_;", b"int n_;\n  int m_;"), "cpp")
    assert diff_definitions(old, fields) == ([], ["vllm::core::Manager"], [])
    body = definitions(CPP.replace(b"{ return n; }", b"{ return n + 1; }"), "cpp")
    assert diff_definitions(old, body) == ([], ["vllm::core::Manager::take_new_block_ids"], [])


def test_added_lines_and_uses(tmp_path):
    old = b"def f():\n    return 1\n"
    new = b"def f():\n    return 1\n\n\ndef g(self, y):\n    return len(brand_new(y)) + f()\n"
    assert added_lines(old, new) == {2, 3, 4, 5}
    blobs = {"o": old, "n": new}
    with Extractor(blobs.__getitem__, tmp_path) as ex:
        d = ex.file_change("python", "o", "n")
    assert (d.added, d.changed, d.removed) == (["g"], [], [])
    assert d.uses == ["brand_new", "f", "y"]  # not len/self (builtins), not g (defined here)


def test_cache_by_blob_id(tmp_path):
    blobs = {"a1": PY, "a2": PY.replace(b"LIMIT = 4", b"LIMIT = 5"), "a3": PY.replace(b"LIMIT = 4", b"LIMIT = 6")}
    with Extractor(blobs.__getitem__, tmp_path) as ex:
        first = ex.file_change("python", "a1", "a2")
        assert (ex.parsed, ex.cached) == (2, 0)
        ex.file_change("python", "a2", "a3")  # a2 was parsed once already in this run
        assert ex.parsed == 3
    assert cache_mod.db_path(tmp_path).is_file()
    reads = []
    with Extractor(lambda sha: reads.append(sha) or blobs[sha], tmp_path) as ex:
        again = ex.file_change("python", "a1", "a2")
        assert (ex.parsed, ex.cached, reads) == (0, 1, [])
        ex.file_change("python", "a3", "a1")  # a new pair: a3's definitions come from the cache
        assert ex.parsed == 1
    assert again == first and first.changed == ["LIMIT"]


def test_binary_blob_is_skipped(tmp_path):
    blobs = {"b": b"\x00\x01def x(): pass\n", "t": b"def x(): pass\n"}
    with Extractor(blobs.__getitem__, tmp_path) as ex:
        d = ex.file_change("python", "t", "b")
        assert (d.added, d.changed, d.removed, ex.skipped) == ([], [], [], 1)


def test_unusable_cache_only_costs_parsing(tmp_path):
    cache_mod.db_path(tmp_path).mkdir()  # a folder where the cache file should be
    blobs = {"o": b"a = 1\n", "n": b"a = 2\n"}
    for _ in range(2):
        with Extractor(blobs.__getitem__, tmp_path) as ex:
            assert ex.file_change("python", "o", "n").changed == ["a"]
            assert ex.parsed == 2


LINES = [
    b"def f(x):\n",
    b"    return x\n",
    b"class A:\n",
    b"    y = 1\n",
    b"\n",
    b"z = 2",
    b"# c\n",
    b"if q:\n    pass\n",
    b"\r\n",
    b"int a;\n",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=14), st.lists(st.sampled_from(LINES), max_size=14))
def test_incremental_reparse_equals_full_parse(a, b):
    old, new = b"".join(a), b"".join(b)
    edits = line_edits(old, new)
    for lang in ("python", "cpp"):
        incremental = reparse(parse(old, lang), old, new, edits, lang)
        full = parse(new, lang)
        assert str(incremental.root_node) == str(full.root_node)
        assert [(n.start_point, n.end_point) for n in incremental.root_node.children] == [
            (n.start_point, n.end_point) for n in full.root_node.children
        ]
        assert definitions(new, lang, incremental) == definitions(new, lang, full)
    # added rows are rows of `new`, and every row of `new` that is not added exists in `old`
    rows = new.split(b"\n")
    added = added_lines(old, new)
    assert all(0 <= r < len(rows) for r in added)
    assert all(rows[i] + b"\n" in old + b"\n" for i in range(len(rows)) if i not in added)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*LINES, b"x\n", b"y\n", b"x\n"]), max_size=40), st.data())
def test_line_edits_are_an_exact_edit_script(a, data):
    b = (
        data.draw(st.lists(st.sampled_from([*LINES, b"x\n", b"y\n"]), max_size=40))
        if data.draw(st.booleans())
        else list(a)
    )
    if b == a and a:
        k = data.draw(st.integers(0, len(a) - 1))
        b = [*a[:k], b"new\n", *a[k + 1 :]]
    old, new = b"".join(a), b"".join(b)
    old_rows, new_rows = rows(old), rows(new)
    rebuilt, at = [], 0
    for i1, i2, j1, j2 in line_edits(old, new):
        assert at <= i1 <= i2 and j1 <= j2
        rebuilt += old_rows[at:i1]  # rows outside the edits are kept as they were
        assert len(rebuilt) == j1
        rebuilt += new_rows[j1:j2]
        at = i2
    rebuilt += old_rows[at:]
    assert rebuilt == new_rows


def test_uses_keep_the_enclosing_class_of_a_new_member(tmp_path):
    old = b"class Pool:\n    def take(self):\n        return 1\n"
    new = old + b"\n    def zero(self):\n        return Pool.take(self) + Block.size\n"
    with Extractor({"o": old, "n": new}.__getitem__, tmp_path) as ex:
        d = ex.file_change("python", "o", "n")
    assert d.added == ["Pool.zero"]
    assert d.uses == ["Block", "Pool", "size", "take"]  # `zero` is this change's own name


class _DictReader:
    """A blob reader over a dict, like the walk's cat-file reader: missing blobs are a UserError."""

    def __init__(self, blobs):
        self.blobs = blobs

    def one(self, sha):
        if sha not in self.blobs:
            raise UserError(f"object {sha} is missing")
        return self.blobs[sha]

    def many(self, shas):
        return {sha: self.one(sha) for sha in shas}

    def close(self):
        pass


def _chains():
    """Two files, each changed three times (newest change first, as the walk lists them)."""
    blobs, changes = {}, []
    for name in ("p", "q"):
        versions = [
            PY.replace(b"LIMIT = 4", b"LIMIT = %d" % i)
            + b"def %s%d():\n    return helper%d()\n" % (name.encode(), i, i)
            for i in range(4)
        ]
        for i, data in enumerate(versions):
            blobs[f"{name}{i}"] = data
        changes += [("python", f"{name}{i}", f"{name}{i + 1}") for i in range(3)]
    changes.sort(key=lambda c: -int(c[2][1:]))
    return blobs, changes


def test_extract_matches_file_change_and_parses_each_blob_once(tmp_path):
    blobs, changes = _chains()
    with Extractor(blobs.__getitem__, tmp_path / "a") as ex:
        one_by_one = [ex.file_change(*c) for c in changes]
    reader = _DictReader(blobs)
    with Extractor(reader.one, tmp_path / "b", reader.many) as ex:
        got = ex.extract(changes + changes[:1])  # a pair met twice is computed once
        assert (ex.parsed, ex.cached, ex._recent) == (8, 1, {})  # 8 blobs; no tree kept past its last use
    assert [got[pair_key(*c)] for c in changes] == one_by_one
    assert one_by_one[0].added == ["p3"] and one_by_one[0].changed == ["LIMIT"] and one_by_one[0].uses == ["helper3"]
    with Extractor(reader.one, tmp_path / "b", reader.many) as ex:
        assert ex.extract(changes) == got and (ex.parsed, ex.cached) == (0, len(changes))


def test_extract_in_forked_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(symbols, "_POOL_MIN", 1)
    blobs, changes = _chains()
    reader = _DictReader(blobs)
    with Extractor(reader.one, tmp_path / "serial", reader.many) as ex:
        serial = ex.extract(changes)
    progress = []
    with Extractor(reader.one, tmp_path / "forked", reader.many) as ex:
        forked = ex.extract(
            changes, jobs=2, open_reader=lambda: _DictReader(blobs), progress=lambda d, t: progress.append((d, t))
        )
        assert ex.parsed == 8 and progress[-1] == (6, 6) and len(progress) > 1  # two chains: two buckets
    assert forked == serial
    with Extractor(reader.one, tmp_path / "forked", reader.many) as ex:
        assert ex.extract(changes) == serial and ex.parsed == 0  # stored by the parent
    del blobs["q0"]
    with (
        Extractor(reader.one, tmp_path / "missing", reader.many) as ex,
        pytest.raises(UserError, match="object q0 is missing"),
    ):
        ex.extract(changes, jobs=2, open_reader=lambda: _DictReader(blobs))


def test_forked_workers_never_open_the_cache_yet_reuse_its_definitions(tmp_path, monkeypatch):
    """SQLite's lock state is copied by a fork, so a worker's own connection could write without real
    locks: workers get the stored definitions they may reuse from the parent, and open no file."""
    import shutil

    monkeypatch.setattr(symbols, "_POOL_MIN", 1)
    blobs, changes = _chains()
    reader = _DictReader(blobs)
    with Extractor(reader.one, tmp_path / "c", reader.many) as ex:
        ex.extract([(lang, new, old) for lang, old, new in changes])  # every blob's definitions stored
    with Extractor(reader.one, tmp_path / "c", reader.many) as ex:
        shutil.rmtree(tmp_path / "c")  # a worker that opened the cache would make the folder again
        forked = ex.extract(changes, jobs=2, open_reader=lambda: _DictReader(blobs))
        # each chain's oldest blob is read once, as a before-side: its stored definitions serve, no parse
        assert ex.parsed == 6
    assert not (tmp_path / "c").exists()
    with Extractor(reader.one, tmp_path / "serial", reader.many) as ex:
        assert forked == ex.extract(changes)


def test_comment_spans_are_the_comment_nodes():
    cases = [
        ("python", b'x = "# not a comment"  # one\n# two # still two\ndef f():\n    return 1  # three\n'),
        ("cpp", b'int a = 4 / 2; // one\n/* two // inside */ char* s = "// no";\nint b; /* three */\n'),
    ]
    for lang, data in cases:
        root = parse(data, lang).root_node
        query = sorted((n.start_byte, n.end_byte) for n in _captures(lang, "(comment) @c", root))
        assert comment_spans(root, data, lang) == query and len(query) == 3


def _nodes(tree):
    out, stack = [], [tree.root_node]
    while stack:
        n = stack.pop()
        out.append((n.type, n.start_byte, n.end_byte, n.start_point, n.end_point))
        stack.extend(n.children)
    return out


def test_reparse_with_edits_inside_lines():
    """Edits narrowed to the differing bytes: same tree as a full parse, positions included."""
    old = b"class A:\n    def run(self):\n        x = 1\n        return x\n\n    def other(self):\n        return 'e\xc3\xa9'"
    cases = [
        old.replace(b"def run(", b"def ran("),  # inside a def line: the body stays
        old.replace(b"x = 1\n", b"x = 1\n        y = 2\n"),  # a line added after a common line start
        old.replace(b"'e\xc3\xa9'", b"'e\xc3\xa8'\n"),  # the last line, without then with a newline
        old.replace(b"return x\n", b"return x + \\\n            1\n"),
        b"",
        old + b"\n\nz = 3\n",
        old.replace(b"class A:", b"class B(A):"),
    ]
    for new in cases:
        for src, dst in ((old, new), (new, old)):
            incremental = reparse(parse(src, "python"), src, dst, line_edits(src, dst), "python")
            assert _nodes(incremental) == _nodes(parse(dst, "python"))
