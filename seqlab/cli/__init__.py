"""The ``seqlab`` command: one module per verb group, each a thin layer over importable functions.

``train`` (:mod:`.train`), ``tag`` and ``eval`` (:mod:`.tag`), ``convert`` (:mod:`.convert`), ``score`` and
``compare`` (:mod:`.score`), ``classify``, ``explain`` and ``score semeval`` (:mod:`.relation`), ``features``
(:mod:`.features`), ``package``, ``inspect`` and ``models`` (:mod:`.package`), ``export`` (:mod:`.export`),
``serve`` (:mod:`.serve`), ``sweep`` (:mod:`.sweep`), ``summarize`` (:mod:`.summarize`), ``report``
(:mod:`.report`) and ``distill label`` (:mod:`.distill`), each listed once in :data:`VERBS`.
"""
from __future__ import annotations

import argparse
import copy
import errno
import io
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from features.base import FeatureError
from seqlab.core.errors import SeqlabError
from seqlab.core.progress import Interrupted, signal_of

log = logging.getLogger("seqlab")


@dataclass(frozen=True)
class Verb:
    """A verb of the ``seqlab`` command: the module of :mod:`seqlab.cli` whose ``add_parsers(sub)`` adds it (with
    the other verbs of its group), and the function of that module it runs (None: each of its sub-commands,
    ``score conll``, ``features brown``, runs its own)."""

    module: str
    handler: str | None


#: Every verb, in the order ``seqlab --help`` lists them: one line per verb, the one place a verb is registered. A
#: command line naming a verb builds (and so imports) only its module's parsers; any other (``--help``, a misspelt
#: verb) builds them all.
VERBS: dict[str, Verb] = {
    "train": Verb("train", "cmd_train"),
    "eval": Verb("tag", "cmd_eval"),
    "tag": Verb("tag", "cmd_tag"),
    "convert": Verb("convert", "cmd_convert"),
    "score": Verb("score", None),
    "compare": Verb("score", None),
    "classify": Verb("relation", "classify"),
    "explain": Verb("relation", "explain"),
    "features": Verb("features", None),
    "package": Verb("package", "cmd_package"),
    "inspect": Verb("package", "cmd_inspect"),
    "calibrate": Verb("package", "cmd_calibrate"),
    "models": Verb("package", "cmd_models"),
    "export": Verb("export", "cmd_export"),
    "serve": Verb("serve", "cmd_serve"),
    "sweep": Verb("sweep", "cmd_sweep"),
    "summarize": Verb("summarize", "cmd_summarize"),
    "report": Verb("report", "cmd_report"),
    "distill": Verb("distill", None),
}


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with each option's default shown where its help does not already say it."""

    def _format_action(self, action: argparse.Action) -> str:
        if not action.help and _shows_default(action):
            action = copy.copy(action)
            action.help = "default: %(default)s"
        return super()._format_action(action)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if _shows_default(action) and "default" not in text:
            text += " (default: %(default)s)"
        return text


def _shows_default(action: argparse.Action) -> bool:
    """Whether an option has a default worth saying: not None, a flag's False, an empty list or a suppressed one."""
    default = action.default
    return (bool(action.option_strings) and default is not None and not isinstance(default, bool)
            and default is not argparse.SUPPRESS and default not in ([], ""))


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help, and its sub-commands' (their parsers are made of its class), shows the
    options' defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The ``seqlab`` command's parser: every verb's, or, for a ``verb`` of :data:`VERBS`, only its module's
    (``seqlab tag`` then imports no other verb's code)."""
    import importlib

    p = _Parser(prog="seqlab", description="Sequence labelling: train, evaluate, tag, score.")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True)
    modules = [VERBS[verb].module] if verb in VERBS else list(dict.fromkeys(v.module for v in VERBS.values()))
    for module in modules:
        importlib.import_module(f"seqlab.cli.{module}").add_parsers(sub)
    return p


def _verb(argv: Sequence[str]) -> str | None:
    """The verb a command line names (its first item that is no option: ``-v`` takes no value), or None when
    there is none or help is asked for before it."""
    for item in argv:
        if item in ("-h", "--help"):
            return None
        if not item.startswith("-"):
            return item
    return None


def setup_logging(verbose: bool) -> None:
    """Timestamped INFO logging (DEBUG with ``verbose``) for seqlab's programs."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    if not verbose:  # gensim logs every loaded file's "lifecycle event" at INFO; seqlab says what it loaded
        logging.getLogger("gensim").setLevel(logging.WARNING)


#: Verbs whose process ends without Python's teardown when run as a program (``seqlab tag``, ``python -m seqlab
#: eval``): once their output is flushed and closed, freeing torch's ~1,000 modules one by one only delays the exit,
#: by 0.4-0.9 s of the 1.7 s a one-line ``seqlab tag`` took (``python -c "import torch"``: 1.72-2.04 s wall, and
#: 1.16-1.41 s ending with ``os._exit``). A data-parallel training rank (``WORLD_SIZE`` > 1) that finished its work
#: ends so too, its process group destroyed: gloo's threads and the tensors they held are then not torn down with the
#: interpreter, where a rank under load was seen to abort ("terminate called without an active exception") after
#: the run was done. A rank that failed exits as before (the launcher names the rank that failed first).
QUICK_EXIT = frozenset({"tag", "eval"})


def main(argv: Sequence[str] | None = None) -> int:
    """The ``seqlab`` program: run the command line ``argv`` (default: this process's) and return its exit status.
    Run as the program (no ``argv``), a verb of :data:`QUICK_EXIT`, or a training rank, ends the process itself
    after flushing its output and logs, without the interpreter's teardown."""
    code = _run(sys.argv[1:] if argv is None else list(argv))
    if argv is None and _quick_exit(_verb(sys.argv[1:]), code):
        _exit_now(code)
    return code


def _quick_exit(verb: str | None, code: int) -> bool:
    """Whether a process that ran ``verb`` as the program, with exit status ``code``, ends without the
    interpreter's teardown."""
    world = os.environ.get("WORLD_SIZE", "1")
    return verb in QUICK_EXIT or (verb == "train" and code == 0 and world.isdigit() and int(world) > 1)


def _exit_now(code: int) -> None:
    """End the process with ``code`` once standard output, standard error and the log handlers are flushed
    (``os._exit`` runs no ``atexit`` handler and frees no module: every file these verbs write is closed by then)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left (``seqlab tag FILE | head``): as a broken pipe while tagging
        _silence_stdout()
    except OSError as err:  # a full disk at the last write: said, as any other failed write is
        print(f"seqlab: error: {os_error_text(err)}", file=sys.stderr)
        code = 2
    logging.shutdown()
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


def _run(argv: list[str]) -> int:
    _stand_in_for_closed_streams()
    p = parser(_verb(argv))
    args = p.parse_args(argv)
    if getattr(args, "port", None) is not None and not 0 <= args.port <= 65535:
        p.error(f"argument --port: expected a port from 0 to 65535 (0: any free one), got {args.port}")
    setup_logging(args.verbose)
    try:
        return args.func(args)
    except (SeqlabError, FeatureError) as err:  # FeatureError: bad input found by features/ (a vector file)
        print(f"seqlab: error: {_rank()}{err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM during training: what was lost and how to go on
        from seqlab.cli.train import LAUNCHED

        if not (os.environ.get(LAUNCHED) or os.environ.get("RANK", "0") != "0"):  # one process speaks
            text = str(err) if isinstance(err, Interrupted) else "interrupted"
            print(f"\nseqlab: {text}", file=sys.stderr)
        return 128 + signal_of(err)
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as err:  # a full disk, a read-only folder, ...: the files written atomically before are intact
        log.debug("the OSError's traceback", exc_info=True)  # shown with -v
        if err.filename is None:
            _silence_stdout()  # a failed write to standard output fails again when Python flushes it at exit
        print(f"seqlab: error: {_rank()}{os_error_text(err)}", file=sys.stderr)
        return 2


def _rank() -> str:
    """``"rank R of N: "`` in a process torchrun started (each rank reports its own error), else ``""``."""
    size = os.environ.get("WORLD_SIZE", "1")
    return f"rank {os.environ.get('RANK', '?')} of {size}: " if size.isdigit() and int(size) > 1 else ""


def os_error_text(err: OSError) -> str:
    """An ``OSError`` in one line: the file (or standard output) and the system's reason."""
    where = err.filename if err.filename is not None else "standard output"
    reason = err.strerror or str(err)
    if err.errno == errno.ENOSPC:
        reason += "; nothing was half-written: files are written whole or not at all"
    return f"{where}: {reason}"


class _ClosedStream(io.TextIOBase):
    """Stands in for a standard stream that seqlab was started without (``<&-``, ``>&-``; Python makes it None):
    reading or writing it is an ``OSError`` naming it, one error line instead of a traceback. Standard error, the
    one place left to say anything, takes writes and drops them."""

    def __init__(self, name: str, *, drop_writes: bool = False) -> None:
        super().__init__()
        self.stream_name, self.drop_writes = name, drop_writes

    def _closed(self) -> OSError:
        return OSError(errno.EBADF, "closed when seqlab started (redirect it instead: < FILE, > FILE, > /dev/null)",
                       self.stream_name)

    def isatty(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> str:
        raise self._closed()

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise self._closed()

    def write(self, text: str) -> int:
        if self.drop_writes:
            return len(text)
        raise self._closed()

    def fileno(self) -> int:
        raise self._closed()


def _stand_in_for_closed_streams() -> None:
    """Give each standard stream seqlab was started without a :class:`_ClosedStream`."""
    if sys.stdin is None:
        sys.stdin = _ClosedStream("standard input")
    if sys.stdout is None:
        sys.stdout = _ClosedStream("standard output")
    if sys.stderr is None:
        sys.stderr = _ClosedStream("standard error", drop_writes=True)


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit raises nothing more."""
    if sys.stdout is not sys.__stdout__:  # replaced (captured in a test): nothing is flushed at exit
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
