"""Rewrite generators: 'rules' (offline, deterministic) now; LLM generators plug into the same interface."""

from halluscope.generate.base import GENERATORS, Generator, plan_rewrites
from halluscope.generate.rules import RulesGenerator

__all__ = ["GENERATORS", "Generator", "RulesGenerator", "plan_rewrites"]
