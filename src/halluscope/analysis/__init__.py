"""Analyses a paper needs beyond the seeds' tables (issue 31), each a report section through report/table.py:
severity-resolved detection, fidelity strata, language parity, judge reliability and mitigation cards.

At the report layer: they read the pipelines' records and the store, and report/sections.py registers them.
"""
