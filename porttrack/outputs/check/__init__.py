"""check: the CI gate (docs/design.md §6, §7, §11). Re-verify a queue against the port tree and list findings.

A finding names a stable code, a severity, the entry, the file:line to look at
and a sentence saying what to do. The engine returns data; formats.py renders it.
Nothing here writes: a check can run on any checkout, any number of times.

The package: `findings` (the code catalogue and the result), `context` (what every producer
reads), one module per family of findings (`verdicts`, `gate_checks`, `citations`, `imported`,
`rows`), `acks` (acknowledgements and filters) and `run`, whose registry lists the producers
in the order they run.
"""

from porttrack.outputs.check.acks import filter_findings
from porttrack.outputs.check.citations import parse_citation
from porttrack.outputs.check.context import _QueueIndex
from porttrack.outputs.check.findings import CODES, CheckResult, Finding, Reanchor, finding
from porttrack.outputs.check.imported import reanchor_write
from porttrack.outputs.check.run import run

__all__ = [
    "CODES",
    "CheckResult",
    "Finding",
    "Reanchor",
    "_QueueIndex",
    "filter_findings",
    "finding",
    "parse_citation",
    "reanchor_write",
    "run",
]
