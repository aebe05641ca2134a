"""The documentation cannot go stale: the site builds with 'mkdocs build --strict' (a missing page, a broken link or
anchor, a bad snippet fails), and every 'halluscope ...' command line in a code block of README.md and of the
hand-written docs pages parses against the real command tree (each command path resolved, its options and
arguments parsed by click as at run time, nothing invoked)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from halluscope.core.errors import HalluscopeError

try:  # typer >= 0.25 carries its own copy of click; the command tree raises that copy's exceptions
    from typer._click import exceptions as click
except ImportError:  # pragma: no cover
    from click import exceptions as click

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "gen" not in p.parts)]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SHELL = {"", "bash", "sh", "shell", "console"}
# placeholders a reader replaces, and what a parse gets instead (every value is a string to click until converted)
NUMBERS = {"N": "2", "S": "1"}


def command_lines(text: str) -> list[str]:
    """The shell lines of the page's code blocks (continuations joined; '$ ' prompts dropped; output skipped)."""
    out = []
    for lang, body in FENCE.findall(text):
        if lang not in SHELL:
            continue
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in joined.splitlines():
            line = line.strip()
            if lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            out.append(line)
    return out


def invocations(line: str) -> list[list[str]]:
    """The argument lists of every 'halluscope' invocation on a shell line (after '&&' / ';', env prefixes)."""
    line = re.sub(r";(\s|$)", r" ;\1", line)
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError:
        return []
    found, current = [], None
    for tok in [*tokens, ";"]:
        if tok in {";", "&&", "||", "|"}:
            if current is not None:
                found.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        elif tok == "halluscope" or tok.endswith("/halluscope"):
            current = []
        elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", tok):  # not an env prefix: another program
            current = None
    return found


def concrete(args: list[str]) -> list[str]:
    """Optional parts '[...]' kept, the first of 'a|b|c' alternatives, '...' dropped, N/S made numbers."""
    joined: list[str] = []
    for tok in args:  # '<audio LM>': one placeholder
        if joined and joined[-1].count("<") > joined[-1].count(">"):
            joined[-1] += " " + tok
        else:
            joined.append(tok)
    out = []
    for tok in joined:
        tok = tok.replace("[", "").replace("]", "")
        if tok in {"", "...", ","}:
            continue
        if "|" in tok and not tok.startswith(("'", '"')):
            tok = tok.split("|")[0]
        out.append(NUMBERS.get(tok, tok))
    return out


@pytest.fixture(scope="module")
def tree():
    import typer

    from halluscope.cli.main import COMMANDS, _parent

    return typer.main.get_command(_parent(COMMANDS))


def parse(tree, args: list[str]) -> None:
    cmd, path, rest = tree, ["halluscope"], list(args)
    while hasattr(cmd, "list_commands"):  # a group
        ctx = cmd.make_context(" ".join(path), [], resilient_parsing=True)
        if getattr(cmd, "default", None) and (not rest or cmd.get_command(ctx, rest[0]) is None):
            rest.insert(0, cmd.default)  # 'halluscope quickstart [RUN]' is 'quickstart spoken [RUN]'
        if not rest:
            raise click.UsageError(f"'{' '.join(path)}' needs a command")
        sub = cmd.get_command(ctx, rest[0])
        if sub is None:
            raise click.UsageError(f"no command '{rest[0]}' under '{' '.join(path)}'")
        cmd, path, rest = sub, [*path, rest.pop(0)], rest
    if "--help" in rest:
        return  # the command path exists; its help is the reference page
    try:
        cmd.make_context(" ".join(path), rest, resilient_parsing=False)  # parses and converts every value; runs nothing
    except HalluscopeError as exc:  # a RUN callback: the documented run does not exist here; make one and parse again
        missing = re.match(r"no run at (\S+) \(", str(exc))
        if missing is None or Path(missing.group(1)).is_absolute() or missing.group(1).startswith("~"):
            raise click.UsageError(str(exc)) from None
        (Path(missing.group(1)) / "halluscope.sqlite").parent.mkdir(parents=True, exist_ok=True)
        (Path(missing.group(1)) / "halluscope.sqlite").touch()
        cmd.make_context(" ".join(path), rest, resilient_parsing=False)


def all_invocations() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        for line in command_lines(page.read_text(encoding="utf-8")):
            for args in invocations(line):
                found.append((f"{page.relative_to(ROOT)}: {line}", args))
    return found


def test_the_readme_and_docs_have_commands_to_check():
    pages = {where.split(":")[0] for where, _ in all_invocations()}
    assert "README.md" in pages and "docs/tutorials/mishap.md" in pages
    assert len(all_invocations()) > 60


def test_every_documented_command_line_parses(tree, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is created, but a callback that looks at paths sees an empty folder
    failures = []
    for where, args in all_invocations():
        try:
            parse(tree, concrete(args))
        except click.ClickException as exc:
            failures.append(f"{where}\n    -> {exc.format_message()}")
    assert not failures, "documented commands that do not parse:\n" + "\n".join(failures)


def test_a_wrong_command_line_is_caught(tree, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(click.UsageError, match="no command 'spokn'"):
        parse(tree, concrete(invocations("halluscope build spokn RUN --corpus demo")[0]))
    with pytest.raises(click.NoSuchOption):
        parse(tree, concrete(invocations("halluscope detect RUN --detecter tfidf  # a typo")[0]))
    with pytest.raises(click.BadParameter, match="valid integer"):
        parse(tree, ["build", "judge", "RUN", "--judge", "openai/m", "--per-cell", "eight"])
    assert concrete(
        invocations(
            "X=1 .venv/bin/halluscope build spoken RUN [--langs en,ru] --corpus FILE|demo "
            "--compare-asr SPEC ...; halluscope report RUN"
        )[0]
    ) == ["build", "spoken", "RUN", "--langs", "en,ru", "--corpus", "FILE", "--compare-asr", "SPEC"]


@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
    reason="mkdocs is not installed in this environment (the 'docs' tools)",
)
def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    site = tmp_path / "site"
    for page in (
        "index.html",
        "reference/cli/index.html",
        "reference/models/index.html",
        "changelog/index.html",
        "tutorials/mishap/index.html",
        "byo/plugins/index.html",
    ):
        assert (site / page).is_file(), page
    cli = (site / "reference/cli/index.html").read_text(encoding="utf-8")
    assert "halluscope mishap validity import" in cli and "--audio-policy" in cli  # generated from the tree
    assert "Keep a Changelog" in (site / "changelog/index.html").read_text(encoding="utf-8")  # CHANGELOG.md included


def test_the_readme_links_point_at_files_of_the_clone():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert local, "the README links into the docs"
    missing = sorted({t for t in local if t and not (ROOT / t).exists()})
    assert not missing, f"README links to files the clone does not have: {missing}"
    assert "../shared" not in text and "STYLE.md" not in text  # paths outside a user's clone
