"""Rewrite generators: 'rules' (offline, deterministic) and the LLM generators 'openai/<model>', 'hf/<path>';
'en=<spec>,ru=<spec>,...' gives each language its own (perlang.py)."""

from halluscope.spoken.generate.base import GENERATORS, Generator, plan_rewrites
from halluscope.spoken.generate.llm import LLMGenerator
from halluscope.spoken.generate.perlang import PerLanguageGenerator, create_generator
from halluscope.spoken.generate.rules import RulesGenerator

__all__ = [
    "GENERATORS",
    "Generator",
    "LLMGenerator",
    "PerLanguageGenerator",
    "RulesGenerator",
    "create_generator",
    "plan_rewrites",
]
