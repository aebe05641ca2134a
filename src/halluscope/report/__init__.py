"""Reports: one Table type (Markdown, CSV, LaTeX, HTML, JSON), sections contributed by each pipeline, and
'halluscope report RUN' (write_report) for every kind of run."""

from halluscope.report.page import ReportSummary, write_report
from halluscope.report.table import Column, Figure, Table, fmt
from halluscope.report.spoken import collect
from halluscope.report.tables import ReportData

__all__ = ["Column", "Figure", "ReportData", "ReportSummary", "Table", "collect", "fmt", "write_report"]
