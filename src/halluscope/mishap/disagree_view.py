"""The annotation app's disagreements view (seed 001, 3.3): GET /api/disagreements (token-gated like every /api/
path) answers the judge-human disagreements per category with the rubric and evidence, read from the store at
each request (labels saved in this session count at once)."""

from __future__ import annotations

from pathlib import Path

PATH = "/api/disagreements"


def reply(run_dir: str | Path):
    """(status, JSON body, content type) for the app's handler."""
    from halluscope.core.webapp import json_reply
    from halluscope.mishap.disagreements import disagreements, summary

    rows = disagreements(run_dir)
    return json_reply({"summary": summary(rows, run_dir), "disagreements": rows})
