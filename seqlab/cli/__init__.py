"""The ``seqlab`` command: one module per verb group, each a thin layer over importable functions.

``train`` (:mod:`.train`), ``tag`` and ``eval`` (:mod:`.tag`), ``score`` and ``compare`` (:mod:`.score`),
``classify``, ``explain`` and ``score semeval`` (:mod:`.relation`), ``features`` (:mod:`.features`),
``package`` and ``inspect`` (:mod:`.package`), ``export`` (:mod:`.export`), ``serve`` (:mod:`.serve`),
``sweep`` and ``summarize``.
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from typing import Sequence

from features.base import FeatureError
from seqlab.cli import export, features, package, relation, score, serve, tag, train
from seqlab.core.errors import SeqlabError
from seqlab.apps.summarize import add_parser as add_summarize_parser
from seqlab.apps.sweep import add_parser as add_sweep_parser

log = logging.getLogger("seqlab")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seqlab", description="Sequence labelling: train, evaluate, tag, score.")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True)
    train.add_parser(sub)
    tag.add_parsers(sub)
    score_formats = score.add_parsers(sub)
    relation.add_parsers(sub, score_formats)  # classify, explain, score semeval
    features.add_parser(sub)
    package.add_parsers(sub)
    export.add_parser(sub)
    serve.add_parser(sub)
    add_sweep_parser(sub)
    add_summarize_parser(sub)
    return p


def setup_logging(verbose: bool) -> None:
    """Timestamped INFO logging (DEBUG with ``verbose``) for seqlab's programs."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    if not verbose:  # gensim logs every loaded file's "lifecycle event" at INFO; seqlab says what it loaded
        logging.getLogger("gensim").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    setup_logging(args.verbose)
    try:
        return args.func(args)
    except (SeqlabError, FeatureError) as err:  # FeatureError: bad input found by features/ (a vector file)
        print(f"seqlab: error: {_rank()}{err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        hint = " (a training run can be continued with --resume)" if args.command == "train" else ""
        print(f"\nseqlab: interrupted{hint}", file=sys.stderr)
        return 130
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
