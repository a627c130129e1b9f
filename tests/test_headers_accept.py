"""Acceptance-pass checks of provenance headers: nothing outside the port root is read; skipped files are counted."""

from __future__ import annotations

import json
import os

from conftest import commit_files, init_repo, run_cli
from porttrack.evidence.headers import headers_report, scan_headers


def test_links_out_of_the_root_are_not_read_and_skipped_files_are_counted(tmp_path):
    outside = tmp_path / "secret.cpp"
    outside.write_text("// Ported from: vllm/secret.py @ e24d1b24\n")
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            "porttrack.toml": '[port]\nscopes = { code = ["src"], tests = ["tests"] }\n',
            "src/a.cpp": "// Ported from: vllm/a.py @ e24d1b24\n",
            "src/inside.cpp": "// Ported from: vllm/inside.py @ e24d1b24\n",
        },
        "port",
    )
    os.symlink(outside, port / "src/out.cpp")
    os.symlink(port / "src/inside.cpp", port / "src/alias.cpp")  # a link inside the root is fine
    (port / "src/latin1.cpp").write_bytes(b"// Ported from: vllm/l.py @ e24d1b24\n// M\xfcller\n")

    skipped: list[str] = []
    provs = scan_headers(port, scopes=["src"], skipped=skipped)
    assert [p.path for p in provs] == ["src/a.cpp", "src/alias.cpp", "src/inside.cpp"]
    assert skipped == ["src/latin1.cpp", "src/out.cpp"]
    rep = headers_report(port, scopes=["src"])
    assert rep.counts["skipped"] == 2 and rep.counts["ported"] == 3

    data = json.loads(run_cli("headers", "--json", cwd=port, check_rc=0).stdout)
    assert "vllm/secret.py" not in json.dumps(data)
    assert data["skipped"] == ["src/latin1.cpp", "src/out.cpp"]
    text = run_cli("headers", cwd=port, check_rc=0).stdout
    assert "src/out.cpp" in text and "skipped 2" in text


def test_real_tree_faithful_1_1_port_and_grounding_statements():
    from porttrack.evidence.headers import parse_header

    def srcs(text):
        return [(s.upstream, s.pin, s.qualifier) for s in parse_header("include/x.h", text).sources]

    # include/vllm/platforms/interface.h of mudler/vllm.cpp: "1:1" before "port of", the pin on the next line
    assert srcs(
        "// Faithful 1:1 port of vllm/platforms/interface.py:134-229 (class Platform) @\n"
        "// pin e24d1b24 — the device-capability / memory-model seam. See\n"
    ) == [("vllm/platforms/interface.py", "e24d1b24", ":134-229")]
    # the model files: "Grounding: <upstream path> @ <pin>"
    assert srcs(
        "// Olmo2 attention block.\n// Grounding: vllm/model_executor/models/olmo2.py @ e24d1b24 — Olmo2Attention\n"
    ) == [("vllm/model_executor/models/olmo2.py", "e24d1b24", "")]
    assert parse_header("a.cpp", "// Grounding the design in practice: see the notes.\n").kind == "none"
