"""The '-o KEY=VALUE' options shared by every command that passes settings to a backend or detector."""

from __future__ import annotations

import json

import typer


def parse_kv_options(values: list[str]) -> dict:
    """KEY=VALUE strings to a dict; a value is parsed as JSON when it can be (so 3, true, "cot" work)."""
    options: dict = {}
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--option expects KEY=VALUE, got '{kv}'")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options
