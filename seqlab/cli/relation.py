"""CLI verbs for relation classification, kept apart from the tagger's :mod:`seqlab.cli`.

``seqlab eval`` dispatches here for run directories with ``task: relation`` (``seqlab train``
reads such configs with the relation loader and trainer, through the tagger's verb);
``seqlab classify``, ``seqlab explain`` and ``seqlab score semeval`` are relation-only verbs.
Each calls a plain importable function.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Iterable, Iterator

from seqlab.core.errors import SeqlabError


def is_relation_config(path: str | Path | None) -> bool:
    """Whether a YAML config (or a run directory's config.yaml) declares ``task: relation``."""
    from seqlab.relation.config import TASK, config_task

    if path is None:
        return False
    path = Path(path)
    if path.is_dir():
        path = path / "config.yaml"
    return path.is_file() and config_task(path) == TASK


def evaluate(args: argparse.Namespace) -> int:
    """``seqlab eval RUN_DIR FILE`` for a relation run: the official scorer's report."""
    from seqlab.relation.predict import evaluate_file

    sys.stdout.write(evaluate_file(args.model_dir, args.file, output=args.output, batch_size=args.batch_size))
    return 0


def _input_lines(file: str | None, utf8_lines: Callable) -> tuple[Iterable[str], str]:
    if file in (None, "-"):
        raw = getattr(sys.stdin, "buffer", None)
        return (sys.stdin if raw is None else utf8_lines(raw, "<stdin>")), "<stdin>"
    path = Path(file)
    if not path.is_file():
        raise SeqlabError(f"{path}: no such file")
    return _file_lines(path, utf8_lines), str(path)


def _file_lines(path: Path, utf8_lines: Callable) -> Iterator[str]:
    with open(path, "rb") as handle:
        yield from utf8_lines(handle, str(path))


def classify(args: argparse.Namespace, utf8_lines: Callable) -> int:
    """``seqlab classify MODEL_DIR [FILE|-]``: label and probability per marked sentence."""
    from seqlab.relation.predict import classify_stream

    if not is_relation_config(args.model_dir):
        raise SeqlabError(f"{args.model_dir}: not a relation run directory (its config.yaml has no 'task: relation')")
    lines, source = _input_lines(args.file, utf8_lines)
    classify_stream(args.model_dir, lines, sys.stdout, fmt=args.format, batch_size=args.batch_size, source=source)
    return 0


def explain(args: argparse.Namespace, utf8_lines: Callable) -> int:
    """``seqlab explain MODEL_DIR FILE --out DIR``: attention heat maps, latent-type table and t-SNE."""
    from seqlab.relation.explain import explain_file

    if not is_relation_config(args.model_dir):
        raise SeqlabError(f"{args.model_dir}: not a relation run directory (its config.yaml has no 'task: relation')")
    written = explain_file(args.model_dir, args.file, Path(args.out), sentences=args.sentences, top=args.top)
    for path in written:
        print(path)
    return 0


def score(args: argparse.Namespace) -> int:
    """``seqlab score semeval PRED KEY``: the official SemEval-2010 Task 8 scorer's output."""
    from seqlab.relation.score import score_files

    sys.stdout.write(score_files(args.pred, args.key).report)
    return 0


def add_parsers(sub: argparse._SubParsersAction, score_sub: argparse._SubParsersAction, utf8_lines: Callable,
                positive_int: Callable[[str], int]) -> None:
    """Register ``classify``, ``explain`` and ``score semeval``."""
    ss = score_sub.add_parser("semeval", help="official SemEval-2010 Task 8 scorer: 'ID<TAB>LABEL' files")
    ss.add_argument("pred", help="proposed answers")
    ss.add_argument("key", help="answer key (e.g. TEST_FILE_KEY_DIRECTED.TXT)")
    ss.set_defaults(func=score)

    c = sub.add_parser("classify", help="classify sentences marked with <e1>..</e1> and <e2>..</e2>")
    c.add_argument("model_dir")
    c.add_argument("file", nargs="?", help="one sentence per line ('ID<TAB>\"sentence\"' or the sentence); - for stdin")
    c.add_argument("--format", choices=("tsv", "jsonl"), default="tsv", help="tsv: id, label, probability")
    c.add_argument("--batch-size", type=positive_int, default=200)
    c.set_defaults(func=lambda args: classify(args, utf8_lines))

    x = sub.add_parser("explain", help="relation runs: attention heat maps, latent entity types (paper §5)")
    x.add_argument("model_dir")
    x.add_argument("file", help="a SemEval-format file (e.g. TEST_FILE_FULL.TXT)")
    x.add_argument("--out", required=True, help="folder for attention.html, latent_types.md, latent_types_tsne.svg")
    x.add_argument("--sentences", type=positive_int, default=20, help="sentences shown in the heat maps")
    x.add_argument("--top", type=positive_int, default=10, help="entities listed per latent type")
    x.set_defaults(func=lambda args: explain(args, utf8_lines))
