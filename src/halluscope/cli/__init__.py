"""The 'halluscope' command line (one package; each command group in a module of its own)."""

from halluscope.cli.main import app, main

__all__ = ["app", "main"]
