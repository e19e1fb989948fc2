"""The classes every `memvault` command and group is built on (``App`` makes them).

Two things Typer's own classes get wrong for this CLI:

- Help shows a flag (``--json``, ``--recall``, ``--help``) with a value, ``<bool>``, as
  if it took one: here flags are listed bare.
- A note's text often starts with ``-``: frontmatter (``---``), a list item
  (``- ship it``). Click reads any argument starting with ``-`` as an option, so such
  markdown could only follow ``--``. Here an argument is an option only if it is
  spelled like one: ``--name``, ``--name=value`` or short flags without spaces (``-f``,
  ``-fFILE``). Anything else (``---\\ntags: [x]\\n---``, ``- item``, ``-- done``) is text,
  and ``--`` still ends the options. A one-word argument like ``-x`` stays an option
  (an unknown one is an error); give such text after ``--``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import typer
from typer._click.core import Context, Parameter
from typer._click.formatting import HelpFormatter
from typer._click.parser import _OptionParser, _ParsingState
from typer.core import TyperCommand, TyperGroup, TyperOption
from typer.models import CommandFunctionType

_LONG_OPTION = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*(=.*)?", re.DOTALL)
_SHORT_OPTIONS = re.compile(r"-[A-Za-z0-9]\S*")


def spelled_as_option(arg: str) -> bool:
    """Whether an argument starting with ``-`` is an option (else it is text)."""
    return bool(_LONG_OPTION.fullmatch(arg) or _SHORT_OPTIONS.fullmatch(arg))


class _Parser(_OptionParser):
    """Click's parser, taking arguments not spelled as options as positional text."""

    def _process_opts(self, arg: str, state: _ParsingState) -> None:
        if self.allow_interspersed_args and arg.startswith("-") and not spelled_as_option(arg):
            state.largs.append(arg)
            return
        super()._process_opts(arg, state)


def _bare_flags(params: Sequence[Parameter]) -> None:
    """Flags take no value: no metavar in help (Typer would print ``<bool>``)."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""


class Command(TyperCommand):
    def make_parser(self, ctx: Context) -> _OptionParser:
        parser = _Parser(ctx)
        for param in self.get_params(ctx):
            param.add_to_parser(parser, ctx)
        return parser

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        _bare_flags(self.get_params(ctx))
        super().format_help(ctx, formatter)


class Group(TyperGroup):
    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        _bare_flags(self.get_params(ctx))
        super().format_help(ctx, formatter)


class App(typer.Typer):
    """A Typer app whose groups are ``Group`` and whose commands are ``Command``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", Group)
        super().__init__(**kwargs)

    def command(
        self, name: str | None = None, **kwargs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        kwargs.setdefault("cls", Command)
        return super().command(name, **kwargs)
