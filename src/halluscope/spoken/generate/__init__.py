"""Rewrite generators: 'rules' (offline, deterministic) and the LLM generators 'openai/<model>', 'hf/<path>'."""

from halluscope.spoken.generate.base import GENERATORS, Generator, plan_rewrites
from halluscope.spoken.generate.llm import LLMGenerator
from halluscope.spoken.generate.rules import RulesGenerator

__all__ = ["GENERATORS", "Generator", "LLMGenerator", "RulesGenerator", "plan_rewrites"]
