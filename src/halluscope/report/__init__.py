"""Reports: one Table type (Markdown, CSV, LaTeX, HTML, JSON), the page machinery, the registry of the sections each
pipeline contributes (report/sections.py, the one place they are listed), and 'halluscope report RUN'
(write_report), the same page for every kind of run."""

from halluscope.report.page import ReportSummary, write_report
from halluscope.report.table import Column, Figure, Table, fmt

__all__ = ["Column", "Figure", "ReportSummary", "Table", "fmt", "write_report"]
