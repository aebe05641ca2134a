"""Every command of the real typer app uses the same names for the same roles (docs/getting-started.md,
'Command-line vocabulary'): read from the click tree the app builds, not from the help text; the help's own
examples use current spellings only; and the library calls each role what the flag calls it (an AST scan of src/)."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from pathlib import Path

import pytest
import typer

import halluscope
from halluscope.cli.compat import OPTION_FLAGS, OPTION_RENAMED, RENAMED
from halluscope.cli.main import app

# python parameter name -> the one flag a role has on every command that takes it
ROLES = {
    "max_tokens": "--max-tokens",
    "audio_policy": "--audio-policy",
    "mitigation": "--mitigation",
    "system": "--system",
    "retries": "--retries",
    "llm_config": "--llm-config",
    "option": "--option",
    "json_out": "--json",
    "model": "--model",
    "judge": "--judge",
    "generator": "--generator",
    "detector": "--detector",
    "out": "--out",
    "langs": "--langs",
    "seed": "--seed",
    "threads": "--threads",
    "concurrency": "--concurrency",
}
# flags whose python name differs by need: '--option' is a list of options; a flag named like a keyword, a
# builtin or the json module ('--from', '--import', '--format', '--json') cannot be its argument's name
PYTHON_NAMES = {"option": "--option", "judge_option": "--option", "target": "--to"}  # --to: the pair of --from
# roles whose help is written once in cli/options.py: the same text wherever they appear
SHARED_HELP = ("audio_policy", "mitigation", "system", "retries", "llm_config", "option", "json_out", "max_tokens")
# the options that name a model that is called; a command taking one takes --llm-config too
MODEL_FLAGS = {"--judge", "--llm", "--model", "--generator", "--detector", "--faithful", "--filter-llm"}
NOT_CALLED = {
    "mishap validity import",  # --model there names who wrote the imported responses
    "mishap disagreements",
}  # --judge there picks whose stored verdicts are compared
ONE_OF_SEVERAL = {"mishap all"}  # several models in one command: -o would not say whose options they are
# where --out is a file or folder the command writes that is not a run
OUT_IS_A_FILE = {
    "run closedform",
    "mishap examples",
    "mishap sources",
    "mishap validity report",
    "corpus collect",
    "corpus dedup",
    "corpus translate",
    "corpus release",
    "corpus rehydrate",
}
# the commands with a --json summary
JSON = {
    "build spoken",
    "build judge",
    "build realworld",
    "detect",
    "report",
    "project",
    "score asr",
    "score halluaudio",
    "score aha",
    "score yesno",
    "run closedform",
    "corpus check",
    "models",
    "mishap questions",
    "mishap answer",
    "mishap judge",
}


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
    assert {
        "build spoken",
        "build judge",
        "detect",
        "report",
        "run closedform",
        "score asr",
        "mishap answer",
        "mishap validity judge",
        "quickstart spoken",
        "view",
        "models",
    } <= set(COMMANDS)


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


# Every role of the help tree (issue 24 item 6): (its one spelling: a flag, or RUN for the positional run
# directory; the python names it has at the command; spellings that must appear nowhere in the tree). Several
# flags name a model by what it does (--judge, --generator, --detector, ...; MODEL_FLAGS); none of them is --llm.
TREE_ROLES = {
    "run directory": (
        "RUN",
        {"run"},
        {"--run", "--run-dir", "--out-dir", "--output-dir", "--dir", "--store", "--report-dir"},
    ),
    "models": ("--model", {"model"}, {"--llm", "--models", "--model-name", "--spec"}),
    "output": ("--out", {"out"}, {"--output", "--output-dir", "--out-dir", "--output-file", "--outfile"}),
    "languages": ("--langs", {"langs"}, {"--languages", "--language", "--lang-codes"}),
    "seed": ("--seed", {"seed"}, {"--random-seed", "--random-state", "--rng-seed"}),
    "threads": ("--threads", {"threads"}, {"--cpu-threads", "--num-threads", "--n-threads", "--jobs", "-j"}),
    "tokens": ("--max-tokens", {"max_tokens"}, {"--max-new-tokens", "--tokens", "--max-length", "--max-len"}),
    "retries": ("--retries", {"retries"}, {"--max-attempts", "--attempts", "--max-retries"}),
    "audio policy": ("--audio-policy", {"audio_policy"}, {"--policy", "--window-policy"}),
    "concurrency": ("--concurrency", {"concurrency"}, {"--max-concurrency", "--parallel", "--workers-per-model"}),
}


def _all_spellings(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}


@pytest.mark.parametrize("role", sorted(TREE_ROLES))
def test_every_role_has_one_spelling_across_the_whole_tree(role):
    flag, names, banned = TREE_ROLES[role]
    seen = 0
    for path, cmd in COMMANDS.items():
        for p in cmd.params:
            if p.name not in names:
                continue
            seen += 1
            if flag == "RUN":
                assert p.param_type_name == "argument" and p.metavar == "RUN", f"{path}: {role} is {p.opts}"
            else:
                assert p.param_type_name == "option" and p.opts[0] == flag, f"{path}: {role} is {p.opts}"
        assert not _all_spellings(cmd) & banned, f"{path}: {role} spelled {_all_spellings(cmd) & banned}"
    assert seen, f"no command of the tree has the role {role}: the table is stale"


# the library names of the roles' old or other spellings: no function argument or class field of src/ has one,
# but where listed with the reason (a different role that happens to share a word, or a third party's name)
LIBRARY_BANNED = {
    "max_attempts",
    "max_new_tokens",
    "policy",
    "languages",
    "language_codes",
    "cpu_threads",
    "num_threads",
    "n_threads",
    "max_concurrency",
    "out_dir",
    "output_dir",
    "llm",
    "llm_spec",
}
LIBRARY_ALLOWED = {
    ("backends/audio_lm/_cascade.py", "llm"): "the cascade's text LLM, the part after '+' in 'cascade/<asr>+<llm>'",
    ("mishap/quickstart.py", "llm"): "the quickstart's one LLM: it writes the questions and rubrics and judges",
    ("report/plots.py", "languages"): "the languages a run holds, read from the store (not the --langs setting)",
    ("spoken/report/speech.py", "languages"): "the languages a run holds, read from the store",
    ("spoken/report/tables.py", "languages"): "the languages a run holds, read from the store",
}


def _library_names() -> list[tuple[str, int, str]]:
    """(module, line, name) of every function argument and annotated class field of src/halluscope."""
    root = Path(halluscope.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                found += [(rel, node.lineno, arg.arg) for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            elif isinstance(node, ast.ClassDef):
                found += [
                    (rel, b.lineno, b.target.id)
                    for b in node.body
                    if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)
                ]
    return found


def test_the_library_calls_each_role_what_the_flag_calls_it():
    names = _library_names()
    assert len(names) > 1000  # the scan reads the package
    bad = [
        f"{rel}:{line} {name}"
        for rel, line, name in names
        if name in LIBRARY_BANNED and (rel, name) not in LIBRARY_ALLOWED
    ]
    assert not bad, "old or second spellings of a role in the library:\n" + "\n".join(bad)
    unused = set(LIBRARY_ALLOWED) - {(rel, name) for rel, _, name in names}
    assert not unused, f"allowed names that are gone (drop them): {unused}"


def test_the_scan_finds_an_old_spelling():
    tree = ast.parse("def f(run_dir, *, policy='chunk'):\n    pass\nclass C:\n    max_attempts: int = 3\n")
    args = [a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.kwonlyargs]
    fields = [b.target.id for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.body]
    assert {*args, *fields} & LIBRARY_BANNED == {"policy", "max_attempts"}


# spellings an example must not use: the renamed flags, and '-o KEY=' for a setting that is a flag now
OLD_OPTION_KEYS = (*OPTION_FLAGS, *OPTION_RENAMED)
OLD_IN_EXAMPLES = re.compile(
    "|".join(
        [
            *(re.escape(old) + r"(?![\w-])" for old in RENAMED),
            *(r"-o\s+" + re.escape(k) + "=" for k in OLD_OPTION_KEYS),
            r"--mitigation\s+'?\w+&",
        ]
    )
)


def old_spellings(text: str) -> list[str]:
    """The deprecated spellings in the 'halluscope ...' lines of ``text``."""
    return [m.group(0) for line in text.splitlines() if "halluscope " in line for m in OLD_IN_EXAMPLES.finditer(line)]


def test_the_old_spelling_check_finds_each_kind():
    assert old_spellings("Example: halluscope detect RUN -o max_new_tokens=8 -o system=x --policy chunk") == [
        "-o max_new_tokens=",
        "-o system=",
        "--policy",
    ]
    assert old_spellings("halluscope mishap answer RUN --mitigation 'aad&alpha=1' --audio-policy chunk") == [
        "--mitigation 'aad&"
    ]
    assert old_spellings("halluscope corpus dedup c.jsonl --output d.jsonl") == ["--output"]


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_examples_use_current_spellings(path):
    cmd = COMMANDS[path]
    texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
    found = [m.group(0) for t in texts for m in OLD_IN_EXAMPLES.finditer(t)]  # anywhere in the help, not only examples
    assert not found, f"{path}: its help shows old spellings {found}"


def test_readme_and_docs_examples_use_current_spellings():
    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    # the vocabulary table lists the old spellings on purpose, as does the design record
    skip = {"docs/getting-started.md", "docs/DESIGN-AS-BUILT.md", "CHANGELOG.md"}
    found = {
        str(p.relative_to(root)): old_spellings(p.read_text(encoding="utf-8"))
        for p in pages
        if str(p.relative_to(root)) not in skip
    }
    assert not {k: v for k, v in found.items() if v}


# the papers by name in user-facing text (docs/glossary.md): 'seed 000' alone is the spec's file number
SPEC_NUMBER = re.compile(r"seed 00[012]|\(00[012][,)]")
PAPERS = re.compile(r"Lost in Speech|MISHAP-Bench|HalluAudio")


def unnamed_spec_numbers(text: str) -> bool:
    return bool(SPEC_NUMBER.search(text)) and not PAPERS.search(text)


def test_the_paper_check_finds_a_bare_spec_number():
    assert unnamed_spec_numbers("Accuracy per domain (seed 002).")
    assert not unnamed_spec_numbers("MISHAP-Bench (seed 001)") and not unnamed_spec_numbers("seeds 0, 1, 2")


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_names_the_papers(path):
    cmd = COMMANDS[path]
    texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
    assert not [t[:120] for t in texts if unnamed_spec_numbers(t)], path


def test_report_titles_and_messages_name_the_papers():
    """Every string of src/ that is not a docstring (titles, captions, messages, table cells) names the paper
    beside its spec number; comments and docstrings may cite 'seed 000' (the developer's reference)."""
    root = Path(halluscope.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        bad += [
            f"{path.relative_to(root)}:{n.lineno} {n.value[:80]!r}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and id(n) not in docs
            and unnamed_spec_numbers(n.value)
        ]
    for path in (*root.rglob("*.js"), *root.rglob("*.html")):
        bad += [
            f"{path.relative_to(root)}:{i}"
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if unnamed_spec_numbers(line)
        ]
    assert not bad, "user-facing text with a bare spec number:\n" + "\n".join(bad)
