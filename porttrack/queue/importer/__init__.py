"""queue import: read a team's hand-written sync reports into a queue (docs/import.md).

Three formats are read, each into the same `Item` (one upstream commit as one report
states it): enumeration lines (`` - `sha` vllm#N subject — PORT-NOW: reason `` with
indented continuation paragraphs such as `**CORRECTED …**` notes), tranche tables
(`| # | upstream | vllm# | label | holds? | evidence |`), and the entry lines that
`porttrack report sync` writes. The vocabulary map in `model` is the one place a report's
words become porttrack's verdicts. Merging keeps every reading: the latest report's wins,
the earlier ones go to the entry's `history`, and nothing is dropped for being unreadable.

The package: `model` (the vocabulary and what a report is made of), one module per format
(`tranche`, `enumeration`, `syncreport`), `citations`, `read` (one report) and `merge` (reports
into a queue, and the summary printed).
"""

from porttrack.queue.importer.merge import ImportResult, import_reports, render
from porttrack.queue.importer.model import MAX_REPORT_BYTES, parse_label
from porttrack.queue.importer.read import parse, read_report

__all__ = ["MAX_REPORT_BYTES", "ImportResult", "import_reports", "parse", "parse_label", "read_report", "render"]
