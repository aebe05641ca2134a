"""Lost in Speech's (seed 000) report sections: the spoken build's core tables (Table 1, ASR error, Table 7, audio
durations, Table 2), zero-shot Table 3, paired tests, the real-world split, and the paper's tables as printed.
Each is a section builder registered in halluscope.report.sections, built from the store alone."""

from typing import Any

__all__ = ["ReportData", "collect"]


def __getattr__(name: str) -> Any:
    if name == "collect":
        from halluscope.spoken.report.spoken import collect

        return collect
    if name == "ReportData":
        from halluscope.spoken.report.tables import ReportData

        return ReportData
    raise AttributeError(f"module 'halluscope.spoken.report' has no attribute '{name}'")
