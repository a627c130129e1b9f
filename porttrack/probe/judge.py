"""Judge a scanned symbol: present, absent (a zero its positive control vouches for), untrusted or incomplete."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from porttrack.probe.listing import under as _under
from porttrack.probe.model import Count, Probe, Scan
from porttrack.probe.scan import scan as _scan


def judge(scan: Scan, symbol: str, control: str | None = None) -> Probe:
    """Judge one scanned symbol by its positive control (explicit, or chosen from the same scan)."""
    if symbol not in scan.counts:
        raise ValueError(f"{symbol!r} was not part of this scan")
    count = scan.counts[symbol]
    ccount: Count | None = None
    if control is not None:
        ccount = scan.counts.get(control) or scan.control_counts.get(control)
        how = "explicit (--control)"
        if ccount is not None and ccount.form != count.form:
            how += f", searched as a {ccount.form} while the probe is a {count.form}"
    else:
        how = "none found"
        for other, oc in scan.counts.items():
            if other != symbol and oc.form == count.form and oc.code > 0:
                control, ccount = other, oc
                how = f"automatic: another {'symbol' if oc.form == 'word' else 'regex'} of this probe, found in the same scope"
                break
        else:
            auto = scan.auto_control.get(count.form)
            if auto is not None and auto in scan.control_counts:
                control, ccount, how = auto, scan.control_counts[auto], scan.auto_control_how[count.form]

    where = ", ".join(scan.scope) or "(no scope)"
    unread = [i for i in scan.incomplete if _under(i.split(": ")[0], scan.scope)]
    unread_tests = [i for i in scan.incomplete if i not in unread and _under(i.split(": ")[0], scan.tests_scope)]
    notes = []
    status = "present"
    if count.code > 0:
        if unread:
            notes.append(f"{len(unread)} file(s) in the scope could not be read, so the count may be low")
    elif unread:
        status = "incomplete"
        notes.append(f"{len(unread)} file(s) in the scope could not be read: " + "; ".join(unread[:3]))
    else:
        why = _scope_problem(scan)
        if why:
            status = "untrusted"
            notes.append(why)
        elif ccount is None:
            status = "untrusted"
            if control is not None:
                notes.append(f"control {control!r} was not searched in this scan")
            else:
                notes.append(f"no positive control: nothing else in {where} was found to prove the scan sees code")
        elif ccount.code == 0:
            status = "untrusted"
            notes.append(f"control {control!r} has no code hit in {where} either")
        else:
            status = "absent"
            raw_only = sorted({h.path for h in count.hits if h.why == "no grammar" and _under(h.path, scan.scope)})
            if raw_only:
                notes.append(
                    f"raw hits in {len(raw_only)} file(s) no grammar reads, not counted as code: "
                    + ", ".join(raw_only[:3])
                )
    if unread_tests:
        notes.append(f"{len(unread_tests)} file(s) in the tests scope could not be read, so the tests count may be low")
    reason = "; ".join(notes)
    return Probe(
        symbol=symbol,
        form=count.form,
        scope=scan.scope,
        tree=str(scan.tree),
        count=count,
        control=control,
        control_count=ccount,
        control_how=how,
        status=status,
        reason=reason,
        files_scanned=scan.files_scanned,
        incomplete=list(scan.incomplete),
        commit=scan.tree.commit,
        dirty=scan.tree.dirty,
    )


def _scope_problem(scan: Scan) -> str:
    """Why a zero in this scope proves nothing, or '' when the scope looks sound."""
    tree = str(scan.tree)
    if not scan.scope:
        return "the scope is empty: no paths were given"
    if scan.missing_scopes:
        names = ", ".join(repr(s) for s in scan.missing_scopes)
        return f"scope path {names} does not exist in {tree} (misspelled?)"
    if scan.scope_files == 0:
        if scan.excluded and not scan.hidden:
            return f"all {scan.excluded} file(s) under the scope were excluded by the exclude globs"
        if scan.hidden:
            return (
                f"all file(s) under the scope lie in hidden folders ({scan.hidden}) or were excluded ({scan.excluded})"
            )
        if scan.binary:
            return f"the scope holds only binary files ({len(scan.binary)})"
        return f"the scope {', '.join(scan.scope)} holds no files in {tree}"
    return ""


def probe(
    root: Path, symbols: Iterable[str], *, control: str | None = None, regex: bool = False, **scan_kwargs
) -> list[Probe]:
    """Scan once for all symbols (and the control), then judge each."""
    symbols = list(dict.fromkeys(symbols))
    asked = symbols + ([control] if control and control not in symbols else [])
    s = _scan(root, regexes=asked, **scan_kwargs) if regex else _scan(root, asked, **scan_kwargs)
    return [judge(s, sym, control) for sym in symbols]
