"""porttrack demo: a miniature of the prime user's case, built from scratch, then the whole pipeline.

Upstream is a Python repo shaped like vLLM's KV-cache modules with PR-numbered
commits; the port is a C++ repo mirroring it, with provenance headers and an
engine matrix. Commit dates and authors are fixed, so every sha, queue and
report the demo produces is the same on every machine.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from rich.console import Console

from porttrack import gitio
from porttrack.errors import UserError

# ---------------------------------------------------------------- upstream: the pin and eleven commits

_INTERFACE = '''"""KV cache specs: what one layer's cache looks like."""

from dataclasses import dataclass


@dataclass(frozen=True)
class KVCacheSpec:
    block_size: int

    @property
    def page_size_bytes(self) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class AttentionSpec(KVCacheSpec):
    num_kv_heads: int
    head_size: int
    dtype_bytes: int = 2

    @property
    def page_size_bytes(self) -> int:
        return 2 * self.block_size * self.num_kv_heads * self.head_size * self.dtype_bytes


@dataclass(frozen=True)
class FullAttentionSpec(AttentionSpec):
    pass


@dataclass(frozen=True)
class MambaSpec(KVCacheSpec):
    state_bytes: int = 0
    mamba_cache_mode: str = "none"

    @property
    def page_size_bytes(self) -> int:
        return self.state_bytes
'''

_UTILS = '''"""KV cache sizing helpers."""

from vllm.v1.kv_cache_interface import KVCacheSpec


def get_num_blocks(available_memory: int, page_size: int, num_layers: int) -> int:
    return available_memory // page_size // num_layers


def get_kv_cache_config(specs: list[KVCacheSpec], available_memory: int) -> dict:
    page_size = specs[0].page_size_bytes
    num_blocks = get_num_blocks(available_memory, page_size, len(specs))
    return {"num_blocks": num_blocks, "groups": [specs]}
'''

_SINGLE = '''"""One KV cache manager per group of layers sharing a spec."""


class SingleTypeKVCacheManager:
    def __init__(self, kv_cache_spec, block_pool):
        self.kv_cache_spec = kv_cache_spec
        self.block_pool = block_pool
        self.req_to_blocks = {}

    def allocate_new_blocks(self, request_id, num_tokens):
        num_blocks = -(-num_tokens // self.kv_cache_spec.block_size)
        blocks = self.block_pool.get_new_blocks(num_blocks)
        self.req_to_blocks.setdefault(request_id, []).extend(blocks)
        return blocks

    def free(self, request_id):
        self.block_pool.free_blocks(self.req_to_blocks.pop(request_id, []))
'''

_MANAGER = '''"""The scheduler's view of the KV cache: one manager per group."""


class KVCacheManager:
    def __init__(self, managers):
        self.managers = managers

    def allocate_slots(self, request_id, num_tokens):
        return [m.allocate_new_blocks(request_id, num_tokens) for m in self.managers]
'''

_COORD = '''"""Coordinates prefix-cache hits across KV cache groups."""


class HybridKVCacheCoordinator:
    def __init__(self, managers, block_size):
        self.managers = managers
        self.block_size = block_size

    def find_longest_cache_hit(self, block_hashes, max_length):
        hit = max_length
        for manager in self.managers:
            hit = min(hit, manager.find_longest_cache_hit(block_hashes, hit))
        return hit
'''

_WORKER = '''"""Worker-side helpers for the KV cache tensors."""


def bind_kv_cache(kv_caches, forward_context):
    for name, cache in kv_caches.items():
        forward_context[name].kv_cache = cache


class KVBlockZeroer:
    """Zeroes freed blocks so a recycled SSM state starts clean."""

    def __init__(self, kv_caches, block_size):
        self.tensors = list(kv_caches.values())
        self.page = block_size

    def zero_block_ids(self, block_ids):
        if not block_ids:
            return
        for t in self.tensors:
            t.view(t.shape[0], -1)[block_ids] = 0
'''

_PIPELINE = """steps:
  - label: V1 core
    commands:
      - pytest -v tests/v1/core
"""

_PIN_FILES = {
    "vllm/v1/kv_cache_interface.py": _INTERFACE,
    "vllm/v1/core/kv_cache_utils.py": _UTILS,
    "vllm/v1/core/single_type_kv_cache_manager.py": _SINGLE,
    "vllm/v1/core/kv_cache_manager.py": _MANAGER,
    "vllm/v1/core/kv_cache_coordinator.py": _COORD,
    "vllm/v1/worker/utils.py": _WORKER,
    ".buildkite/test-pipeline.yaml": _PIPELINE,
    "docs/design/kv_cache.md": "# KV cache\n\nOne manager per group.\n",
}


def _replace(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


@dataclass
class UpstreamCommit:
    subject: str
    date: str
    edits: dict  # path -> text or a function of the old text
    intent: str  # which verdict the demo means it to exercise


UPSTREAM = [
    UpstreamCommit("[Core] KV cache manager for hybrid models (#30000)", "2026-03-01", dict(_PIN_FILES), "the pin"),
    UpstreamCommit(
        "[Core] Zero freed SSM cache blocks (#35219)",
        "2026-03-10",
        {
            "vllm/v1/core/single_type_kv_cache_manager.py": lambda t: (
                _replace(
                    "        self.req_to_blocks = {}\n",
                    "        self.req_to_blocks = {}\n        self.new_block_ids: list[int] = []\n",
                )(
                    _replace(
                        "        self.req_to_blocks.setdefault(request_id, []).extend(blocks)\n",
                        "        self.req_to_blocks.setdefault(request_id, []).extend(blocks)\n"
                        "        self.new_block_ids.extend(b.block_id for b in blocks)\n",
                    )(t)
                )
                + "\n    def take_new_block_ids(self) -> list[int]:\n"
                "        ids, self.new_block_ids = self.new_block_ids, []\n"
                "        return ids\n"
            ),
            "vllm/v1/core/kv_cache_manager.py": lambda t: (
                t + "\n    def take_new_block_ids(self) -> list[int]:\n"
                "        ids = []\n"
                "        for m in self.managers:\n"
                "            ids.extend(m.take_new_block_ids())\n"
                "        return ids\n"
            ),
        },
        "ported: the port carries take_new_block_ids, pinned at this commit",
    ),
    UpstreamCommit(
        "[Doc] Describe block recording in the KV cache design (#36001)",
        "2026-03-20",
        {"docs/design/kv_cache.md": lambda t: t + "\nNew block ids are recorded for zeroing.\n"},
        "outside the mirrored paths: not queued",
    ),
    UpstreamCommit(
        "[Core] Resolve scheduler and hash block sizes for hybrid models (#40860)",
        "2026-04-26",
        {
            "vllm/v1/core/kv_cache_utils.py": lambda t: (
                _replace(
                    "from vllm.v1.kv_cache_interface import KVCacheSpec\n",
                    "from math import gcd, lcm\n\nfrom vllm.v1.kv_cache_interface import KVCacheSpec, MambaSpec\n",
                )(t)
                + "\n\ndef resolve_kv_cache_block_sizes(specs: list[KVCacheSpec], block_size: int,\n"
                "                                 enable_prefix_caching: bool = True) -> tuple[int, int]:\n"
                "    sizes = [s.block_size for s in specs]\n"
                "    scheduler_block_size = lcm(*sizes)\n"
                "    if not enable_prefix_caching:\n"
                "        return scheduler_block_size, scheduler_block_size\n"
                "    if any(isinstance(s, MambaSpec) and s.block_size != block_size for s in specs):\n"
                "        return scheduler_block_size, scheduler_block_size\n"
                "    hash_block_size = gcd(*sizes)\n"
                "    return scheduler_block_size, hash_block_size\n"
            )
        },
        "real-gap: new code in a file the port has",
    ),
    UpstreamCommit(
        "[Bugfix] Round get_num_blocks down per layer before dividing (#41234)",
        "2026-05-02",
        {
            "vllm/v1/core/kv_cache_utils.py": _replace(
                "    return available_memory // page_size // num_layers\n",
                "    per_layer = available_memory // num_layers\n    return per_layer // page_size\n",
            )
        },
        "real-gap: changes a function the port has and calls",
    ),
    UpstreamCommit(
        "[Core] Cap hybrid cache hits at the LCM block size (#42000)",
        "2026-05-10",
        {
            "vllm/v1/core/kv_cache_coordinator.py": _replace(
                "        return hit\n", "        return hit - hit % self.block_size\n"
            )
        },
        "owned: the matrix row KV-HYBRID-COORD cites this file",
    ),
    UpstreamCommit(
        "[Core] Loop over every KV cache group in get_kv_cache_config (#43000)",
        "2026-05-20",
        {
            "vllm/v1/core/kv_cache_utils.py": _replace(
                '    return {"num_blocks": num_blocks, "groups": [specs]}\n',
                "    groups = [[s for s in specs if type(s) is t] for t in dict.fromkeys(type(s) for s in specs)]\n"
                '    return {"num_blocks": num_blocks, "groups": groups}\n',
            )
        },
        "no-op (a human's verdict): every port group holds one spec type already",
    ),
    UpstreamCommit(
        "[CI] Run the V1 core tests in their own step (#44000)",
        "2026-06-01",
        {
            ".buildkite/test-pipeline.yaml": lambda t: (
                t + "  - label: V1 core (hybrid)\n    commands:\n      - pytest -v tests/v1/core -k hybrid\n"
            )
        },
        "ignore: CI only",
    ),
    UpstreamCommit(
        "[Bugfix] Step KVBlockZeroer segments by block stride, not page size (#50276)",
        "2026-06-10",
        {
            "vllm/v1/worker/utils.py": lambda t: _replace(
                "        self.page = block_size\n",
                "        self.page = block_size\n        self.strides = [t.stride(0) for t in self.tensors]\n",
            )(
                _replace(
                    "        for t in self.tensors:\n            t.view(t.shape[0], -1)[block_ids] = 0\n",
                    "        for t, stride in zip(self.tensors, self.strides):\n"
                    "            t.as_strided((t.shape[0], stride), (stride, 1))[block_ids] = 0\n",
                )(t)
            )
        },
        "surface-absent: the port has no KVBlockZeroer",
    ),
    UpstreamCommit(
        "[Core] Add tokens_per_state to KV cache specs (#51718)",
        "2026-06-23",
        {
            "vllm/v1/kv_cache_interface.py": _replace(
                "class KVCacheSpec:\n    block_size: int\n",
                "class KVCacheSpec:\n    block_size: int\n    tokens_per_state: int = 1\n",
            )
        },
        "real-gap: a new spec field",
    ),
    UpstreamCommit(
        "[Core] Drain recorded block ids every step (#52310)",
        "2026-07-01",
        {
            "vllm/v1/core/single_type_kv_cache_manager.py": _replace(
                "        ids, self.new_block_ids = self.new_block_ids, []\n        return ids\n",
                "        ids = self.new_block_ids\n        self.new_block_ids = []\n        return ids or []\n",
            )
        },
        "inert: take_new_block_ids has no consumer in the port",
    ),
    UpstreamCommit(
        "[Core] Align prefix-cache hits to each spec's tokens_per_state (#53896)",
        "2026-08-31",
        {
            "vllm/v1/core/kv_cache_utils.py": _replace(
                "    hash_block_size = gcd(*sizes)\n    return scheduler_block_size, hash_block_size\n",
                "    hash_block_size = gcd(*sizes)\n"
                "    for alignment in {s.tokens_per_state for s in specs if s.tokens_per_state > 1}:\n"
                "        if scheduler_block_size % alignment:\n"
                '            raise ValueError(f"block size {scheduler_block_size} is not a multiple of {alignment}")\n'
                "    return scheduler_block_size, hash_block_size\n",
            )
        },
        "blocked: needs tokens_per_state (#51718) and resolve_kv_cache_block_sizes (#40860)",
    ),
]

# ---------------------------------------------------------------- the port


# The port's files and the consumer live under porttrack/data/demo/ as package data, C++ as C++;
# @PIN@ (ten hex digits), @PIN8@ and @RECORDED@ stand for the upstream shas they cite.
CONSUMER_PATH = "src/vllm/v1/core/sched/scheduler.cpp"


def _data_files(folder: str) -> dict[str, str]:
    """Every file under porttrack/data/demo/<folder>, by its path relative to that folder."""
    out: dict[str, str] = {}

    def walk(node: Traversable, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, f"{rel}{child.name}/")
            else:
                out[f"{rel}{child.name}"] = child.read_text(encoding="utf-8")

    walk(resources.files("porttrack").joinpath("data", "demo", folder), "")
    return out


def _cite(text: str, pin: str, recorded: str) -> str:
    return text.replace("@PIN8@", pin[:8]).replace("@PIN@", pin[:10]).replace("@RECORDED@", recorded[:10])


def _port_files(pin: str, recorded: str) -> dict[str, str]:
    """The C++ port as of now: mirrors the pin, plus #35219's block-id recording."""
    return {rel: _cite(text, pin, recorded) for rel, text in _data_files("port").items()}


NO_OP_REASON = "the port builds one group per spec type, so every group already holds a single spec"

# ---------------------------------------------------------------- building the repos


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {
        "GIT_AUTHOR_NAME": "porttrack demo",
        "GIT_AUTHOR_EMAIL": "demo@porttrack.invalid",
        "GIT_COMMITTER_NAME": "porttrack demo",
        "GIT_COMMITTER_EMAIL": "demo@porttrack.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{date}T12:00:00+00:00"
    proc = gitio.run(repo, *args, extra_env=env)
    if proc.returncode != 0:
        raise UserError(f"git {args[0]} failed in {repo}: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "replace").strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_upstream(root: Path) -> list[str]:
    """The upstream repo; returns the sha of each commit of UPSTREAM in order."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    shas = []
    for c in UPSTREAM:
        for rel, edit in c.edits.items():
            path = root / rel
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            new = edit(old) if callable(edit) else edit
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", c.subject, date=c.date)
        shas.append(_git(root, "rev-parse", "HEAD"))
    return shas


def build_port(root: Path, shas: list[str]) -> None:
    """The port repo: a first commit at the pin, a second that ports #35219's recording."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    files = _port_files(shas[0], shas[1])
    first = _port_files(shas[0], shas[0])
    _write(root, first)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"Port the KV cache core at upstream {shas[0][:10]}", date="2026-07-02")
    _write(root, files)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Record new block ids (upstream vllm#35219)", date="2026-07-09")


def add_consumer(port: Path, pin: str) -> Path:
    """Give take_new_block_ids its first non-test consumer, as a port does when it starts zeroing."""
    path = port / CONSUMER_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    # the consumer a port adds the day it starts zeroing blocks: it makes the inert entry real
    path.write_text(_cite(_data_files("consumer")[CONSUMER_PATH], pin, pin), encoding="utf-8")
    return path


# ---------------------------------------------------------------- the pipeline


def pipeline(shas: list[str]) -> list[list[str]]:
    """The porttrack commands the demo runs in the port, in order (the no-op verdict is a human's edit)."""
    pin, target = shas[0], shas[-1]
    stamp = f"{UPSTREAM[-1].date}-{target[:7]}"
    return [
        ["queue", "build", "--range", f"{pin[:10]}..{target[:10]}", "--name", "demo"],
        ["audit", "--write"],
        ["report", "sync", "--out", f".agents/sync/{stamp}.md"],
        ["report", "deferral", "--out", f".agents/deferral/{stamp}.md"],
        ["check"],
    ]


def record_human_verdicts(port: Path) -> None:
    """What a person does after the build: settle the entry that only a human can call a no-op."""
    from porttrack.queue import file as queuefile

    qf = queuefile.load(port / "queue" / "demo.toml")
    entry = next(e for e in qf.queue.entries if e.pr == 43000)
    queuefile.set_entry(qf, entry.n, verdict="no-op", verdict_by="human", reason=NO_OP_REASON)
    queuefile.save(qf)


def _porttrack(port: Path, args: list[str], console: Console) -> subprocess.CompletedProcess:
    console.print(f"[bold]$ porttrack {shlex.join(args)}[/bold]")
    env = dict(os.environ, NO_COLOR="1", COLUMNS=str(console.width))  # tables fit this terminal
    proc = subprocess.run([sys.executable, "-m", "porttrack", *args], cwd=port, env=env, capture_output=True, text=True)
    text = (proc.stdout + proc.stderr).rstrip()
    if text:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    return proc


def run_demo(out: Path | None, console: Console) -> int:
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="porttrack-demo-"))
    elif out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder; give the demo a new or empty folder.")
    elif out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty; give the demo a new or empty folder.")
    else:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"--out {out}: cannot create the folder: {e.strerror}.") from None
    out = out.resolve()
    console.print(f"building the demo upstream and port in {out}", markup=False)
    shas = build_upstream(out / "upstream")
    build_port(out / "port", shas)
    port = out / "port"
    for kind in ("sync", "deferral"):  # the team's report folders, where `report --out` writes
        (port / ".agents" / kind).mkdir(parents=True, exist_ok=True)
    steps = pipeline(shas)
    rc = 0
    for i, args in enumerate(steps):
        proc = _porttrack(port, args, console)
        if i == 0 and proc.returncode == 0:
            console.print("(a person marks the #43000 entry no-op in queue/demo.toml; audit keeps human verdicts)")
            record_human_verdicts(port)
        if proc.returncode != 0:
            rc = proc.returncode
            if args[0] != "check":
                console.print(f"demo stopped: `porttrack {shlex.join(args)}` exited {proc.returncode}", markup=False)
                return rc
    console.print()
    console.print(f"upstream: {out / 'upstream'}", markup=False, soft_wrap=True)
    console.print(f"port:     {port}", markup=False, soft_wrap=True)
    console.print(f"queue:    {port / 'queue' / 'demo.toml'}", markup=False, soft_wrap=True)
    for args in steps:
        if args[0] == "report":
            console.print(f"report:   {port / args[-1]}", markup=False, soft_wrap=True)
    console.print(
        "next: add a consumer of take_new_block_ids to the port and run `porttrack check` again.",
        markup=False,
        soft_wrap=True,
    )
    return rc


def report_files(port: Path) -> dict[str, Path]:
    """The reports the demo wrote, by the name their checked-in copies carry under reports/."""
    found = {}
    for kind in ("sync", "deferral"):
        for path in sorted((port / ".agents" / kind).glob("*.md")):
            found[f"{kind}-{path.name}"] = path
    return found
