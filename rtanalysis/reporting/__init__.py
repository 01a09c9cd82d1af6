"""The written report: :mod:`.pipeline` (ingest → metrics → fit →
:func:`~rtanalysis.reporting.pipeline.write_report`), :mod:`.document` (what the report says, as blocks),
:mod:`.content` (sentences, captions, the power note), :mod:`.template` (Markdown and the jinja2 HTML page)
and :mod:`.cli` (the ``report`` and ``demo`` commands)."""

from .document import TITLE, report_blocks, report_tables
from .pipeline import load_or_fit, run_report, write_report

__all__ = ["TITLE", "load_or_fit", "report_blocks", "report_tables", "run_report", "write_report"]
