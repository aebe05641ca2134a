"""Tables (Markdown, CSV, JSON) and a self-contained HTML report with plots."""

from halluscope.report.tables import ReportData, collect
from halluscope.report.write import write_report

__all__ = ["ReportData", "collect", "write_report"]
