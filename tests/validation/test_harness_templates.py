"""The harness templates (harnesses/templates) work once a team fills in one adapter.

Each test writes a tiny "port" (one real function: a config needs zeroing when it
has a Mamba layer, upstream's rule before the attention-zeroing switch), puts
the adapter the template's comment describes in place, and runs validate kv.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, needs_torch, run_cli

pytestmark = needs_torch  # kvref's answers (the zeroer) need torch
TEMPLATES = ROOT / "harnesses" / "templates"

PY_PORT = """
def needs_zeroing(kinds):
    return any(k == "mamba" for k in kinds)
"""

PY_ADAPTER = """
from tinyport import needs_zeroing


def needs_kv_cache_zeroing(args: dict) -> dict:
    return {"needs_kv_cache_zeroing": needs_zeroing([s["kind"] for s in args["layers"]])}


OPS: dict[str, Callable[[dict], dict]] = {"needs_kv_cache_zeroing": needs_kv_cache_zeroing}
"""

CPP_PORT = """
#include <string>
#include <vector>
namespace tiny {
inline bool needs_zeroing(const std::vector<std::string>& kinds) {
  for (const auto& k : kinds) if (k == "mamba") return true;
  return false;
}
}  // namespace tiny
"""

CPP_ADAPTER = """
Json dispatch(const std::string& op, const Json& args) {
  std::vector<std::string> kinds;
  for (const Json& s : args.at("layers").items()) kinds.push_back(s.at("kind").as_string());
  if (op == "needs_kv_cache_zeroing") return Json::object({{"needs_kv_cache_zeroing", tiny::needs_zeroing(kinds)}});
  throw NotPorted("op " + op + " has no adapter");
}
"""


def _summary(proc) -> dict:
    return json.loads(proc.stdout)["counts"]["needs_kv_cache_zeroing"]


def _replace(text: str, start: str, end: str, new: str) -> str:
    i, j = text.index(start), text.index(end, text.index(start))
    return text[:i] + new + text[j + len(end) :]


def test_empty_templates_list_no_ops_and_validate_refuses_them(tmp_path):
    proc = run_cli("validate", "kv", "--impl", f"{sys.executable} {TEMPLATES / 'py_harness.py'}", cwd=tmp_path)
    assert proc.returncode == 2 and "lists none of the protocol's ops" in proc.stderr


def test_python_template_with_one_adapter(tmp_path):
    (tmp_path / "tinyport.py").write_text(PY_PORT)
    text = (TEMPLATES / "py_harness.py").read_text()
    text = text.replace("OPS: dict[str, Callable[[dict], dict]] = {}\n", PY_ADAPTER)
    (tmp_path / "kv_harness.py").write_text(text)
    impl = f"{sys.executable} {tmp_path / 'kv_harness.py'}"
    g1 = run_cli("validate", "kv", "--impl", impl, "--as-of", "G1", "--cases", "40", "--json", cwd=tmp_path, check_rc=0)
    assert _summary(g1).get("passed", 0) > 0 and not _summary(g1).get("failed")
    # After the attention-zeroing switch, mixed KV precision needs zeroing too: the tiny port lacks it.
    late = run_cli("validate", "kv", "--impl", impl, "--as-of", "latest", "--cases", "40", "--json", cwd=tmp_path)
    assert late.returncode == 1 and _summary(late).get("failed", 0) > 0
    fails = json.loads(late.stdout)["failures"]
    assert all("attention-zeroing" in f["switches"] for f in fails)


def test_cpp_template_with_one_adapter(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler (g++) on this machine")
    (tmp_path / "tiny.h").write_text(CPP_PORT)
    text = (TEMPLATES / "cpp_harness.cpp").read_text()
    text = text.replace('// #include "mykv/kv_cache_config.h"   // the port\'s own headers', '#include "tiny.h"')
    text = _replace(text, "Json dispatch(", "}\n", CPP_ADAPTER.strip() + "\n")
    text = text.replace('{/* "needs_kv_cache_zeroing", */}', '{"needs_kv_cache_zeroing"}')
    src = tmp_path / "kv_harness.cpp"
    src.write_text(text)
    exe = tmp_path / "kv_harness"
    subprocess.run(
        ["g++", "-std=c++17", f"-I{tmp_path}", f"-I{ROOT / 'harnesses' / 'cpp'}", str(src), "-o", str(exe)],
        check=True,
        capture_output=True,
        text=True,
    )
    g1 = run_cli(
        "validate", "kv", "--impl", str(exe), "--as-of", "G1", "--cases", "40", "--json", cwd=tmp_path, check_rc=0
    )
    assert _summary(g1).get("passed", 0) > 0 and not _summary(g1).get("failed")
