"""The CLI's configuration: the files as the server reads them (:mod:`..system.configfiles`), the
``--config`` overrides, and the services built from them for one command."""

from __future__ import annotations

import argparse
import asyncio
import functools
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from traitlets import TraitError
from traitlets.config import Config, Configurable
from traitlets.config.loader import ArgumentError, KVArgParseConfigLoader

from ..errors import InvalidRequest
from ..system.configfiles import load_file_config, root_dir

if TYPE_CHECKING:  # the app imports jupyter_server, which takes seconds: only commands that need it pay
    from ..app import GpuEnvApp
    from ..services import Library

T = TypeVar("T")


def configurable() -> tuple[type[Configurable], ...]:
    """The classes whose options the CLI reads: ``c.GpuEnvApp.*`` and each installed backend's
    (``c.LocalBackend.*``, a site's own)."""
    from ..app import GpuEnvApp

    return (GpuEnvApp, *GpuEnvApp.classes)


def override_config(assignments: Sequence[str]) -> Config:
    """``Class.trait=value`` pairs, parsed by each trait as on the server's command line."""
    if not assignments:
        return Config()
    classes = configurable()
    known = {cls.__name__: cls for cls in classes}
    for item in assignments:
        key, sep, _ = item.partition("=")
        section, dot, trait = key.partition(".")
        if not sep or not dot:
            raise InvalidRequest(
                f"--config {item!r}: write it as Class.option=value, e.g. GpuEnvApp.job_dir=jobs"
            )
        cls = known.get(section)
        if cls is None or trait not in cls.class_traits(config=True):
            choices = ", ".join(f"{name}.*" for name in known)
            raise InvalidRequest(f"--config {item!r}: unknown option {key} (options are {choices})")
    try:
        return KVArgParseConfigLoader([f"--{a}" for a in assignments], classes=list(classes)).load_config()
    except (ArgumentError, SystemExit) as e:
        raise InvalidRequest(f"--config: {e}") from None


def make_app(config: Config) -> GpuEnvApp:
    from ..app import GpuEnvApp

    try:
        return GpuEnvApp(config=config)
    except TraitError as e:
        raise InvalidRequest(f"Invalid configuration: {e}") from None


class Session:
    """The configured app and its services for one command; ``run`` runs the command and cleans up.

    Only what the CLI itself started is stopped: the job store and the backends' handles. Jobs it
    submitted keep running (a server, or a later command, follows them).
    """

    def __init__(self, args: argparse.Namespace) -> None:
        config = load_file_config()
        config.merge(override_config(getattr(args, "config", None) or []))
        self.app = make_app(config)
        self.root = root_dir(getattr(args, "root", None), config)
        try:
            self.library = self.app.build_library(self.root)
        except ValueError as e:  # a configuration the services refuse (an unknown backend)
            raise InvalidRequest(str(e)) from None
        self._closed = False

    def run(self, command: Callable[[Library], Awaitable[T]]) -> T:
        async def main() -> T:
            try:
                return await command(self.library)
            finally:
                await self.aclose()

        return asyncio.run(main())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.library.jobs.stop()

    def close(self) -> None:
        """For a session whose ``run`` never ran (a command that stopped early)."""
        if not self._closed:
            asyncio.run(self.aclose())

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def command_parser(sub: Any, name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """The sub-command ``name`` that runs ``func``, described by its docstring, with the session options."""
    doc = terminal_text(func.__doc__)
    parser: argparse.ArgumentParser = sub.add_parser(name, help=doc, description=doc)
    parser.set_defaults(func=func)
    add_session_options(parser)
    return parser


def terminal_text(doc: str | None) -> str | None:
    """A docstring as a terminal shows it: reST's ``literal`` as `literal`, roles (:func:`x`) as `x`."""
    if doc is None:
        return None
    doc = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", doc)
    return re.sub(r"``(.+?)``", r"`\1`", doc, flags=re.S)


def verb_parsers(sub: Any, noun: str, summary: str) -> Any:
    """``jupyter gpu-env NOUN VERB ...``: the sub-command ``noun``, whose verbs are added to what this
    returns with :func:`command_parser`. Everything that runs is a noun with the same verbs (list, show,
    cancel, rerun, logs where they apply), so that one grammar serves them all."""
    parser: argparse.ArgumentParser = sub.add_parser(noun, help=summary, description=summary)
    return parser.add_subparsers(dest="verb", metavar="VERB", required=True)


def say_older(name: str, now: str) -> None:
    """The note an older spelling prints on standard error (standard output stays the scripts')."""
    print(
        f"note: `jupyter gpu-env {name}` is now `jupyter gpu-env {now}`; the old spelling will go in a "
        "later release",
        file=sys.stderr,
    )


def older_spelling(
    sub: Any, name: str, now: str, func: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """The command ``name`` as it was spelt before the noun-first grammar: it still runs ``func``, after
    a note on standard error saying what it is called ``now`` (standard output is left as it was, for
    the scripts that read it)."""

    @functools.wraps(func)
    def noted(args: argparse.Namespace) -> int:
        say_older(name, now)
        return func(args)

    noted.__doc__ = f"(older spelling of `{now}`) {func.__doc__ or ''}"
    return command_parser(sub, name, noted)


def run_command(args: argparse.Namespace, command: Callable[[Library], Awaitable[T]]) -> T:
    """Run ``command`` with the services configured as ``args`` say, then clean up."""
    with Session(args) as session:
        return session.run(command)


def with_services(
    command: Callable[[Library, argparse.Namespace], Awaitable[int]],
) -> Callable[[argparse.Namespace], int]:
    """``command(services, args)`` as argparse calls a command: run with the services configured as
    ``args`` say, then cleaned up (:func:`run_command`). Its docstring stays the command's help."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        return run_command(args, lambda services: command(services, args))

    return run


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """Options of every command that works on environments, images or jobs."""
    group = parser.add_argument_group("configuration")
    group.add_argument(
        "--root",
        metavar="DIR",
        help="the server's root directory: notebooks and job folders are relative to it "
        "(default: c.ServerApp.root_dir if configured, else the root of the running Jupyter server that "
        "serves the current directory, else the current directory)",
    )
    group.add_argument(
        "--config",
        metavar="CLASS.OPTION=VALUE",
        action="append",
        default=[],
        help="override a configuration option, e.g. GpuEnvApp.user_env_dir=~/envs (repeatable; "
        "otherwise read from jupyter_server_config.py/.json on the Jupyter config path, like the server)",
    )
    group.add_argument("-v", "--verbose", action="store_true", help="show the tools' own output")
