"""``seqlab tag`` (raw text → labels) and ``seqlab eval`` (a labelled file → the field's report).

Both are thin layers over :func:`seqlab.load`: ``tag`` streams ``SequenceTagger.tag_many`` into one of
three formats, ``eval`` prints ``evaluate``'s report (conlleval's, or the official SemEval scorer's).

* ``conll``: ``token label`` lines, a blank line after each sentence;
* ``jsonl``: one JSON object per sentence with tokens and spans (character offsets into the input
  line, type, text, confidence);
* ``inline``: each input line with entities marked ``[TYPE words]``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable, TextIO

from seqlab.cli._util import add_threads_option, input_lines, load_model, positive_int, use_threads
from seqlab.core.paths import require_file
from seqlab.core.errors import SeqlabError
from seqlab.tagging.config import SCHEME_NAMES
from seqlab.tagging.document import Document


def write_documents(documents: Iterable[Document], out: TextIO, fmt: str) -> None:
    """Write tagged documents (one per input line) in ``fmt``, flushing after each."""
    for number, doc in enumerate(documents, start=1):
        if fmt == "inline":
            out.write(doc.inline() + "\n")
        for sentence in doc.sentences if fmt != "inline" else ():
            if fmt == "conll":
                out.writelines(f"{token} {label}\n" for token, label in zip(sentence.tokens, sentence.labels))
                out.write("\n")
            else:
                spans = [{"start": s.start, "end": s.end, "type": s.label, "text": s.text,
                          "confidence": round(s.confidence, 4)} for s in sentence.spans]
                out.write(json.dumps({"line": number, "tokens": sentence.tokens, "spans": spans},
                                     ensure_ascii=False) + "\n")
        out.flush()


def cmd_tag(args: argparse.Namespace) -> int:
    from seqlab.tagging.api import SequenceTagger

    use_threads(args.threads)
    tagger = load_model(args.model_dir, SequenceTagger, "tag")
    lines, _ = input_lines(args.file)
    documents = tagger.tag_many(lines, batch_size=args.batch_size, scheme=args.scheme,
                                confidences=args.format == "jsonl")  # the only format that prints them
    write_documents(documents, sys.stdout, args.format)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from seqlab.relation.api import RelationModel

    require_file(args.file)
    use_threads(args.threads)
    model = load_model(args.model_dir)
    default = Path(args.model_dir) / "eval" / Path(args.file).name
    if isinstance(model, RelationModel):
        if args.post_viterbi:
            raise SeqlabError("--post-viterbi applies to softmax taggers, not to relation classifiers")
        answers = Path(args.output) if args.output else default.with_name(default.name + ".answers.txt")
        result = model.evaluate(args.file, answers=answers, batch_size=args.batch_size)
        sys.stdout.write(result.report + f"answers written to {answers}\n")
        return 0
    if args.post_viterbi:
        model.use_post_viterbi()
    output = Path(args.output) if args.output else default.with_name(default.name + ".pred.txt")
    result = model.evaluate(args.file, output=output, batch_size=args.batch_size, scheme=args.scheme)
    sys.stdout.write(result.report_text + f"predictions written to {output}\n")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("eval", help="score a trained model on a labelled CoNLL file (SemEval file for relation runs)")
    e.add_argument("model_dir")
    e.add_argument("file")
    e.add_argument("--output", help="where to write token/gold/pred columns (default MODEL_DIR/eval/FILE.pred.txt)")
    e.add_argument("--batch-size", type=positive_int, default=100)
    e.add_argument("--post-viterbi", action="store_true",
                   help="softmax taggers: decode by Viterbi over the per-token probabilities, under the tag "
                        "scheme's allowed transitions (Turian et al. 2009)")
    e.add_argument("--scheme", choices=("auto", *SCHEME_NAMES), default="auto",
                   help="tag scheme of the gold file; predictions are written and compared in it (default auto: "
                        "detected from the file's tags, else the model's training scheme)")
    add_threads_option(e)
    e.set_defaults(func=cmd_eval)

    g = sub.add_parser("tag", help="tag raw text (one paragraph per line)")
    g.add_argument("model_dir")
    g.add_argument("file", nargs="?", help="text file, or - / nothing for standard input")
    g.add_argument("--format", choices=("conll", "jsonl", "inline"), default="conll")
    g.add_argument("--batch-size", type=positive_int, default=64)
    g.add_argument("--scheme", choices=SCHEME_NAMES, default="iob2",
                   help="tag scheme of the labels --format conll writes (default iob2: B- opens every entity)")
    add_threads_option(g)
    g.set_defaults(func=cmd_tag)
