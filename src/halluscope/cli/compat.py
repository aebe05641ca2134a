"""The command classes of every 'halluscope' command: old spellings rewritten to the current vocabulary (with one
deprecation line each on stderr), usage errors printed plainly (never wrapped inside a path or a message), and
--llm-config applied for the duration of one command.

Every command module builds its commands on ``App`` (a typer.Typer whose commands and groups use these classes);
cli/main.py adds each module's ``app``. The deprecated spellings are the table ``RENAMED`` (a flag renamed on every
command that has the new name) and ``legacy_run`` (an option that used to name the run directory, now RUN).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

# old flag -> (new flag, value conversion): applied on every command that takes the new flag and not the old one
RENAMED: dict[str, tuple[str, Optional[Callable[[str], str]]]] = {
    "--max-new-tokens": ("--max-tokens", None),
    "--policy": ("--audio-policy", None),
    "--llm": ("--generator", None),  # the LLM that writes text (rewrites, questions, rubrics)
    # generations per question = 1 + retries
    "--max-attempts": ("--retries", lambda v: str(int(v) - 1) if v.lstrip("-").isdigit() else v),
    "--output": ("--out", None),  # the file or folder a command writes (corpus collect|dedup|translate|...)
}
# '-o KEY=VALUE' keys that are flags now (the detectors read them under these keys, so the flags store them there)
OPTION_FLAGS = {
    "max_tokens": "--max-tokens",
    "audio_policy": "--audio-policy",
    "system": "--system",
    "mitigation": "--mitigation",
    "llm_config": "--llm-config",
}
# '-o KEY=VALUE' keys renamed: old key -> the current one (core.names: one name per role)
OPTION_RENAMED = {"max_new_tokens": "max_tokens"}
LLM_CONFIG_ENV = "HALLUSCOPE_LLM_CONFIG"


def deprecated(old: str, new: str) -> None:
    """One line on stderr: the old spelling still works for this release."""
    from halluscope.core.names import deprecation_line  # not at import: 'halluscope --help' loads only cli

    typer.echo(deprecation_line(old, new), err=True)


@contextmanager
def plain_deprecations() -> Iterator[None]:
    """The library's RenamedWarnings (an old key in a config file, ...) as the CLI's one plain line each."""
    from halluscope.core.names import RenamedWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", RenamedWarning)
        shown = warnings.showwarning

        def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
            if issubclass(category, RenamedWarning):
                typer.echo(str(message), err=True)
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


def legacy_run(
    option: str,
    *,
    position: str = "first",
    default: Optional[Callable[[dict[str, str], list[str]], Optional[str]]] = None,
) -> Callable:
    """Mark a command whose run directory used to be ``option`` (e.g. '--out DIR'): its value becomes the RUN
    positional (the first or the last one). ``default(options, positionals)``: the run an old-style call meant when
    it named no ``option`` (None: it is a current call)."""

    def mark(command: Callable) -> Callable:
        command.__legacy_run__ = (option, position, default)  # type: ignore[attr-defined]
        return command

    return mark


def _arity(cmd: Any) -> dict[str, int]:
    """Option name -> how many values follow it, for every option of ``cmd``."""
    out: dict[str, int] = {}
    for p in cmd.params:
        if getattr(p, "param_type_name", "") != "option":
            continue
        n = 0 if (p.is_flag or p.count) else p.nargs
        for name in (*p.opts, *p.secondary_opts):
            out[name] = n
    return out


def _scan(cmd: Any, args: list[str], extra: dict[str, int]) -> tuple[list[int], dict[str, tuple[int, int]]]:
    """Indexes of the positional tokens, and name -> (index, length) of each given option (``extra``: names the
    command does not declare itself, e.g. deprecated ones, with their arity)."""
    arity = {**_arity(cmd), **extra}
    positional: list[int] = []
    given: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--":
            positional += range(i + 1, len(args))
            break
        name = tok.split("=", 1)[0]
        if tok.startswith("-") and name in arity:
            n = 0 if "=" in tok else arity[name]
            given.setdefault(name, (i, 1 + n))
            i += 1 + n
            continue
        if not tok.startswith("-") or tok == "-":
            positional.append(i)
        i += 1
    return positional, given


def _value(args: list[str], at: tuple[int, int]) -> str:
    i, n = at
    return args[i].split("=", 1)[1] if n == 1 and "=" in args[i] else args[i + 1]


def rewrite(cmd: Any, args: list[str], path: str) -> list[str]:
    """``args`` in the current vocabulary; one deprecation line per old spelling found."""
    args = list(args)
    names = set(_arity(cmd))
    for old, (new, convert) in RENAMED.items():
        if new not in names or old in names:
            continue
        _, given = _scan(cmd, args, {old: 1})
        if old in given:
            i, n = given[old]
            value = _value(args, given[old])
            args[i : i + n] = [new, convert(value) if convert else value]
            deprecated(f"{old} on '{path}'", new + (" (one less: retries after the first try)" if convert else ""))
    legacy = getattr(cmd.callback, "__legacy_run__", None)
    if legacy is not None:
        option, position, default = legacy
        positional, given = _scan(cmd, args, {} if option in names else {option: 1})
        run: Optional[str] = None
        if option in given and option not in names:
            run = _value(args, given[option])
            i, n = given[option]
            del args[i : i + n]
            deprecated(f"'{option} DIR' on '{path}'", f"the positional RUN ('{path} DIR ...')")
        elif default is not None:
            values = {k: _value(args, v) for k, v in given.items() if v[1] == 2 or "=" in args[v[0]]}
            run = default(values, [args[j] for j in positional])
            if run is not None:
                deprecated(f"'{path}' without RUN", f"'{path} RUN ...' (this call's run: {run})")
        if run is not None:
            positional, _ = _scan(cmd, args, {})
            if position == "first":
                args.insert(positional[0] if positional else 0, run)
            else:
                args.insert(len(args) if "--" in args or not positional else positional[-1] + 1, run)
    return args


class Command(TyperCommand):
    """A typer command with the deprecated spellings rewritten and --llm-config scoped to the command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, rewrite(self, args, ctx.command_path))

    def invoke(self, ctx: Any) -> Any:
        with plain_deprecations():
            return self._invoke(ctx)

    def _invoke(self, ctx: Any) -> Any:
        path = ctx.params.get("llm_config")
        if path is None:
            return super().invoke(ctx)
        from halluscope.backends.llm import load_llm_config

        load_llm_config(path)  # a missing or malformed file stops here, before any work
        before = os.environ.get(LLM_CONFIG_ENV)
        os.environ[LLM_CONFIG_ENV] = str(path)  # every backend this command makes reads it (the library default)
        try:
            return super().invoke(ctx)
        finally:
            if before is None:
                os.environ.pop(LLM_CONFIG_ENV, None)
            else:
                os.environ[LLM_CONFIG_ENV] = before


class Group(TyperGroup):
    """A typer group whose usage errors are printed the plain way (click's, one unwrapped line per message):
    the rich panel typer draws would break a long path across lines."""

    def main(
        self,
        args: Any = None,
        prog_name: Optional[str] = None,
        complete_var: Optional[str] = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from typer.core import _main

        return _main(
            self,
            args=args,
            prog_name=prog_name,
            complete_var=complete_var,
            standalone_mode=standalone_mode,
            windows_expand_args=windows_expand_args,
            rich_markup_mode=None,
            **extra,
        )


class DefaultGroup(Group):
    """A group that runs its ``default`` subcommand when the first argument names none ('halluscope quickstart
    [RUN]' is 'halluscope quickstart spoken [RUN]')."""

    default = "spoken"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


class App(typer.Typer):
    """typer.Typer whose commands are ``Command``s and whose groups are ``Group``s (one registration style)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", Group)
        kwargs.setdefault("rich_markup_mode", "rich")
        kwargs.setdefault("no_args_is_help", True)
        super().__init__(**kwargs)

    def command(self, name: Optional[str] = None, **kwargs: Any) -> Callable:  # type: ignore[override]
        kwargs.setdefault("cls", Command)
        return super().command(name, **kwargs)
