"""Relation-only verbs: ``seqlab classify``, ``seqlab explain`` and ``seqlab score semeval``.

``seqlab train`` and ``seqlab eval`` serve both tasks (:mod:`seqlab.cli.train`, :mod:`seqlab.cli.tag`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from seqlab.cli._util import add_device_option, add_encoding_option, input_lines, load_model, model_device, positive_int
from seqlab.core.paths import require_file


def classify(args: argparse.Namespace) -> int:
    """``seqlab classify MODEL_DIR [FILE|-]``: label and confidence per marked sentence (``--format jsonl``: the
    relation as :func:`seqlab.core.schema.encode_relation` writes it)."""
    model = load_model(args.model_dir, "relation", "classify", device=model_device(args.device))
    from seqlab.data.encoding import check_encoding

    lines, source = input_lines(args.file, check_encoding(args.encoding))
    if args.format == "html":
        from seqlab.data.relations import parse_input_lines
        from seqlab.render.html import config_language, relations_html

        lines = list(lines)
        examples = list(parse_input_lines(lines, source))
        relations = model.classify_many(lines, batch_size=args.batch_size, source=source)
        sys.stdout.write(relations_html(examples, relations, title=f"seqlab classify: {source}",
                                        language=config_language(model.metadata()["config"])))
        return 0
    for r in model.classify_many(lines, batch_size=args.batch_size, source=source):
        if args.format == "jsonl":
            sys.stdout.write(json.dumps(model.encode(r)) + "\n")
        else:
            sys.stdout.write(f"{r.id}\t{r.label}\t{r.confidence:.4f}\n")
    return 0


def explain(args: argparse.Namespace) -> int:
    """``seqlab explain MODEL_DIR FILE --out DIR``: attention heat maps, latent-type table and t-SNE."""
    from seqlab.relation.explain import explain_file

    model = load_model(args.model_dir, "relation", "explain", device=model_device(args.device))
    require_file(args.file)
    written = explain_file(model, args.file, Path(args.out), sentences=args.sentences, top=args.top)
    for path in written:
        print(path)
    return 0


def score(args: argparse.Namespace) -> int:
    """``seqlab score semeval PRED KEY``: the official SemEval-2010 Task 8 scorer's output."""
    from seqlab.relation.score import score_files

    sys.stdout.write(score_files(args.pred, args.key).report)
    return 0


def add_score_parser(score_sub: argparse._SubParsersAction) -> None:
    """Register ``score semeval`` among the ``score`` verb's formats (:func:`seqlab.cli.score.add_parsers`)."""
    ss = score_sub.add_parser("semeval", help="official SemEval-2010 Task 8 scorer: 'ID<TAB>LABEL' files")
    ss.add_argument("pred", help="proposed answers")
    ss.add_argument("key", help="answer key (e.g. TEST_FILE_KEY_DIRECTED.TXT)")
    ss.set_defaults(func=score)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``classify`` and ``explain``."""
    c = sub.add_parser("classify", help="classify sentences marked with <e1>..</e1> and <e2>..</e2>")
    c.add_argument("model_dir", help="a relation classifier: its run directory, .seqlab file or installed name")
    c.add_argument("file", nargs="?", help="one sentence per line ('ID<TAB>\"sentence\"' or the sentence); - for stdin")
    c.add_argument("--format", choices=("tsv", "jsonl", "html"), default="tsv",
                   help="tsv: id, label, confidence; jsonl: id, label, confidence, e1, e2, probabilities; html: one "
                        "self-contained page, the entities marked and the relation named")
    c.add_argument("--batch-size", type=positive_int, default=200)
    add_encoding_option(c, "FILE (or standard input)")
    add_device_option(c)
    c.set_defaults(func=classify)

    x = sub.add_parser("explain", help="relation runs: attention heat maps, latent entity types (paper §5)")
    x.add_argument("model_dir", help="a relation classifier: its run directory, .seqlab file or installed name")
    x.add_argument("file", help="a SemEval-format file (e.g. TEST_FILE_FULL.TXT)")
    x.add_argument("--out", required=True, help="folder for attention.html, latent_types.md, latent_types_tsne.png")
    x.add_argument("--sentences", type=positive_int, default=20, help="sentences shown in the heat maps")
    x.add_argument("--top", type=positive_int, default=10, help="entities listed per latent type")
    add_device_option(x)
    x.set_defaults(func=explain)
