"""CLI commands of the closed-form scorers, registered under 'halluscope score'."""

from __future__ import annotations

import typer


def register(score_app: typer.Typer) -> None:
    """Add the closed-form 'score' subcommands to the given typer app."""
