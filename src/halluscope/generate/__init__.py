"""Rewrite generators: 'rules' (offline, deterministic) and the LLM generators 'openai/<model>', 'hf/<path>'."""

from halluscope.generate.base import GENERATORS, Generator, plan_rewrites
from halluscope.generate.llm import LLMGenerator
from halluscope.generate.rules import RulesGenerator

__all__ = ["GENERATORS", "Generator", "LLMGenerator", "RulesGenerator", "plan_rewrites"]
