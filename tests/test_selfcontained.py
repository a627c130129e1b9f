"""The repository is self-contained: its docs and code cite its own docs, never files outside it."""

import re
import subprocess

from conftest import ROOT

# built from pieces so that this file does not match itself
OUTSIDE = re.compile("|".join(["DESI" + "GN", "KVR" + "EF", re.escape(".." + "/shared")]))


def test_nothing_points_outside_the_repository():
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    hits = []
    for rel in files:
        path = ROOT / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        hits += [f"{rel}:{i}" for i, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert not hits, hits


def test_every_design_citation_names_a_section_that_exists():
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", design, re.M))
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    cited = set()
    for rel in files:
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for m in re.finditer(r"docs/design\.md`? (§[\d.]+(?:, §[\d.]+)*)", text):
            cited |= {s.rstrip(".") for s in re.findall(r"§([\d.]+)", m[1])}
    assert cited and cited <= sections, sorted(cited - sections)
