"""Reading one report: its header facts, then each line by the format it is written in."""

from __future__ import annotations

import re
from pathlib import Path

from porttrack.outputs import marks
from porttrack.errors import UserError
from porttrack.queue.importer.model import MAX_REPORT_BYTES, Report, _DATE, _ENUM, _FENCE, _OWN_SECTION, _SECTION, _SYNC
from porttrack.queue.importer.citations import PathResolver
from porttrack.queue.importer.tranche import _table
from porttrack.queue.importer.enumeration import _enumeration
from porttrack.queue.importer.syncreport import _sync_item


def read_report(path: Path, shown: str, resolver: PathResolver | None = None) -> Report:
    if path.exists() and not path.is_file():  # a FIFO or device would block the read
        raise UserError(f"report {shown} is not a regular file.")
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise UserError(
                f"report {shown} is {path.stat().st_size / 2**20:.1f} MiB, past the "
                f"{MAX_REPORT_BYTES // 2**20} MiB a report may have; split it (one file per sync cycle)."
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"report {shown} does not exist.") from None
    except IsADirectoryError:
        raise UserError(f"report {shown} is a folder, not a file.") from None
    except OSError as e:
        raise UserError(f"cannot read report {shown}: {e.strerror}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(f"{shown}:{line}: report is not UTF-8 text.") from None
    return parse(text, shown, resolver)


def parse(text: str, shown: str, resolver: PathResolver | None = None) -> Report:
    """Every entry a report states, in any of the three formats, with its header facts."""
    rep = Report(path=shown, text=text)
    m = _DATE.match(Path(shown).name)
    rep.date = m.group(1) if m else ""
    lines = text.splitlines()
    _header_facts(rep, lines)
    ours = marks.read(text)  # porttrack's own report: the lines it wrote, by short sha
    resolver = resolver or PathResolver(set())
    section: str | None = None
    carry = False  # inside a `## Carry-over` section
    i = 0
    fence: str | None = None  # the open code fence: nothing inside one is an entry, to the end if unclosed
    while i < len(lines):
        line = lines[i]
        f = _FENCE.match(line)
        if fence is not None or f:
            if fence is None:
                fence = f.group(1)  # type: ignore[union-attr]
            elif f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) and not f.group(2).strip():
                fence = None
            i += 1
            continue
        if line.startswith("#"):
            s = _SECTION.match(line)
            carry = line.startswith("## Carry-over") or (carry and line.startswith("### "))
            section = s.group("name") if s else None
            if section is None and _OWN_SECTION.match(line) and (carry or line.startswith("## ")):
                section = "PORT-NOW"
            count = re.search(r"\((\d+)\)\s*$", line)
            if section and count and section not in rep.summary:  # `## INVENTORY (94)`: the report's own count
                rep.summary[section] = int(count.group(1))
            elif ours and section == "PORT-NOW" and count and _OWN_SECTION.match(line):
                # porttrack's own report files PORT-NOW-level entries under these too: its count is the sum
                rep.summary[section] += int(count.group(1))
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|?\s*$", lines[i + 1]):
            i = _table(rep, lines, i, resolver)
            continue
        m = _ENUM.match(line)
        if m:
            i = _enumeration(rep, lines, i, m, resolver)
            continue
        m = _SYNC.match(line)
        if m and section is not None:  # Carry-over and other sections repeat entries; their sections don't say
            item = _sync_item(rep, m, i + 1, section, resolver)
            item.untouched = marks.as_written(ours, m["sha"], line)
            rep.items.append(item)
            rep.formats.add("sync")
        i += 1
    return rep


def _header_facts(rep: Report, lines: list[str]) -> None:
    head = "\n".join(lines[:60])
    m = re.search(r"Tree read:\s*(?:`[^`]*`\s+at\s+)?`([0-9a-f]{7,40})`", head) or re.search(
        r"\*\*Port commit probed:\*\*\s*`([0-9a-f]{7,40})", head
    )
    rep.tree = m.group(1) if m else ""
    m = re.search(r"`([0-9a-f]{7,40}\.\.[0-9a-f]{7,40})`", head) or re.search(
        r"\b([0-9a-f]{7,40}\.\.[0-9a-f]{7,40})\b", head
    )
    rep.range = m.group(1) if m else ""
    m = re.search(r"\bRow\s+`([^`]+)`", head)
    rep.row = m.group(1) if m else ""
    m = re.search(r"^Issue:\s*\[#(\d+)\]", head, re.MULTILINE)
    rep.issue = int(m.group(1)) if m else None
