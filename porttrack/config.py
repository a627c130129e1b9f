"""porttrack.toml: find it, read it, check every key's type, and say file:line when one is wrong."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
import tomlkit
import tomllib
from tomlkit.exceptions import ParseError, TOMLKitError

from porttrack import cache, gitio, tomlmap
from porttrack import paths as pathrules
from porttrack.errors import UserError
from porttrack.model import SEVERITIES

CONFIG_NAME = "porttrack.toml"


@dataclass
class PathMap:
    upstream: str  # a regex with named groups, matched against the whole upstream path
    port: list[str]  # templates filled from the groups

    def apply(self, upstream_path: str) -> list[str] | None:
        m = re.fullmatch(self.upstream, upstream_path)
        if not m:
            return None
        return [t.format(**m.groupdict()) for t in self.port]


@dataclass
class Config:
    path: Path | None  # the file it came from; None for defaults
    upstream_repo: Path | None = None
    upstream_paths: list[str] = field(default_factory=list)
    upstream_name: str = ""
    pr_pattern: str = r"\(#(\d+)\)"
    merges: str = "first-parent"  # or "all"
    port_root: Path = Path(".")
    scopes: dict[str, list[str]] = field(default_factory=lambda: {"code": ["src", "include"], "tests": ["tests"]})
    exclude: list[str] = field(default_factory=list)
    header_scan_lines: int = 40
    maps: list[PathMap] = field(default_factory=list)
    strip_leading_underscore: bool = True
    renames: dict[str, str] = field(default_factory=dict)
    matrices: list[str] = field(default_factory=list)
    id_pattern: str = r"[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+"
    done_states: list[str] = field(default_factory=lambda: ["DONE"])
    parked_states: list[str] = field(default_factory=list)  # rows set aside: they own nothing
    non_code: list[str] = field(default_factory=lambda: list(NON_CODE))
    source_suffixes: list[str] = field(default_factory=lambda: list(SOURCE_SUFFIXES))
    data_suffixes: list[str] = field(default_factory=lambda: list(DATA_SUFFIXES))
    language_only: dict[str, str] = field(default_factory=lambda: dict(LANGUAGE_ONLY))
    deferral_words: list[str] = field(default_factory=lambda: list(DEFERRAL_WORDS))
    mechanics_subject: str = field(default_factory=lambda: MECHANICS_SUBJECT)
    dead_subject: str = field(default_factory=lambda: DEAD_SUBJECT)
    queue_file: str = ""  # relative to port root
    cache_dir: str = ""  # a folder inside the checkout, or cache.MEMORY; "" for the user's own cache
    check_ignore: list[str] = field(default_factory=list)  # finding codes to drop
    check_min_severity: str = "info"

    @property
    def code_scope(self) -> list[str]:
        return self.scopes.get("code", ["src", "include"])

    @property
    def tests_scope(self) -> list[str]:
        return self.scopes.get("tests", ["tests"])

    @property
    def all_scopes(self) -> list[str]:
        """Every scope's folders together, sorted: where provenance headers are read."""
        return sorted({s for paths in self.scopes.values() for s in paths})

    @property
    def source_pathspecs(self) -> tuple[str, ...]:
        """Git pathspecs of the upstream's source files (`*.py`, ...): docs and configs read nothing."""
        return tuple(f"*{x}" for x in self.source_suffixes)

    def map_upstream(self, upstream_path: str) -> list[str]:
        """Port paths for an upstream path by the first `[[map]]` that matches (headers come first, elsewhere)."""
        for m in self.maps:
            got = m.apply(upstream_path)
            if got is not None:
                return got
        return []


# Upstream files that carry no runtime behaviour a port could need: tests, docs, CI, benchmarks.
NON_CODE: tuple[str, ...] = (
    "tests/**",
    "**/tests/**",
    "docs/**",
    "benchmarks/**",
    "examples/**",
    ".github/**",
    ".buildkite/**",
    "**/*.md",
)
# Upstream files that are code; an unmapped file with another suffix is ignored, unless it is data.
SOURCE_SUFFIXES: tuple[str, ...] = (".py", ".pyi", ".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp")
# Data the upstream's code reads (a kernel's tuned configs): part of that code's surface, so a port
# without a counterpart lacks it, as it lacks an unmapped code file.
DATA_SUFFIXES: tuple[str, ...] = (".json",)
# Changed lines that are mechanics of a Python upstream rather than behaviour a port could need:
# name -> regex matched against the stripped line, less its trailing comment. A change whose every
# line matches one of these (or is blank, a comment or a docstring) is a no-op, with the constructs named.
LANGUAGE_ONLY: dict[str, str] = {
    "decorator": r"^@[\w.]+(\(.*\))?$",
    "__slots__": r"^__slots__\s*=",
    "import": r"^(from\s+[\w.]+\s+)?import\s[\w., ()]*$",
    "typing": r"^(if\s+)?TYPE_CHECKING\b|^\w+\s*=\s*(TypeVar|NewType)\(",
    "log text": r"^(logger|logging)\.(debug|info|warning|error|exception)(_once)?\(|^_?logger\s*=\s*(logging\.getLogger|init_logger)\(__name__\)$",
    "torch.compile": r"torch\.compile\b|@support_torch_compile|torch\._dynamo",
    "pin_memory": r"\bpin_memory\b",
    "garbage collector": r"^gc\.\w+\(|^import gc$",
    "device assert": r"^assert\b.*\b(device|is_cuda|is_pinned)\b",
    "library version": r"^(if|elif|assert)\b.*(\bVersion\(|\bversion\.parse\(|__version__)",
}
# A subject by which the upstream says a change serves its own tooling (a type checker's
# demands, its documentation or the docs build), the Python runtime's mechanics (its garbage
# collector, pinned host memory, kernel autotuning, when a module is imported, monkey patches),
# its binding to PyTorch (moving kernels onto the libtorch stable ABI) or its PyTorch
# compiler integration (a `[compile]`, `[torch.compile]`, `[Inductor]` or `[vLLM IR]` tag: the op
# IR and graph passes torch.compile runs) rather than the program: matched against each entry's
# subject; "" matches none. A compiler-tagged subject that speaks of fusing is left to the code:
# a fusion pass makes the compiled graph call a fused kernel, which is a kernel feature.
_RUNTIME = (
    r"\bgarbage\s+collect\w*|\bgc\b|\bpin(?:ned)?[\s_]memory\b|\bautotun\w*|\bmonkey[\s-]?patch\w*"
    r"|\b(?:eager|lazy)\s+imports?\b|\blazily\s+import\w*|\bguard\w*\s+(?:\S+\s+){0,3}imports?\b"
)
_DOCS = r"\[\s*(?:docs?|documentation)\s*\]|^docs?:|\bdocs?\s+build\b"
_COMPILER_TAG = r"\[\s*(?:torch\.compile|compile|compilation|inductor|dynamo|(?:vllm\s+)?ir)\s*\]"
MECHANICS_SUBJECT: str = (
    r"(?i)\bmypy\b|\b(?:lib)?torch\s+stable\s+abi\b|"
    + _DOCS
    + "|"
    + _RUNTIME
    + "|"
    + _COMPILER_TAG
    + r"(?!.*\bfus(?:e|ed|es|ing|ion)\b)"
)
# A subject by which the upstream says the code a change removes or cleans up is dead or unused,
# or is what is left of an engine it has retired (`[V0 Deprecation]`): matched against each
# entry's subject; "" matches none. A "dead lock" is no dead code.
DEAD_SUBJECT = (
    r"(?i)\b(?:remove[sd]?|drop(?:s|ped)?|delete[sd]?|clean(?:s|ed)?[\s-]*up|cleanup)\b"
    r".*?\b(?:dead|unused)\b(?!\s*locks?\b)|\[\s*v0\s+deprecation\s*\]"
)
# The deferral word by which the port records doing a thing its own way, not leaving it out.
DEVIATION = "deviation"
# Words that, in a comment near a counterpart or a line of the port's docs, record a deliberate omission.
DEFERRAL_WORDS: tuple[str, ...] = (
    "deferred",
    "not ported",
    "omitted",
    DEVIATION,
    "intentionally not",
    "out of scope",
    "not yet ported",
)

# key path -> (expected python types, human name)
_SCHEMA: dict[tuple[str, ...], tuple[tuple[type, ...], str]] = {
    ("upstream", "repo"): ((str,), "a string"),
    ("upstream", "name"): ((str,), "a string"),
    ("upstream", "paths"): ((list,), "a list of strings"),
    ("upstream", "pr_pattern"): ((str,), "a string"),
    ("upstream", "merges"): ((str,), "a string"),
    ("port", "root"): ((str,), "a string"),
    ("port", "scopes"): ((dict,), "a table of string lists"),
    ("port", "exclude"): ((list,), "a list of strings"),
    ("port", "header_scan_lines"): ((int,), "an integer"),
    ("naming", "strip_leading_underscore"): ((bool,), "true or false"),
    ("naming", "renames"): ((dict,), "a table of strings"),
    ("owners", "matrices"): ((list,), "a list of strings"),
    ("owners", "id_pattern"): ((str,), "a string"),
    ("owners", "done_states"): ((list,), "a list of strings"),
    ("owners", "parked_states"): ((list,), "a list of strings"),
    ("audit", "non_code"): ((list,), "a list of strings"),
    ("audit", "source_suffixes"): ((list,), "a list of strings"),
    ("audit", "data_suffixes"): ((list,), "a list of strings"),
    ("audit", "language_only"): ((dict,), "a table of regex strings"),
    ("audit", "deferral_words"): ((list,), "a list of strings"),
    ("audit", "mechanics_subject"): ((str,), "a string"),
    ("audit", "dead_subject"): ((str,), "a string"),
    ("queue", "file"): ((str,), "a string"),
    ("cache", "dir"): ((str,), "a string"),
    ("check", "ignore"): ((list,), "a list of strings"),
    ("check", "min_severity"): ((str,), "a string"),
}
_LIST_OF_STR = {
    ("upstream", "paths"),
    ("port", "exclude"),
    ("owners", "matrices"),
    ("owners", "done_states"),
    ("owners", "parked_states"),
    ("audit", "non_code"),
    ("audit", "source_suffixes"),
    ("audit", "data_suffixes"),
    ("audit", "deferral_words"),
    ("check", "ignore"),
}


def find_config(start: Path) -> Path | None:
    """porttrack.toml in `start` or the nearest parent that has one."""
    start = start.resolve()
    for d in (start, *start.parents):
        if (d / CONFIG_NAME).is_file():
            return d / CONFIG_NAME
    return None


def key_line(text: str, table: str | None, key: str, occurrence: int = 0) -> int | None:
    """1-based line of `key = ...` inside `[table]` (or `[[table]]` number `occurrence`): the text's
    source map answers (tomlkit keeps no line numbers)."""
    return tomlmap.source_map(text).key_line(table, key, occurrence)


def parse_toml(path: Path, text: str) -> tomlkit.TOMLDocument:
    """Parse TOML, turning a syntax error into one sentence with the file and line."""
    try:
        return tomlkit.parse(text)
    except ParseError as e:
        reason = str(e).split(" at line ")[0].rstrip(".")
        raise UserError(f"{path}:{e.line}: malformed TOML: {reason}.") from None
    except TOMLKitError as e:
        # e.g. a key given twice in one table: tomlkit keeps no line, the standard parser does
        reason = str(e).rstrip(".")
        try:
            tomllib.loads(text)
            line = ""
        except tomllib.TOMLDecodeError as std:
            at = tomlmap.error_line(std)
            line = f":{at}" if at else ""
        raise UserError(f"{path}{line}: malformed TOML: {reason}.") from None


def _read_text(path: Path) -> str:
    raw = pathrules.read_regular(path, "config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text.") from None
    return text.removeprefix("\ufeff")  # a byte-order mark some editors write


def _check_known(doc: dict, text: str, path: Path, where: Callable[[str | None, str], str]) -> None:
    """Every table and key is one the schema knows."""
    known: dict[str, list[str]] = {}
    for table, key in _SCHEMA:
        known.setdefault(table, []).append(key)
    for table, section in doc.items():
        if table == "map":
            continue
        if table not in known:
            line = next(
                (
                    i
                    for i, ln in enumerate(text.splitlines(), 1)
                    if re.match(r"^\s*(\[\s*)?[\"']?" + re.escape(table) + r"[\"']?\s*[\].=]", ln)
                ),
                None,
            )
            raise UserError(
                f"{path}{f':{line}' if line else ''}: unknown table [{table}] "
                f"(porttrack.toml has {', '.join(f'[{t}]' for t in [*known, 'map'])})."
            )
        for key in section if isinstance(section, dict) else {}:
            if key not in known[table]:
                raise UserError(f"{where(table, key)}: unknown key {table}.{key} (one of {', '.join(known[table])}).")


def _check_types(doc: dict, where: Callable[[str | None, str], str]) -> None:
    """Every value has the schema's type."""
    for (table, key), (types, human) in _SCHEMA.items():
        section = doc.get(table)
        if section is None:
            continue
        if not isinstance(section, dict):
            raise UserError(f"{where(None, table)}: [{table}] must be a table.")
        if key not in section:
            continue
        value = section[key]
        if not isinstance(value, types) or (bool in types) != isinstance(value, bool):
            raise UserError(f"{where(table, key)}: {table}.{key} must be {human}, not {type(value).__name__}.")
        if (table, key) in _LIST_OF_STR and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise UserError(f"{where(table, key)}: {table}.{key} must be {human}.")
        if any("\0" in v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)):
            raise UserError(f"{where(table, key)}: {table}.{key} holds a NUL character.")


def _load_upstream(cfg: Config, up: dict, base: Path, where: Callable[[str | None, str], str]) -> None:
    if "repo" in up:
        cfg.upstream_repo = (base / up["repo"]).resolve()
        gitio.declare_bare(cfg.upstream_repo)
    cfg.upstream_paths = pathrules.norm_all(up.get("paths", []))  # "./vllm/" and "vllm" are one prefix
    cfg.upstream_name = up.get("name", "")
    cfg.pr_pattern = up.get("pr_pattern", cfg.pr_pattern)
    _check_regex(cfg.pr_pattern, where("upstream", "pr_pattern"), "upstream.pr_pattern")
    cfg.merges = up.get("merges", cfg.merges)
    if cfg.merges not in ("first-parent", "all"):
        raise UserError(f'{where("upstream", "merges")}: upstream.merges must be "first-parent" or "all".')


def _load_port(cfg: Config, port: dict, base: Path, where: Callable[[str | None, str], str]) -> None:
    cfg.port_root = (base / port.get("root", ".")).resolve()
    if not cfg.port_root.is_dir():
        what = "does not exist" if not cfg.port_root.exists() else "is not a folder"
        raise UserError(f"{where('port', 'root')}: port.root {port.get('root', '.')!r} {what} ({cfg.port_root}).")
    if "scopes" in port:
        scopes = port["scopes"]
        for name, paths in scopes.items():
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise UserError(f"{where('port', 'scopes')}: port.scopes.{name} must be a list of strings.")
        cfg.scopes = {k: list(v) for k, v in scopes.items()}
    cfg.exclude = list(port.get("exclude", []))
    cfg.header_scan_lines = port.get("header_scan_lines", cfg.header_scan_lines)
    if cfg.header_scan_lines < 0:
        raise UserError(
            f"{where('port', 'header_scan_lines')}: port.header_scan_lines must be 0 or more, not {cfg.header_scan_lines}."
        )


def _load_maps(cfg: Config, doc: dict, text: str, path: Path, where: Callable[[str | None, str], str]) -> None:
    maps = doc.get("map", [])
    if not isinstance(maps, list):
        raise UserError(f"{where(None, 'map')}: map must be an array of tables ([[map]]).")
    for i, m in enumerate(maps):
        mwhere = f"{path}:{key_line(text, 'map', 'upstream', i) or '?'}"
        if not isinstance(m, dict) or not isinstance(m.get("upstream"), str):
            raise UserError(f"{mwhere}: map number {i + 1} needs upstream = a regex string.")
        ports = m.get("port", [])
        if isinstance(ports, str):
            ports = [ports]
        if not isinstance(ports, list) or not all(isinstance(p, str) for p in ports):
            raise UserError(f"{mwhere}: map number {i + 1} needs port = a list of path templates.")
        _check_regex(m["upstream"], mwhere, f"map number {i + 1} upstream")
        _check_templates(m["upstream"], list(ports), f"{path}:{key_line(text, 'map', 'port', i) or '?'}", i + 1)
        cfg.maps.append(PathMap(m["upstream"], list(ports)))


def _load_naming_owners(cfg: Config, naming: dict, owners: dict, where: Callable[[str | None, str], str]) -> None:
    cfg.strip_leading_underscore = naming.get("strip_leading_underscore", True)
    renames = naming.get("renames", {})
    if not all(isinstance(v, str) for v in renames.values()):
        raise UserError(f"{where('naming', 'renames')}: naming.renames must map names to strings.")
    cfg.renames = dict(renames)
    cfg.matrices = list(owners.get("matrices", []))
    cfg.id_pattern = owners.get("id_pattern", cfg.id_pattern)
    _check_regex(cfg.id_pattern, where("owners", "id_pattern"), "owners.id_pattern")
    cfg.done_states = list(owners.get("done_states", cfg.done_states))
    cfg.parked_states = list(owners.get("parked_states", cfg.parked_states))


def _load_audit(cfg: Config, aud: dict, where: Callable[[str | None, str], str]) -> None:
    cfg.non_code = list(aud.get("non_code", cfg.non_code))
    cfg.source_suffixes = list(aud.get("source_suffixes", cfg.source_suffixes))
    cfg.data_suffixes = list(aud.get("data_suffixes", cfg.data_suffixes))
    cfg.deferral_words = list(aud.get("deferral_words", cfg.deferral_words))
    cfg.mechanics_subject = aud.get("mechanics_subject", cfg.mechanics_subject)
    _check_regex(cfg.mechanics_subject, where("audit", "mechanics_subject"), "audit.mechanics_subject")
    cfg.dead_subject = aud.get("dead_subject", cfg.dead_subject)
    _check_regex(cfg.dead_subject, where("audit", "dead_subject"), "audit.dead_subject")
    if "language_only" in aud:
        for name, rx in aud["language_only"].items():
            if not isinstance(rx, str):
                raise UserError(
                    f"{where('audit', 'language_only')}: audit.language_only.{name} must be a regex string."
                )
            _check_regex(rx, where("audit", "language_only"), f"audit.language_only.{name}")
        cfg.language_only = dict(aud["language_only"])


def _load_rest(cfg: Config, doc: dict, base: Path, where: Callable[[str | None, str], str]) -> None:
    """[queue], [cache] and [check]."""
    cfg.queue_file = doc.get("queue", {}).get("file", "")
    cfg.cache_dir = doc.get("cache", {}).get("dir", "")
    if cfg.cache_dir:  # like every path in the file, relative to the file's folder
        cfg.cache_dir = os.path.normpath(base / Path(cfg.cache_dir).expanduser())
        if Path(cfg.cache_dir).exists() and not Path(cfg.cache_dir).is_dir():
            raise UserError(f"{where('cache', 'dir')}: cache.dir {cfg.cache_dir} is a file, not a folder.")
    check = doc.get("check", {})
    cfg.check_ignore = list(check.get("ignore", []))
    cfg.check_min_severity = check.get("min_severity", "info")
    if cfg.check_min_severity not in SEVERITIES:
        raise UserError(f'{where("check", "min_severity")}: check.min_severity must be "info", "warning" or "error".')


def load_config(path: Path) -> Config:
    text = _read_text(path)
    doc = parse_toml(path, text).unwrap()

    def where(table: str | None, key: str) -> str:
        line = key_line(text, table, key)
        return f"{path}:{line}" if line else str(path)

    _check_known(doc, text, path, where)
    _check_types(doc, where)
    base = path.parent.resolve()
    cfg = Config(path=path)
    _load_upstream(cfg, doc.get("upstream", {}), base, where)
    _load_port(cfg, doc.get("port", {}), base, where)
    _load_maps(cfg, doc, text, path, where)
    _load_naming_owners(cfg, doc.get("naming", {}), doc.get("owners", {}), where)
    _load_audit(cfg, doc.get("audit", {}), where)
    _load_rest(cfg, doc, base, where)
    _confine(cfg, doc, base, where)
    return cfg


def _confine(cfg: Config, doc: dict, base: Path, where: Callable[[str | None, str], str]) -> None:
    """Keep every path the file names inside the checkout it lives in (docs/security.md): the file may
    come from a pull request, so none of its paths may lead git, a read or a write anywhere else."""
    checkout = gitio.toplevel(base)
    home = checkout or base

    def refuse(table: str, key: str, why: str) -> UserError:
        raw = doc.get(table, {}).get(key, "")
        return UserError(f"{where(table, key)}: {table}.{key} {raw!r} {why}.")

    if not cfg.port_root.is_relative_to(home):
        raise refuse("port", "root", f"lies outside the repository the config lives in ({home})")
    same = cfg.port_root.resolve() == base.resolve()  # the usual `root = "."`: no second git process
    if checkout is not None and not same and gitio.toplevel(cfg.port_root) != checkout:
        raise refuse(
            "port", "root", f"is not inside the working tree of the repository the config lives in ({checkout})"
        )
    if _committed_inside(checkout, cfg.upstream_repo):
        raise refuse("upstream", "repo", "is a repository committed inside this checkout, whose config git would read")
    if cfg.cache_dir:
        folder = Path(cfg.cache_dir)
        real = Path(os.path.realpath(folder))
        if not (folder.is_relative_to(home) and real.is_relative_to(home)) or ".git" in real.relative_to(home).parts:
            raise refuse(
                "cache",
                "dir",
                f"lies outside the repository the config lives in ({home}); set PORTTRACK_CACHE_DIR for a cache elsewhere",
            )
        cfg.cache_dir = cache.confine(folder, home, lambda rel: checkout is not None and gitio.tracked(checkout, rel))


def _committed_inside(checkout: Path | None, repo: Path | None) -> bool:
    """Is `repo` a repository whose files the checkout tracks (so a pull request wrote its config)?"""
    if checkout is None or repo is None or repo == checkout or not repo.is_relative_to(checkout):
        return False
    return gitio.tracked(checkout, repo.relative_to(checkout).as_posix())


def _check_regex(pattern: str, where: str, key: str) -> None:
    try:
        re.compile(pattern)
    except re.error as e:
        raise UserError(f"{where}: {key} {pattern!r} is not a valid regex ({e}).") from None


def _check_templates(upstream: str, templates: list[str], where: str, number: int) -> None:
    """Every `{name}` in a [[map]] port template must be a named group of its upstream regex."""
    groups = {g: "x" for g in re.compile(upstream).groupindex}
    for t in templates:
        try:
            t.format(**groups)
        except KeyError as e:
            have = ", ".join(groups) or "none"
            raise UserError(
                f"{where}: map number {number} port template {t!r} uses {{{e.args[0]}}}, "
                f"which is no named group of its upstream regex (named groups: {have})."
            ) from None
        except (ValueError, IndexError, AttributeError) as e:
            raise UserError(
                f"{where}: map number {number} port template {t!r} is not a valid template ({e}); "
                "write {name} for a named group and {{ }} for a literal brace."
            ) from None


def resolve_config(explicit: Path | None, cwd: Path | None = None) -> Config:
    """`--config FILE`, else porttrack.toml found upward from the working directory."""
    if explicit is not None:
        if explicit.is_dir():
            raise UserError(f"config file {explicit} is a folder, not a file.")
        return load_config(explicit)  # which refuses a missing file, or a FIFO, in one sentence
    found = find_config(cwd or Path.cwd())
    if found is None:
        raise UserError(
            f"no {CONFIG_NAME} in {cwd or Path.cwd()} or any parent; run `porttrack init` or pass --config."
        )
    return load_config(found)


def inside(root: Path, rel: str, what: str) -> Path:
    """root/rel, refusing anything that escapes root (`..`, absolute paths, symlinks pointing out)."""
    if Path(rel).is_absolute():
        raise UserError(f"{what} {rel!r} is an absolute path; it must lie inside the port root {root}.")
    try:
        return Path(pathrules.Tree(root).resolve(os.path.normpath(rel)))
    except pathrules.Outside:
        raise UserError(f"{what} {rel!r} lies outside the port root {root.resolve()}.") from None


def _has_entries(path: Path) -> bool:
    try:
        return (
            re.search(r"^[ \t]*\[\[\s*entry\s*\]\]", path.read_text(encoding="utf-8", errors="replace"), re.M)
            is not None
        )
    except OSError:
        return True  # unreadable: let loading it say why


def queue_path(cfg: Config, explicit: Path | None) -> Path:
    """The queue file to use: --queue, else [queue] file, else the only queue/*.toml under the port root."""
    root = cfg.port_root
    if explicit is not None:
        rel = explicit if explicit.is_absolute() else (Path.cwd() / explicit)
        try:
            return inside(root, str(rel.resolve().relative_to(root.resolve())), "queue path")
        except ValueError:
            raise UserError(f"queue path {explicit} lies outside the port root {root}.") from None
    if cfg.queue_file:
        return inside(root, cfg.queue_file, f"{cfg.path}: queue.file")
    found = sorted((root / "queue").glob("*.toml"))
    if len(found) == 1:
        return found[0]
    # a queue with no entries (a build whose range touched no mirrored path) never makes the
    # one queue that has entries ambiguous
    filled = [p for p in found if _has_entries(p)]
    if len(filled) == 1:
        return filled[0]
    if not found:
        raise UserError(f"no queue file: {root / 'queue'} has no *.toml; run `porttrack queue build` or pass --queue.")
    names = ", ".join(p.name for p in found)
    raise UserError(f"several queue files in {root / 'queue'} ({names}); pass --queue or set [queue] file.")
