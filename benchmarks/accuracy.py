"""Benchmark: audit's first-pass verdicts against hand labels of a real upstream/port pair.

    python benchmarks/accuracy.py --labels FILE.jsonl --port DIR --upstream DIR [--config FILE]
                                  [--paths P ...] [--range PIN..TARGET] [--misses]

The port is cloned into a temporary folder (nothing is written into DIR). Without
--config, the config is what `porttrack init --upstream DIR` writes, with `[upstream] paths`
narrowed to the label set's paths: --paths, else the pathspec of the `git ... log ... -- PATHS`
line in the README beside the label file. The queue covers --range, else the oldest labelled
commit's parent up to the newest labelled commit. Every entry is audited, and each labelled
commit's entry-level verdict is scored as the labels' README says:

- verdict classes: `ignore` is `no-op`; `owned` and `blocked` are `real-gap`;
- exact: class == label; dangerous: label real-gap, verdict says no work;
- false work: verdict says work (real-gap, owned, blocked), label is not real-gap;
- ported recall: labelled `ported` that audit calls `ported`;
- untrusted, unclassified or a missing entry are misses (never exact, never dangerous).

It prints the confusion table and one line: `exact=A/N dangerous=D falsework=F ported=P/Q`.
An `also` label (a second acceptable one) counts as exact, and a verdict of that class is
neither dangerous nor false work.

    python benchmarks/accuracy.py --all --port DIR --upstream DIR [--labels-dir DIR] [--misses] [--whole]

scores every set in benchmarks/labels/ (paths from its sets.toml) and any --labels-dir,
one line per set, then the totals. With --whole, each queue takes init's proposed paths joined
to the set's, so an entry holds every mirrored file of its commit, as the readers judged it.
Where labels carry `readers` (how two independent readers reached them), a last line gives the
human reference: how often the two readers agreed, and how often audit is exact on the entries
they agreed on and on those a third reader settled.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from porttrack import audit, config as config_mod, init  # noqa: E402
from porttrack.queue import build as queuebuild  # noqa: E402
from porttrack.queue import file as queuefile  # noqa: E402

LABELS = ("ported", "real-gap", "surface-absent", "inert", "no-op")
CLASS = {"ignore": "no-op", "owned": "real-gap", "blocked": "real-gap"}
WORK = {"real-gap", "owned", "blocked"}
NO_WORK = {"ported", "surface-absent", "inert", "no-op", "ignore"}
# A label file's `readers` field (benchmarks/labels/README.md): how the label was reached.
READERS = {"two readers agreed": "agreed", "disagreed; settled by a third reader": "settled"}


def verdict_class(verdict: str | None) -> str:
    if verdict is None:
        return "missing"
    return CLASS.get(verdict, verdict)


def score(labels: list[dict], verdicts: dict[str, str]) -> dict:
    """Scores exactly as the labels' README says; `verdicts` maps a full sha to audit's verdict."""
    exact = dangerous = falsework = ported = ported_of = 0
    confusion: Counter[tuple[str, str]] = Counter()
    readers: Counter[str] = Counter()  # "agreed" / "settled" -> entries, "agreed_exact" / ... -> audit exact
    for lab in labels:
        v = verdicts.get(lab["sha"])
        cls = verdict_class(v)
        also = set(lab.get("also", []))  # a second acceptable label: exact, neither dangerous nor false work
        confusion[(lab["label"], cls)] += 1
        hit = cls == lab["label"] or cls in also
        exact += hit
        if (how := READERS.get(lab.get("readers", ""))) is not None:
            readers[how] += 1
            readers[f"{how}_exact"] += hit
        dangerous += lab["label"] == "real-gap" and v in NO_WORK and cls not in also
        falsework += v in WORK and lab["label"] != "real-gap" and "real-gap" not in also
        if lab["label"] == "ported":
            ported_of += 1
            ported += v == "ported"
    return dict(
        n=len(labels),
        exact=exact,
        dangerous=dangerous,
        falsework=falsework,
        ported=ported,
        ported_of=ported_of,
        confusion=confusion,
        **{f"readers_{k}": readers[k] for k in ("agreed", "settled", "agreed_exact", "settled_exact")},
    )


def readers_line(s: dict) -> str | None:
    """How often the two independent readers agreed, beside how often audit matched the label, on
    the entries whose `readers` field says how they were labelled: the human reference for the
    targets. None when no entry says."""
    agreed, settled = s.get("readers_agreed", 0), s.get("readers_settled", 0)
    if not agreed + settled:
        return None

    def share(a: int, b: int) -> str:
        return f"{a} of {b} ({100 * a / b:.0f} %)" if b else f"{a} of {b}"

    return (
        f"readers: two independent readers agreed on {share(agreed, agreed + settled)} entries labelled twice; "
        f"audit is exact on {share(s['readers_agreed_exact'], agreed)} they agreed on, "
        f"and on {share(s['readers_settled_exact'], settled)} a third reader settled"
    )


def summary_line(s: dict) -> str:
    return f"exact={s['exact']}/{s['n']} dangerous={s['dangerous']} falsework={s['falsework']} ported={s['ported']}/{s['ported_of']}"


def confusion_table(s: dict) -> str:
    cols = [*LABELS, "untrusted", "unclassified", "missing"]
    cols = [c for c in cols if c in LABELS or any(k[1] == c for k in s["confusion"])]
    width = max(len(c) for c in cols) + 1
    out = ["label \\ audit".ljust(16) + "".join(c.rjust(width) for c in cols) + "  total".rjust(width)]
    for lab in LABELS:
        row = [s["confusion"].get((lab, c), 0) for c in cols]
        out.append(lab.ljust(16) + "".join(str(x).rjust(width) for x in row) + str(sum(row)).rjust(width))
    return "\n".join(out)


def readme_paths(labels_file: Path) -> list[str]:
    """The pathspec after `--` of the `git ... log ...` line in the README beside the labels."""
    readme = labels_file.parent / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if re.search(r"\bgit\b.*\blog\b.*\s--\s", line):
            return [p for p in shlex.split(line.split(" -- ", 1)[1]) if not p.startswith("-")]
    return []


def default_range(upstream: Path, shas: list[str]) -> str:
    """The oldest labelled commit's parent up to the newest, by upstream history order."""
    order = subprocess.run(
        ["git", "-C", str(upstream), "rev-list", "--no-walk=sorted", "--topo-order", *shas],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"{order[-1]}^..{order[0]}"


def prepare(port: Path, upstream: Path, config: Path | None, paths: list[str], tmp: Path, whole: bool = False) -> Path:
    """A clone of the port with its config; returns the config path. With `whole`, the paths are
    init's proposal joined to `paths`: every mirrored file of a commit is in its entry."""
    work = tmp / "port"
    if (port / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--shared", str(port), str(work)], check=True)
    else:
        raise SystemExit(f"accuracy: --port {port} is not a git work tree.")
    cfg_path = work / config_mod.CONFIG_NAME
    if config is not None:
        cfg_path.write_text(config.read_text(encoding="utf-8"), encoding="utf-8")
    else:
        text = init.propose(work, upstream).text
        import tomlkit

        doc = tomlkit.parse(text)
        doc["upstream"]["paths"] = sorted(set(paths) | set(doc["upstream"]["paths"])) if whole else paths
        doc["upstream"]["repo"] = str(upstream.resolve())
        cfg_path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return cfg_path


def run_set(labels: list[dict], args, paths: list[str], rev_range: str | None, name: str = "") -> dict:
    """Build the set's queue on a clone of the port, audit every entry, score the labelled ones."""
    rev_range = rev_range or default_range(args.upstream, [lab["sha"] for lab in labels])
    with tempfile.TemporaryDirectory(prefix="porttrack-accuracy-") as tmp:
        cfg_path = prepare(args.port, args.upstream, args.config, paths, Path(tmp), args.whole)
        cfg = config_mod.load_config(cfg_path)
        t0 = time.perf_counter()
        qpath, n = queuebuild.build(cfg, rev_range, name="accuracy")
        t1 = time.perf_counter()
        qf = queuefile.load(qpath)
        result = audit.audit(cfg, qf.queue)
        t2 = time.perf_counter()
    by_n = {e.n: e.sha for e in qf.queue.entries}
    verdicts = {by_n[r.n]: r.verdict for r in result.results if r.part is None}
    rules = {by_n[r.n]: (r.rule, r.reason) for r in result.results if r.part is None}
    s = score(labels, verdicts)
    s["by_rule"] = Counter()
    for lab in labels:
        rule = rules.get(lab["sha"], ("missing", ""))[0]
        cls = verdict_class(verdicts.get(lab["sha"]))
        s["by_rule"][(rule, cls == lab["label"] or cls in lab.get("also", []))] += 1
    prefix = f"{name}: " if name else ""
    print(
        f"{prefix}queue: {n} entries over {rev_range} in paths {' '.join(cfg.upstream_paths)} "
        f"(built in {t1 - t0:.1f} s); audit of all in {t2 - t1:.1f} s; port tree {result.tree[:12]}"
    )
    if not name:
        for line in getattr(result, "notices", []) or []:
            print(f"audit: {line}")
        all_v = Counter(r.verdict for r in result.results if r.part is None)
        lab_v = Counter(verdicts.get(lab["sha"], "missing") for lab in labels)
        print("verdicts, labelled entries: " + ", ".join(f"{k} {v}" for k, v in lab_v.most_common()))
        print("verdicts, whole queue:      " + ", ".join(f"{k} {v}" for k, v in all_v.most_common()))
        print(confusion_table(s))
    if args.misses:
        for lab in labels:
            v = verdicts.get(lab["sha"])
            cls = verdict_class(v)
            if cls != lab["label"] and cls not in lab.get("also", []):
                rule, reason = rules.get(lab["sha"], ("", ""))
                print(f"  {prefix}miss {lab['sha'][:10]} label {lab['label']} audit {v} [{rule}] {reason[:160]}")
    return s


def label_sets(folders: list[Path]) -> list[tuple[str, Path, list[str]]]:
    """(name, label file, upstream paths) of every set in `folders`, paths from each folder's sets.toml;
    a set with `paths_of = "OTHER"` takes the paths of the set OTHER (two draws from one population)."""
    import tomllib

    out = []
    for folder in folders:
        manifest = folder / "sets.toml"
        sets = tomllib.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
        for f in sorted(folder.glob("*.jsonl")):
            entry = sets.get(f.stem, {})
            paths = sets.get(entry.get("paths_of", f.stem), {}).get("paths") or readme_paths(f)
            if not paths:
                raise SystemExit(f"accuracy: no paths for set {f.stem}: add [{f.stem}] paths = [...] to {manifest}.")
            out.append((f.stem, f, paths))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", type=Path, help="one label file (JSON Lines)")
    ap.add_argument("--all", action="store_true", help="every set in benchmarks/labels/ (and --labels-dir)")
    ap.add_argument("--labels-dir", type=Path, action="append", default=[], help="another folder of sets, with --all")
    ap.add_argument("--port", type=Path, required=True)
    ap.add_argument("--upstream", type=Path, required=True)
    ap.add_argument("--config", type=Path)
    ap.add_argument("--paths", nargs="+", help="upstream paths (default: the label README's pathspec)")
    ap.add_argument("--range", dest="rev_range", help="queue range PIN..TARGET (default: around the labelled commits)")
    ap.add_argument("--misses", action="store_true", help="also list each entry whose class differs from its label")
    ap.add_argument(
        "--whole",
        action="store_true",
        help="build each queue with init's proposed paths joined to the set's (whole commits, as the readers judged)",
    )
    args = ap.parse_args(argv)

    if args.all:
        totals: Counter[str] = Counter()
        by_rule: Counter[tuple[str, bool]] = Counter()
        lines = []
        sets = label_sets([HERE / "labels", *args.labels_dir])
        width = max([len("total"), *(len(name) for name, _, _ in sets)])
        for name, f, paths in sets:
            labels = [json.loads(ln) for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
            s = run_set(labels, args, paths, None, name)
            totals.update({k: v for k, v in s.items() if k not in ("confusion", "by_rule")})
            by_rule.update(s["by_rule"])
            lines.append(f"{name:<{width}} {summary_line(s)}")
        print("\n".join(lines))
        print(f"{'total':<{width}} {summary_line(totals)}")
        if (line := readers_line(totals)) is not None:
            print(line)
        if args.misses:
            print("rule that decided: right/all on the labelled entries")
            for rule in sorted({r for r, _ in by_rule}, key=lambda r: -(by_rule[(r, True)] + by_rule[(r, False)])):
                right, wrong = by_rule[(rule, True)], by_rule[(rule, False)]
                print(f"  {rule:<22} {right}/{right + wrong}")
        return 0
    if args.labels is None:
        raise SystemExit("accuracy: give --labels FILE or --all.")
    labels = [json.loads(ln) for ln in args.labels.read_text(encoding="utf-8").splitlines() if ln.strip()]
    paths = args.paths or readme_paths(args.labels)
    if not paths and args.config is None:
        raise SystemExit("accuracy: no --paths given and no `git log -- PATHS` line in the labels' README.")
    s = run_set(labels, args, paths, args.rev_range)
    print(summary_line(s))
    if (line := readers_line(s)) is not None:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
