"""The ``seqlab`` command: one module per verb group, each a thin layer over importable functions.

``train`` (:mod:`.train`), ``tag`` and ``eval`` (:mod:`.tag`), ``score`` and ``compare`` (:mod:`.score`),
``classify``, ``explain`` and ``score semeval`` (:mod:`.relation`), ``features`` (:mod:`.features`),
``sweep`` and ``summarize``.
"""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from features.base import FeatureError
from seqlab.cli import features, package, relation, score, serve, tag, train
from seqlab.core.errors import SeqlabError
from seqlab.core.summarize import add_parser as add_summarize_parser
from seqlab.tagging.sweep import add_parser as add_sweep_parser

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
        print(f"seqlab: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seqlab: interrupted (a training run can be continued with --resume)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
