"""Acknowledged findings and the config's filters."""

from __future__ import annotations

import datetime as dt

from porttrack.errors import UserError
from porttrack.model import SEVERITIES
from porttrack.outputs.check.findings import CODES, Finding, finding
from porttrack.outputs.check.context import _Ctx


def apply_acks(ctx: _Ctx, found: list[Finding], today: dt.date):
    """Drop findings an unexpired [[ack]] covers; expired and unused acks become findings themselves."""
    kept: list[Finding] = []
    acked: list[tuple[Finding, str]] = []
    used = [False] * len(ctx.q.acks)
    for i, a in enumerate(ctx.q.acks):  # refuse a bad ack by its line before it covers anything
        if a.code not in CODES:
            raise UserError(f"{ctx.qrel}:{ctx.ack_line(i)}: ack code {a.code!r} is no check code ({', '.join(CODES)}).")
        if a.expires is None:
            raise UserError(
                f"{ctx.qrel}:{ctx.ack_line(i)}: [[ack]] {a.code} needs an expires date (expires = YYYY-MM-DD)."
            )
        if isinstance(a.expires, dt.datetime):  # TOML date-times are dates too, but cannot be compared with today
            raise UserError(
                f"{ctx.qrel}:{ctx.ack_line(i)}: [[ack]] {a.code} expires must be a date (YYYY-MM-DD), "
                f"not the date-time {a.expires.isoformat()}."
            )
    for f in found:
        hit = next((i for i, a in enumerate(ctx.q.acks) if _matches(a, f)), None)
        if hit is None:
            kept.append(f)
            continue
        used[hit] = True
        a = ctx.q.acks[hit]
        if a.expires is not None and a.expires < today:  # (None was refused above)
            kept.append(f)  # an expired ack stops covering: the finding shows again
        else:
            acked.append((f, a.reason))
    out = []
    for i, a in enumerate(ctx.q.acks):
        line = ctx.ack_line(i)
        who = (
            f"[[ack]] {a.code}"
            + (f" entry {a.entry}" if a.entry is not None else "")
            + (f" gate {a.gate}" if a.gate else "")
        )
        chk = f"ack {i + 1} ({who})"
        ctx.checks.add(chk)
        if a.expires is not None and a.expires < today:
            out.append(
                finding(
                    "ack-expired",
                    f"{who} expired on {a.expires.isoformat()} (reason was: {a.reason}).",
                    "Fix what it acknowledged, or renew it with a new expires date and a current reason.",
                    ctx.qrel,
                    line,
                    entry=a.entry,
                    gate=a.gate,
                    check=chk,
                )
            )
        elif not used[i]:
            out.append(
                finding(
                    "ack-unused",
                    f"{who} matches no finding any more.",
                    "Delete this acknowledgement: what it covered is resolved.",
                    ctx.qrel,
                    line,
                    entry=a.entry,
                    gate=a.gate,
                    check=chk,
                )
            )
    return kept, acked, out


def _matches(a, f: Finding) -> bool:
    return a.code == f.code and (a.entry is None or a.entry == f.entry) and (not a.gate or a.gate == f.gate)


def filter_findings(found: list[Finding], ignore: list[str], min_severity: str) -> tuple[list[Finding], int]:
    floor = SEVERITIES.index(min_severity) if min_severity in SEVERITIES else 0
    kept = [f for f in found if f.code not in ignore and SEVERITIES.index(f.severity) >= floor]
    return kept, len(found) - len(kept)
