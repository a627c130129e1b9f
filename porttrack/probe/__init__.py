"""Probe the port: count many symbols (and regexes) in one pass, judge each zero by a positive control.

model (results, names), listing (which files), store (the cache tables), scan (grep first, parse
where it matters, count), judge and render. See scan's docstring for how a scan stays fast.
"""

from porttrack.probe.judge import judge, probe
from porttrack.probe.model import Count, Hit, Probe, Row, Scan, Tree, variants
from porttrack.probe.render import render
from porttrack.probe.classify import POOL_MIN_BYTES
from porttrack.probe.files import compile_regex
from porttrack.probe.scan import config_options, scan

__all__ = [
    "POOL_MIN_BYTES",
    "Count",
    "Hit",
    "Probe",
    "Row",
    "Scan",
    "Tree",
    "compile_regex",
    "config_options",
    "judge",
    "probe",
    "render",
    "scan",
    "variants",
]
