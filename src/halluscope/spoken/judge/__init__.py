"""LLM quality judges (seed 000, section 3.4 and App. A.2): stratified sample, any number of judges,
cross-judge agreement (Table 9) and mean quality by type x severity x language (Table 10)."""

from halluscope.spoken.judge.prompt import JUDGE_PARAMS, judge_messages, parse_judgement
from halluscope.spoken.judge.run import JudgeResult, build_judge
from halluscope.spoken.judge.sample import Sample, stratified_sample
from halluscope.spoken.judge.tables import mean_rows

__all__ = [
    "JUDGE_PARAMS",
    "JudgeResult",
    "Sample",
    "build_judge",
    "judge_messages",
    "mean_rows",
    "parse_judgement",
    "stratified_sample",
]
