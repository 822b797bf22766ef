"""The ``seqlab`` command: thin argparse verbs over importable functions."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

from seqlab.relation import cli as relation_cli
from features.base import FeatureError
from seqlab.errors import DataFormatError, SeqlabError
from seqlab.features_cli import add_parser as add_features_parser
from seqlab.summarize import add_parser as add_summarize_parser
from seqlab.sweep import add_parser as add_sweep_parser

log = logging.getLogger("seqlab")


def _default_output(config_path: str) -> Path:
    stem = Path(config_path).stem
    base = Path("runs") / f"{stem}-{datetime.now():%Y%m%d-%H%M%S}"
    return base


#: Keys a resumed run may change with --set: where it runs, not what it trains (a checkpoint moves between
#: CPU and GPU, or a run gets the cores another job has left).
RESUME_SETTABLE = ("train.threads", "train.device")
#: Keys a resumed run may raise: a finished or stopped run goes on for more epochs. Nothing else in training
#: depends on them (the tagger's learning rate decays per epoch, not towards the last one; the relation
#: classifier's does not decay), so the result is the run the larger value would have given from the start.
RESUME_EXTENDABLE = ("train.epochs", "train.patience")


def cmd_train(args: argparse.Namespace) -> int:
    """``seqlab train`` for a tagger or, with top-level ``task: relation``, a relation classifier."""
    if relation_cli.is_relation_config(args.resume or args.config):
        from seqlab.relation.config import load_relation_config as load_config
        from seqlab.relation.train import train_relation as train
    else:
        from seqlab.config import load_config
        from seqlab.train import train
    if args.resume:
        run_dir = Path(args.resume)
        changed = [item for item in args.set
                   if item.partition("=")[0].strip() not in RESUME_SETTABLE + RESUME_EXTENDABLE]
        if changed:
            raise SeqlabError(f"--set {changed[0]} cannot be combined with --resume: a resumed run keeps its own "
                              f"config.yaml (only {', '.join(RESUME_SETTABLE)}, which say where it runs, may change, "
                              f"and {', '.join(RESUME_EXTENDABLE)} may be raised)")
        raised = [item for item in args.set if item.partition("=")[0].strip() in RESUME_EXTENDABLE]
        if raised:
            _extend_run(run_dir, load_config(run_dir / "config.yaml"), load_config(run_dir / "config.yaml", raised))
        config = load_config(run_dir / "config.yaml", args.set)
        if args.config and load_config(args.config, args.set) != config:
            log.warning("resuming with %s/config.yaml; %s differs from it and is ignored", run_dir, args.config)
        train(config, run_dir, resume=True, progress=not args.quiet)
        return 0
    if not args.config:
        raise SeqlabError("seqlab train: give a CONFIG file (or --resume RUN_DIR)")
    config = load_config(args.config, args.set)
    out = Path(args.output) if args.output else _default_output(args.config)
    train(config, out, progress=not args.quiet)
    print(f"run directory: {out}")
    return 0


def _extend_run(run_dir: Path, saved: Any, extended: Any) -> None:
    """Check that ``extended`` only raises ``saved``'s epochs and patience, and record it in the run's config.yaml."""
    from seqlab import archive
    from seqlab.config import dump_config

    archive.check_output(run_dir, resume=True)  # no checkpoint: nothing to extend, and config.yaml stays as it was
    for key in ("epochs", "patience"):
        before, after = getattr(saved.train, key), getattr(extended.train, key)
        if after < before:
            raise SeqlabError(f"--set train.{key}={after}: a resumed run's train.{key} can only be raised "
                              f"({run_dir}/config.yaml has {before})")
        if after != before:
            log.warning("extending %s: train.%s %d -> %d", run_dir, key, before, after)
    if extended != saved:
        archive.save_config(run_dir, dump_config(extended))


def cmd_eval(args: argparse.Namespace) -> int:
    from seqlab.tag import evaluate_file

    if relation_cli.is_relation_config(args.model_dir):
        if args.post_viterbi:
            raise SeqlabError("--post-viterbi applies to softmax taggers, not to relation classifiers")
        return relation_cli.evaluate(args)
    text = evaluate_file(args.model_dir, args.file, output=args.output, batch_size=args.batch_size,
                         post_viterbi=args.post_viterbi)
    sys.stdout.write(text)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from seqlab.metrics import score_conll_file

    if not Path(args.file).is_file():
        raise SeqlabError(f"{args.file}: no such file")
    sys.stdout.write(score_conll_file(args.file))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``seqlab compare conll|semeval A B``: paired significance tests of two systems' outputs."""
    from seqlab.significance import compare_conll_files, compare_semeval_files, format_comparison

    written = "test.predictions.txt" if args.format == "conll" else "test.answers.txt"
    a, b = (_test_output(path, written) for path in (args.a, args.b))
    if args.format == "semeval" and not Path(args.key).is_file():
        raise SeqlabError(f"{args.key}: no such file")
    options = {"samples": args.samples, "seed": args.seed}
    if args.format == "conll":
        result, measure = compare_conll_files(a, b, **options), "F1"
    else:
        result, measure = compare_semeval_files(a, b, args.key, **options), "macro-F1"
    if args.json:
        sys.stdout.write(json.dumps({"a": a, "b": b, **result.to_dict()}) + "\n")
    else:
        sys.stdout.write(format_comparison(result, a, b, measure))
    return 0


def _test_output(path: str, written: str) -> str:
    """A prediction file, or the test-set file a training run wrote into its run directory."""
    if Path(path).is_dir():
        inside = Path(path) / written
        if not inside.is_file():
            raise SeqlabError(f"{path}: a directory without {written} (give a file, or a finished run's directory)")
        return str(inside)
    if not Path(path).is_file():
        raise SeqlabError(f"{path}: no such file")
    return path


def _utf8_lines(handle: BinaryIO, source: str) -> Iterator[str]:
    """Decode a byte stream line by line; bytes that are not UTF-8 are an error naming the line."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataFormatError(
                source, number, f"not valid UTF-8 (byte {raw[err.start]:#04x} at column {err.start + 1})"
            ) from None


def cmd_tag(args: argparse.Namespace) -> int:
    from seqlab.tag import tag_stream

    if args.file in (None, "-"):
        raw = getattr(sys.stdin, "buffer", None)  # None when stdin was replaced by a text-only stream
        lines = sys.stdin if raw is None else _utf8_lines(raw, "<stdin>")
        tag_stream(args.model_dir, lines, sys.stdout, fmt=args.format, batch_size=args.batch_size)
    else:
        path = Path(args.file)
        if not path.is_file():
            raise SeqlabError(f"{path}: no such file")
        with open(path, "rb") as handle:
            tag_stream(args.model_dir, _utf8_lines(handle, str(path)), sys.stdout, fmt=args.format,
                       batch_size=args.batch_size, source=str(path))
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seqlab", description="Sequence labelling: train, evaluate, tag, score.")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a tagger (or, with 'task: relation', a relation classifier) from a YAML config")
    t.add_argument("config", nargs="?", help="YAML config (see configs/)")
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. model.hidden=256")
    t.add_argument("--output", help="run directory (default runs/CONFIG-TIMESTAMP)")
    t.add_argument("--resume", metavar="RUN_DIR",
                   help="continue the run in RUN_DIR from its last checkpoint (--set train.epochs=N, or "
                        "train.patience=N, raises its limit: a finished run trains on)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=cmd_train)

    e = sub.add_parser("eval", help="score a trained model on a labelled CoNLL file (SemEval file for relation runs)")
    e.add_argument("model_dir")
    e.add_argument("file")
    e.add_argument("--output", help="where to write token/gold/pred columns (default MODEL_DIR/eval/FILE.pred.txt)")
    e.add_argument("--batch-size", type=_positive_int, default=100)
    e.add_argument("--post-viterbi", action="store_true",
                   help="softmax taggers: decode by Viterbi over the per-token probabilities, under the tag "
                        "scheme's allowed transitions (Turian et al. 2009)")
    e.set_defaults(func=cmd_eval)

    s = sub.add_parser("score", help="score an existing prediction file")
    s_sub = s.add_subparsers(dest="format", required=True)
    sc = s_sub.add_parser("conll", help="conlleval drop-in: columns 'token ... gold pred'")
    sc.add_argument("file")
    sc.set_defaults(func=cmd_score)
    relation_cli.add_parsers(sub, s_sub, _utf8_lines, _positive_int)  # classify, explain, score semeval

    c = sub.add_parser("compare", help="paired significance tests of two systems on the same test set")
    c_sub = c.add_subparsers(dest="format", required=True)
    cc = c_sub.add_parser("conll", help="two 'token ... gold pred' files of the same sentences, on span F1")
    cs = c_sub.add_parser("semeval", help="two SemEval-2010 Task 8 answer files, on the official macro-F1")
    for q in (cc, cs):
        q.add_argument("a", help="system A's predictions, or a finished run's directory (its test-set output)")
        q.add_argument("b", help="system B's predictions, or a run directory")
        if q is cs:
            q.add_argument("key", help="the answer key, e.g. TEST_FILE_KEY_DIRECTED.TXT")
        q.add_argument("--samples", type=_positive_int, default=10_000, help="shuffles and bootstrap draws")
        q.add_argument("--seed", type=_nonnegative_int, default=1)
        q.add_argument("--json", action="store_true", help="one JSON object instead of the report")
        q.set_defaults(func=cmd_compare)

    g = sub.add_parser("tag", help="tag raw text (one paragraph per line)")
    g.add_argument("model_dir")
    g.add_argument("file", nargs="?", help="text file, or - / nothing for standard input")
    g.add_argument("--format", choices=("conll", "jsonl", "inline"), default="conll")
    g.add_argument("--batch-size", type=_positive_int, default=64)
    g.set_defaults(func=cmd_tag)
    add_features_parser(sub)
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
