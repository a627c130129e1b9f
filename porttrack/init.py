"""porttrack init: propose a porttrack.toml from what the trees show, and say what it rests on.

Everything comes from evidence where there is some: the mirrored paths from the upstream files the
port's provenance headers cite (rolled up to a folder where most of the folder is cited, and
checked against the upstream checkout), the scopes from where those headers are, the pin from the
headers (placed in the upstream, or said to be missing), the name from the upstream's origin URL.
Whatever has no evidence is a default, and a warning says so.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tomlkit

from porttrack import gitio
from porttrack.evidence import headers
from porttrack.config import CONFIG_NAME
from porttrack.errors import UserError

_CODE_DIRS = ("src", "include", "csrc", "lib")
_TEST_DIRS = ("tests", "test")
MOST = 0.5  # a folder is mirrored whole when more than this share of its files is cited


@dataclass
class Proposal:
    text: str  # the porttrack.toml
    notes: list[str] = field(default_factory=list)  # what each choice rests on
    warnings: list[str] = field(default_factory=list)  # choices with no evidence in the trees
    next_command: str = ""


def roll_up(cited: set[str], tree: list[str]) -> list[str]:
    """Mirrored paths for the cited upstream files: the shallowest folder of each file where more
    than half of the folder's files are cited, else the file itself; nothing inside another."""
    total: Counter[str] = Counter()
    for f in tree:
        for parent in PurePosixPath(f).parents:
            total[str(parent)] += 1
    hits: Counter[str] = Counter()
    for f in cited:
        for parent in PurePosixPath(f).parents:
            hits[str(parent)] += 1
    chosen = set()
    for f in cited:
        ancestors = [str(p) for p in reversed(PurePosixPath(f).parents) if str(p) != "."]
        best = next((d for d in ancestors if hits[d] > MOST * total[d]), None)
        chosen.add(best + "/" if best else f)
    out = sorted(chosen)
    return [p for p in out if not any(p != q and q.endswith("/") and p.startswith(q) for q in out)]


def origin_name(repo: Path, depth: int = 3) -> str | None:
    """`owner/name` from the origin URL (https, ssh or scp-like); a local path is followed to its own origin."""
    try:
        url = gitio.git(repo, "config", "--get", "remote.origin.url").decode().strip()
    except UserError:
        return None
    if (re.match(r"[a-z][a-z0-9+.-]*://", url) and not url.startswith("file://")) or re.match(r"[\w.-]+@[\w.-]+:", url):
        m = re.search(r"[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", url)
        return f"{m[1]}/{m[2]}" if m else None
    local = Path(url.removeprefix("file://"))
    local = local if local.is_absolute() else repo / local
    if depth > 0 and local.is_dir() and gitio.is_git_repo(local):
        return origin_name(local, depth - 1)
    return None


def _merge_prefixes(pins: Counter[str]) -> Counter[str]:
    """`e24d1b24` and `e24d1b24fe96` are one pin (compared by prefix): counted together under the longer."""
    out: Counter[str] = Counter()
    for pin in sorted(pins, key=len, reverse=True):
        longer = next((k for k in out if k.startswith(pin)), None)
        out[longer or pin] += pins[pin]
    return out


def _placed(upstream: Path, pins: Counter[str]) -> dict[str, tuple[str, int]]:
    """pin -> (full sha, commit time) for the pins that are commits of the upstream checkout."""
    out = {}
    for pin in pins:
        sha = gitio.rev_parse(upstream, pin)
        if sha:
            out[pin] = (sha, int(gitio.git(upstream, "log", "-1", "--format=%ct", sha).decode().strip() or 0))
    return out


def _scopes(provs: list[headers.Provenance], root: Path) -> tuple[list[str], list[str], bool, bool]:
    """(code scope, tests scope, code from evidence, tests from evidence): the top folders of the
    files whose headers cite upstream code, and of those citing upstream tests."""
    code: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for p in provs:
        top = p.path.split("/")[0] if "/" in p.path else ""
        if not top:
            continue
        for s in p.sources:
            (tests if s.upstream.startswith("tests/") or top in _TEST_DIRS else code)[top] += 1
    rank = {d: i for i, d in enumerate(_CODE_DIRS)}
    code_dirs = sorted((d for d in code if d not in _TEST_DIRS), key=lambda d: (-code[d], rank.get(d, len(rank)), d))
    test_dirs = sorted(tests)
    code_ok, tests_ok = bool(code_dirs), bool(test_dirs)
    if not code_dirs:
        code_dirs = [d for d in _CODE_DIRS if (root / d).is_dir()] or ["src", "include"]
    if not test_dirs:
        test_dirs = [d for d in _TEST_DIRS if (root / d).is_dir()] or ["tests"]
    return code_dirs, test_dirs, code_ok, tests_ok


def _repo_value(upstream: Path, root: Path) -> tuple[str, str | None]:
    """The path to write for [upstream] repo: as the user gave it, unless a relative path was given
    for another folder than the port root (the config reads it relative to itself)."""
    if upstream.is_absolute() or Path.cwd().resolve() == root.resolve():
        return upstream.as_posix(), None
    rel = os.path.relpath(upstream.resolve(), root.resolve())
    return rel, f"--upstream {upstream} is written as {rel}: porttrack.toml reads it relative to {root}"


def _choose_pin(
    pins: Counter[str], placed: dict[str, tuple[str, int]], upstream: Path | None, prop: Proposal, root: Path
) -> str | None:
    """The pin to start from: the most common header pin when the upstream has it (or there is no
    upstream to check it in), else the newest header pin the upstream has; with neither, and no
    remote to fetch one from, the upstream commit of the port's newest day (`_dated_pin`)."""
    notes, warn = prop.notes, prop.warnings
    if not pins:
        warn.append("no provenance header states a pin: choose PIN yourself (the upstream commit the port is at)")
        return None
    common, count = pins.most_common(1)[0]
    if upstream is None:
        warn.append(f"most common header pin {common} ({count} files) is unchecked: no --upstream to place it in")
        return common
    if common in placed:
        notes.append(
            f"pin {common}: the most common header pin ({count} of {sum(pins.values())} pinned "
            f"statements), a commit of {upstream}"
        )
        others = [f"{p} ({c} files)" for p, c in pins.most_common() if p not in placed]
        if others:
            warn.append(
                f"header pins {', '.join(others[:3])}{' …' if len(others) > 3 else ''} are not commits "
                f"of {upstream}: audit cannot place those files' pins until they are fetched"
            )
        return common
    missing = ", ".join(f"{p} ({c} files)" for p, c in pins.most_common(3) if p not in placed)
    remote = next(iter(gitio.remotes(upstream)), None)
    how = (
        f"fetch them (git -C {upstream} fetch {remote} {common}), or start from a pin it has"
        if remote
        else "it has no remote to fetch them from, so start from a commit it has"
    )
    warn.append(f"header pins {missing} are not commits of {upstream}: {how}")
    if not placed:
        return None if remote else _dated_pin(upstream, root, prop)
    pin = max(placed, key=lambda p: placed[p][1])
    warn.append(f"using {pin} ({pins[pin]} files), the newest header pin {upstream} has")
    return pin


def _dated_pin(upstream: Path, root: Path, prop: Proposal) -> str | None:
    """With no header pin in the upstream and no remote to fetch one: the upstream commit of the day the
    port last changed, said for what it is. None when the upstream has nothing that old."""
    when = gitio.commit_date(root)
    sha = gitio.last_commit_before(upstream, when) if when else None
    if sha is None or when is None:
        prop.warnings.append("no upstream commit can stand in for the pin: choose PIN yourself")
        return None
    prop.warnings.append(
        f"using {sha[:10]}, the last upstream commit before the port's newest commit ({when[:10]}), as the pin: "
        "it assumes the port was in sync that day, so changes it had not yet taken are left out of the range, "
        "and changes it took early come in again (audit finds those ported)"
    )
    return sha[:10]


def _mirrored_paths(cited_all: set[str], ported: int, upstream: Path | None, ref: str, prop: Proposal) -> list[str]:
    """[upstream] paths: the cited files rolled up against the upstream tree at REF (or, with no
    upstream, the top folders the headers cite)."""
    notes, warn = prop.notes, prop.warnings
    if upstream is not None:
        tree = gitio.git(upstream, "ls-tree", "-r", "--name-only", "-z", ref).decode("utf-8", "replace").split("\0")
        tree = [t for t in tree if t]
        present = set(tree)
        cited = {c for c in cited_all if c in present}
        gone = sorted(cited_all - cited)
        if gone:
            warn.append(
                f"{len(gone)} cited files are not in {upstream} at {ref[:10]} and do not shape the paths "
                f"(other projects, or renamed since): {', '.join(gone[:4])}{' …' if len(gone) > 4 else ''}"
            )
        paths = roll_up(cited, tree)
    else:
        cited = cited_all
        paths = sorted({c.split("/")[0] + "/" for c in cited})
        if paths:
            warn.append(
                "no --upstream: paths are the top folders the headers cite, not measured against the upstream tree"
            )
    if not paths:
        warn.append(
            'no provenance header cites an upstream file: paths = ["vllm/"] is a guess; list the folders you mirror'
        )
        return ["vllm/"]
    tests = [p for p in paths if p.startswith("tests/")]
    notes.append(
        f"{len(paths)} mirrored paths from {len(cited)} upstream files cited by {ported} port files' "
        f"headers (a folder when more than half of it is cited)"
        + (
            f"; {len(tests)} of them under tests/, where the port has ported tests"
            if tests
            else "; no tests/ path: no header cites an upstream test"
        )
    )
    return paths


def _note_scopes(
    code: list[str], test_scope: list[str], code_ok: bool, tests_ok: bool, root: Path, prop: Proposal
) -> None:
    (prop.notes if code_ok else prop.warnings).append(
        f"code scope {code}"
        + ("" if code_ok else ": no header says where ported code lives; a guess")
        + (
            ""
            if all((root / d).is_dir() for d in code)
            else f" ({', '.join(d for d in code if not (root / d).is_dir())} missing)"
        )
    )
    (prop.notes if tests_ok else prop.warnings).append(
        f"tests scope {test_scope}" + ("" if tests_ok else ": no ported test found; a guess")
    )


def _choose_name(name: str | None, upstream: Path | None, prop: Proposal) -> str:
    if name is not None:
        return name
    if upstream is None:
        prop.warnings.append("name 'upstream' is a placeholder: pass --name OWNER/REPO (reports write NAME#PR)")
        return "upstream"
    name = origin_name(upstream)
    if name:
        prop.notes.append(f"name {name!r}, from the upstream's origin URL")
        return name
    name = upstream.resolve().name
    prop.warnings.append(
        f"name {name!r} is the upstream folder's name: its origin URL names no owner/repo; "
        "set [upstream] name (reports write NAME#PR)"
    )
    return name


def _toml_text(
    root: Path,
    upstream: Path | None,
    name: str,
    paths: list[str],
    scopes_: tuple[list[str], list[str]],
    matrices: list[str],
    header_lines: int,
    prop: Proposal,
) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment("porttrack configuration; see docs/config.md. Proposed by `porttrack init`."))
    up = tomlkit.table()
    if upstream is not None:
        up["repo"], moved = _repo_value(upstream, root)
        if moved:
            prop.notes.append(moved)
    else:
        up["repo"] = "../upstream"
        up["repo"].comment("a local upstream checkout; needed only by queue build / refresh")
        prop.warnings.append("no --upstream: [upstream] repo = '../upstream' is a placeholder")
    up["name"] = name
    arr = tomlkit.array()
    arr.extend(paths)
    arr.multiline(len(paths) > 3)
    up["paths"] = arr
    up["pr_pattern"] = r"\(#(\d+)\)"
    doc["upstream"] = up
    port = tomlkit.table()
    port["root"] = "."
    scopes = tomlkit.inline_table()
    scopes["code"], scopes["tests"] = scopes_
    port["scopes"] = scopes
    port["exclude"] = ["third_party/**"]
    port["header_scan_lines"] = header_lines
    doc["port"] = port
    naming = tomlkit.table()
    naming["strip_leading_underscore"] = True
    naming["renames"] = tomlkit.inline_table()
    doc["naming"] = naming
    owners = tomlkit.table()
    owners["matrices"] = matrices or [".agents/*-matrix.md"]
    owners["id_pattern"] = r"[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+"
    owners["done_states"] = ["DONE"]
    doc["owners"] = owners
    return tomlkit.dumps(doc)


def _next_step(
    pin: str | None,
    pins: Counter[str],
    placed: dict[str, tuple[str, int]],
    upstream: Path | None,
    target: str | None,
    prop: Proposal,
) -> None:
    to = target[:10] if target else "TARGET"
    prop.next_command = f"porttrack queue build --range {pin or 'PIN'}..{to}"
    remote = next(iter(gitio.remotes(upstream)), None) if upstream is not None else None
    if pin is None and pins and remote is not None:  # the pin exists once it is fetched
        common = pins.most_common(1)[0][0]
        prop.next_command = (
            f"git -C {upstream} fetch {remote} {common}` then `porttrack queue build --range {common}..{to}"
        )
    if upstream is not None and pin is not None and pin in placed and target:
        if placed[pin][0] == target:
            prop.warnings.append(f"the upstream checkout's HEAD is the pin {pin}: nothing to sync until it is updated")
        elif not gitio.is_ancestor(upstream, placed[pin][0], target):
            prop.warnings.append(
                f"pin {pin} is not an ancestor of {upstream}'s HEAD {to}: check out the branch the port "
                "follows, or give queue build a TARGET that descends from the pin"
            )
        else:
            prop.notes.append(
                f"range {pin}..{to}: the pin is an ancestor of {upstream}'s HEAD, so the build below walks it"
            )


def propose(root: Path, upstream: Path | None = None, name: str | None = None, header_lines: int = 40) -> Proposal:
    prop = Proposal(text="")
    if upstream is not None:
        gitio.declare_bare(upstream)  # a mirror is read with --git-dir
    provs = headers.scan_headers(root, scan_lines=header_lines)
    cited_all = {s.upstream for p in provs for s in p.sources}
    pins = _merge_prefixes(Counter(s.pin for p in provs for s in p.sources if s.pin))
    ported = sum(1 for p in provs if p.sources)
    matrices = sorted(p.relative_to(root).as_posix() for p in root.glob(".agents/*matrix*.md"))

    placed = _placed(upstream, pins) if upstream is not None and pins else {}
    pin = _choose_pin(pins, placed, upstream, prop, root)
    target = gitio.rev_parse(upstream, "HEAD") if upstream is not None else None
    ref = placed[pin][0] if pin in placed else "HEAD"
    paths = _mirrored_paths(cited_all, ported, upstream, ref, prop)

    code, test_scope, code_ok, tests_ok = _scopes(provs, root)
    _note_scopes(code, test_scope, code_ok, tests_ok, root, prop)
    if matrices:
        prop.notes.append(f"matrices: {', '.join(matrices)}")
    else:
        prop.warnings.append(
            "no .agents/*matrix*.md found: owners.matrices is the default glob and matches nothing yet"
        )
    name = _choose_name(name, upstream, prop)
    prop.text = _toml_text(root, upstream, name, paths, (code, test_scope), matrices, header_lines, prop)
    _next_step(pin, pins, placed, upstream, target, prop)
    return prop


def write_starter(
    root: Path, *, upstream: Path | None = None, name: str | None = None, force: bool = False
) -> tuple[Path, Proposal]:
    if not root.is_dir():
        raise UserError(f"--root {root} is not a directory.")
    if upstream is not None:
        gitio.require_repo(upstream, "--upstream")  # "--upstream X is not a git repository."
        if gitio.rev_parse(upstream, "HEAD") is None:
            raise UserError(f"--upstream {upstream} has no commits.")
    path = root / CONFIG_NAME
    if path.exists() and not force:
        raise UserError(f"{path} already exists; pass --force to overwrite it.")
    prop = propose(root, upstream, name)
    try:
        path.write_text(prop.text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}.") from None
    return path, prop
