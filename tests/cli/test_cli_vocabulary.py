"""Every command of the real typer app uses the same names for the same roles (README 'Command-line vocabulary'):
read from the click tree the app builds, not from the help text."""

from __future__ import annotations

import builtins
import keyword

import pytest
import typer

from halluscope.cli.compat import RENAMED
from halluscope.cli.main import app

# python parameter name -> the one flag a role has on every command that takes it
ROLES = {"max_tokens": "--max-tokens", "audio_policy": "--audio-policy", "mitigation": "--mitigation",
         "system": "--system", "retries": "--retries", "llm_config": "--llm-config", "option": "--option",
         "json_out": "--json", "model": "--model", "judge": "--judge", "generator": "--generator",
         "detector": "--detector", "out": "--out", "langs": "--langs", "seed": "--seed", "threads": "--threads",
         "concurrency": "--concurrency"}
# flags whose python name differs by need: '--option' is a list of options; a flag named like a keyword, a
# builtin or the json module ('--from', '--import', '--format', '--json') cannot be its argument's name
PYTHON_NAMES = {"option": "--option", "judge_option": "--option", "target": "--to"}  # --to: the pair of --from
# roles whose help is written once in cli/options.py: the same text wherever they appear
SHARED_HELP = ("audio_policy", "mitigation", "system", "retries", "llm_config", "option", "json_out", "max_tokens")
# the options that name a model that is called; a command taking one takes --llm-config too
MODEL_FLAGS = {"--judge", "--llm", "--model", "--generator", "--detector", "--faithful", "--filter-llm"}
NOT_CALLED = {"mishap validity import",  # --model there names who wrote the imported responses
              "mishap disagreements"}  # --judge there picks whose stored verdicts are compared
ONE_OF_SEVERAL = {"mishap all"}  # several models in one command: -o would not say whose options they are
# where --out is a file or folder the command writes that is not a run
OUT_IS_A_FILE = {"run closedform", "mishap examples", "mishap sources", "mishap validity report"}
# the commands with a --json summary
JSON = {"build spoken", "build judge", "build realworld", "detect", "report", "project", "score asr",
        "score halluaudio", "score aha", "score yesno", "run closedform", "corpus check", "models",
        "mishap questions", "mishap answer", "mishap judge"}


def _commands(group, prefix: str = "") -> dict[str, object]:
    out = {}
    for name, cmd in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(cmd, "commands"):
            out.update(_commands(cmd, path + " "))
        else:
            out[path] = cmd
    return out


COMMANDS = _commands(typer.main.get_command(app))


def _options(cmd) -> dict[str, object]:
    return {p.name: p for p in cmd.params if p.param_type_name == "option"}


def test_the_tree_has_every_command_group():
    assert {"build spoken", "build judge", "detect", "report", "run closedform", "score asr", "mishap answer",
            "mishap validity judge", "quickstart spoken", "view", "models"} <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_one_name_per_role(path):
    opts = _options(COMMANDS[path])
    for name, flag in ROLES.items():
        if name in opts:
            assert opts[name].opts[0] == flag, f"{path}: {name} is {opts[name].opts}"
    primary = {o.opts[0] for o in opts.values()}
    assert not primary & set(RENAMED), f"{path} still has an old spelling as a flag: {primary & set(RENAMED)}"
    assert "--store" not in primary and "--report-dir" not in primary, path


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_a_run_is_always_the_positional_RUN(path):
    cmd = COMMANDS[path]
    runs = [p for p in cmd.params if p.name == "run"]
    for p in runs:
        assert p.param_type_name == "argument" and p.metavar == "RUN", f"{path}: run is {p!r}"
    if "--out" in {o for p in _options(cmd).values() for o in p.opts}:
        assert path in OUT_IS_A_FILE, f"{path}: --out should be the positional RUN"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_model_calling_command_takes_llm_config(path):
    flags = {o for p in _options(COMMANDS[path]).values() for o in p.opts}
    if flags & MODEL_FLAGS and path not in NOT_CALLED:
        assert "--llm-config" in flags, f"{path} calls {flags & MODEL_FLAGS} but has no --llm-config"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_model_calling_command_takes_options(path):
    flags = {o for p in _options(COMMANDS[path]).values() for o in p.opts}
    if flags & MODEL_FLAGS and path not in NOT_CALLED | ONE_OF_SEVERAL:
        assert {"--option", "-o"} <= flags, f"{path} calls {flags & MODEL_FLAGS} but takes no -o"


def test_json_where_a_summary_is_printed():
    missing = {p for p in JSON if "json_out" not in _options(COMMANDS[p])}
    assert not missing


def test_shared_roles_have_one_help_text():
    for name in SHARED_HELP:
        helps = {path: _options(c)[name].help for path, c in COMMANDS.items() if name in _options(c)}
        assert len(helps) >= 2 and len(set(helps.values())) == 1, (name, helps)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_the_function_argument_is_named_as_its_flag(path):
    """One name per role from the flag to the function argument (--generator is 'generator', not 'llm')."""
    for name, p in _options(COMMANDS[path]).items():
        flag = p.opts[0]
        bare = flag.lstrip("-").replace("-", "_")
        shadows = keyword.iskeyword(bare) or hasattr(builtins, bare) or bare == "json"
        assert bare == name or shadows or PYTHON_NAMES.get(name) == flag, f"{path}: {name} is {flag}"


def test_the_run_directory_is_the_positional_run_everywhere():
    for path, cmd in COMMANDS.items():
        for p in cmd.params:
            if p.param_type_name == "argument" and p.name == "run":
                assert p.metavar == "RUN", path
