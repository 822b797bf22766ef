"""``seqlab tag`` (raw text → labels) and ``seqlab eval`` (a labelled file → the field's report).

Both are thin layers over :func:`seqlab.load`: ``tag`` streams ``SequenceTagger.tag_many`` into one of
these formats, ``eval`` prints ``evaluate``'s report (conlleval's, or the official SemEval scorer's).

* ``conll``: ``token label`` lines, a blank line after each sentence;
* ``jsonl``: one JSON object per sentence, as :mod:`seqlab.core.schema` writes it: its line number, tokens,
  offsets, labels and spans (text, label, character offsets into the input line, confidence, token offsets);
* ``inline``: each input line with entities marked ``[LABEL words]``;
* ``conllu``: CoNLL-U sentences (:mod:`seqlab.data.formats.conllu_writer`);
* ``brat``: the whole input as one brat document, ``NAME.txt`` (the input) and ``NAME.ann`` in ``--output``.

The formats are those of :data:`seqlab.data.formats.registry.OUTPUTS`: one that renders a document is streamed to
standard output, one written whole (brat) goes to ``--output``; all of them read back as gold files.
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from seqlab.cli._util import (add_backend_option, add_device_option, add_encoding_option, add_offsets_option,
                              add_threads_option, input_lines, load_model, model_device, positive_int, use_threads,
                              utf8_output)
from seqlab.core.paths import require_file
from seqlab.core.errors import SeqlabError
from seqlab.data.config import FORMATS as DATA_FORMATS, file_format
from seqlab.data.encoding import DEFAULT_ENCODING, check_encoding
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import TAG, WORD
from seqlab.data.formats.format import Format
from seqlab.data.formats.registry import OUTPUTS
from seqlab.data.labelling import SCHEME_NAMES
from seqlab.render.html import config_language
from seqlab.tagging.document import Document, render
from seqlab.core import runfiles
from seqlab.text.pretokenized import INPUT_FORMATS

log = logging.getLogger("seqlab")

#: oneDNN, which runs torch's CPU LSTM kernels, keeps every primitive it creates (one per input shape, up to 1,024 by
#: default) with its memory, and a stream of batches of every length fills it. ``seqlab tag`` turns that cache off
#: (a value set beforehand wins): over 20,000 Wikipedia lines, peak RSS 459-484 MB against 571-586 MB with it, for
#: 3% more CPU time (1.03-1.06x; ``python -m benchmarks.tag_memory --against ONEDNN_PRIMITIVE_CACHE_CAPACITY=1024``).
ONEDNN_CACHE = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")


def write_documents(documents: Iterable[Document], out: TextIO, fmt: str, numbers: Iterable[int] | None = None, *,
                    token_labels: bool = False) -> None:
    """Write tagged documents (one per input line; ``numbers``: their line numbers, 1, 2, ... by default) in
    ``fmt`` (:func:`seqlab.tagging.document.render`; ``token_labels``: a POS tagger's, for CoNLL-U's UPOS), one
    write and a flush per document."""
    for numbered in zip(numbers if numbers is not None else itertools.count(1), documents):
        out.write(render([numbered], fmt, token_labels=token_labels))
        out.flush()


def write_whole(documents: Iterable[Document], lines: list[str], target: Path, name: str, fmt: Format) -> int:
    """Write the tagged ``lines`` (each with its line ending) as one document ``name`` through ``fmt``'s writer
    (brat: ``target/name.txt``, the lines as read, and ``target/name.ann``, with an extraction model's relations
    as ``R`` lines), each sentence at its offsets into the whole text; returns how many spans."""
    from itertools import accumulate

    text, found = "".join(lines), [0]

    def sentences() -> Iterator[ColumnSentence]:
        for start, doc in zip(accumulate((len(line) for line in lines), initial=0), documents):
            found[0] += len(doc.spans)
            for k, s in enumerate(doc.sentences):
                offsets = tuple((start + a, start + b) for a, b in s.offsets)
                related = doc.sentence_relations(k) if doc.relations else []
                relations = tuple((r.head, r.tail, r.label) for r in related)
                yield ColumnSentence({WORD: tuple(s.tokens), TAG: tuple(s.labels)}, path=name,
                                     extra={"doc_id": name, "text": text, "offsets": offsets, "relations": relations})

    if fmt.write is None:
        raise SeqlabError(f"{fmt.name}: this format is streamed, not written whole")
    fmt.write(target, sentences())
    return found[0]


def _whole_output(args: argparse.Namespace) -> None:
    """Refuse options that a format written whole (one document, to ``--output``: brat) and the streamed ones
    cannot take."""
    whole = [name for name, fmt in OUTPUTS.items() if fmt.render is None]
    if OUTPUTS[args.format].page is not None and (args.workers > 1 or args.shard):
        raise SeqlabError(f"--format {args.format} writes one page; leave out "
                          f"{'--workers' if args.workers > 1 else '--shard'}")
    if OUTPUTS[args.format].render is not None:
        if args.output:
            raise SeqlabError(f"--output applies to --format {' or '.join(whole)} (a folder); --format "
                              f"{args.format} is written to standard output")
        return
    if not args.output:
        raise SeqlabError(f"--format {args.format} writes files into a folder (brat: NAME.txt and NAME.ann): give it "
                          "with --output DIR")
    if args.workers > 1 or args.shard:
        raise SeqlabError(f"--format {args.format} writes the whole input as one document; leave out "
                          f"{'--workers' if args.workers > 1 else '--shard'}")


def _input(file: str | None, args: argparse.Namespace) -> Iterable[Any]:
    """What ``seqlab tag`` tags: the raw text lines of ``file`` in ``--encoding``, or its pre-tokenized sentences
    as token lists (:mod:`seqlab.text.pretokenized`), which worker processes tag as they do lines."""
    from seqlab.text.pretokenized import file_sentences, input_format, token_lines

    fmt, encoding = input_format(file, args.input_format, args.tokenized), check_encoding(args.encoding)
    if fmt != "text" and OUTPUTS[args.format].render is None:
        raise SeqlabError(f"--format {args.format} applies to raw text input, not to {fmt} input")
    if fmt in ("conll", "conllu"):
        return file_sentences(file, fmt, encoding)
    lines, _ = input_lines(file, encoding)
    return token_lines(lines) if fmt == "tokenized" else lines


def _is_model(name: str) -> bool:
    from seqlab.apps.installed import MODELS

    path = Path(name)
    return (name in MODELS or (path / runfiles.CONFIG).is_file() or (path / runfiles.ONNX_MANIFEST).is_file()
            or (path.is_file() and path.suffix == ".seqlab"))


#: The tasks whose models ``seqlab tag`` runs: a tagger, or an extraction model (spans and their relations).
TAG_TASKS = ("tagging", "extraction")


def cmd_tag(args: argparse.Namespace) -> int:
    from seqlab.tagging.config import POOL_BATCHES
    from seqlab.apps.parallel import parse_shard, render_in_workers, shard

    from seqlab.apps.installed import check_model_name

    os.environ.setdefault(*ONEDNN_CACHE)  # read when oneDNN first runs; worker processes inherit it
    model, file = args.model, args.file
    if file is None and model is not None and not _is_model(model):  # `seqlab tag FILE`: the installed model
        check_model_name(model)  # unless it is a misspelt model name (en-ner-conll), not a missing file
        model, file = None, model
    _whole_output(args)
    lines = _input(file, args)
    utf8_output()
    index, count = parse_shard(args.shard) if args.shard else (0, 1)
    interactive = file in (None, "-") and sys.stdin.isatty()  # a person typing: answer each line at once
    options = {"batch_size": args.batch_size, "scheme": args.scheme, "pool": 1 if interactive else POOL_BATCHES,
               "confidences": args.format in ("jsonl", "html")}  # the formats that show them
    device = model_device(args.device, args.workers)  # a bad --device is said before any work
    if args.workers > 1:  # each worker loads its own copy, tags and renders its chunks; here they are only written,
        # and torch is not imported (1.8 s before the workers could start importing it themselves)
        if model is not None and not _is_model(model):  # no model there: its one-line error before any worker starts
            load_model(model, TAG_TASKS, "tag", args.backend, device)
        for text in render_in_workers(model, shard(lines, index, count), workers=args.workers, options=options,
                                      fmt=args.format, backend=args.backend):
            sys.stdout.write(text)
            sys.stdout.flush()
        return 0
    use_threads(args.threads)
    tagger = load_model(model, TAG_TASKS, "tag", args.backend, device)
    gc.freeze()  # the modules and model just loaded stay alive: full collections while tagging need not scan them
    output = OUTPUTS[args.format]
    if output.render is None:  # written whole, to --output (brat)
        tagger.labelling.check_output_format(args.format)
        text = list(lines)
        name = "stdin" if file in (None, "-") else Path(file).stem
        found = write_whole(tagger.tag_many(text, **options), text, Path(args.output), name, output)
        log.info("wrote %s in %s: %d spans", name, args.output, found)
        return 0
    numbered_a, numbered_b = itertools.tee(shard(lines, index, count))
    texts = (line for _, line in numbered_a)
    token_labels = tagger.labelling.conllu_upos  # a POS tagger's labels: CoNLL-U's UPOS, tags under words in HTML
    head, tail = ("", "") if output.page is None else output.page(
        f"seqlab tag: {'stdin' if file in (None, '-') else file}", () if token_labels else tagger.types,
        config_language(tagger.metadata()["config"]))
    sys.stdout.write(head)
    write_documents(tagger.tag_many(texts, **options), sys.stdout, args.format, (number for number, _ in numbered_b),
                    token_labels=token_labels)
    sys.stdout.write(tail)
    return 0


def _eval_tagging(model: Any, args: argparse.Namespace, default: Path) -> str:
    """``seqlab eval`` of a tagger: conlleval's report; the token/gold/pred file at ``default``.pred.txt."""
    if args.post_viterbi:
        model = model.with_post_viterbi()
    from seqlab.data.label_map import parse_label_map
    from seqlab.tagging.gold import check_shared_types, read_gold

    output = Path(args.output) if args.output else default.with_name(default.name + ".pred.txt")
    columns = args.columns.split(",") if args.columns else None
    label_map = parse_label_map(args.label_map) if args.label_map else None
    gold = read_gold(model.config.data, args.file, columns=columns, fmt=args.format, label_map=label_map,
                     offsets=args.offsets, encoding=check_encoding(args.encoding))
    check_shared_types(gold, model.types, model.labelling)
    if args.calibration or args.plot:  # decoded once: scored and calibrated from the same emissions
        gold = model.outcomes(gold, batch_size=args.batch_size)
    result = model.evaluate(gold, output=output, batch_size=args.batch_size, scheme=args.scheme)
    return result.report_text + f"predictions written to {output}\n" + _calibration(model, gold, args)


def _calibration(model: Any, outcomes: Any, args: argparse.Namespace) -> str:
    """With ``--calibration`` (or ``--plot``): the reliability table of the model's confidences on the gold
    data (decoded: an Outcomes), at the model's temperature and, when it has one, uncalibrated; ``--plot``: the
    diagram as PNG."""
    if not (args.calibration or args.plot):
        return ""
    from seqlab.tagging.calibration import plot

    shown = [outcomes.reliability(model.temperature)]
    if model.temperature != 1.0:
        shown.insert(0, outcomes.reliability(1.0))
    text = "".join(rel.table() for rel in shown)
    if args.plot:
        plot(shown, args.plot, title=f"{Path(args.model_dir).name} on {Path(args.file).name}")
        text += f"reliability diagram written to {args.plot}\n"
    return text


def _other_encoding(args: argparse.Namespace) -> bool:
    """Whether ``--encoding`` names another encoding than UTF-8 (which relation and SpERT files are read in)."""
    return check_encoding(args.encoding) != DEFAULT_ENCODING


def _eval_relation(model: Any, args: argparse.Namespace, default: Path) -> str:
    """``seqlab eval`` of a relation model: the official SemEval scorer's report; answers at
    ``default``.answers.txt."""
    given = [flag for flag, value in (("--post-viterbi", args.post_viterbi), ("--columns", args.columns),
                                      ("--calibration", args.calibration), ("--plot", args.plot),
                                      ("--label-map", args.label_map), ("--format", args.format != "auto"),
                                      ("--offsets", args.offsets), ("--encoding", _other_encoding(args))) if value]
    if given:
        raise SeqlabError(f"{given[0]} applies to taggers, not to relation classifiers")
    require_file(args.file)
    answers = Path(args.output) if args.output else default.with_name(default.name + ".answers.txt")
    result = model.evaluate(args.file, answers=answers, batch_size=args.batch_size)
    return result.report + f"answers written to {answers}\n"


def _eval_extraction(model: Any, args: argparse.Namespace, default: Path) -> str:
    """``seqlab eval`` of an extraction model on a SpERT file: entity and strict relation F1, end to end and with
    the gold entities given; the scores as JSON at ``default``.scores.json."""
    given = [flag for flag, value in (("--post-viterbi", args.post_viterbi), ("--columns", args.columns),
                                      ("--calibration", args.calibration), ("--plot", args.plot),
                                      ("--label-map", args.label_map), ("--format", args.format != "auto"),
                                      ("--encoding", _other_encoding(args))) if value]
    if given:
        raise SeqlabError(f"{given[0]} applies to taggers, not to extraction models (which read SpERT JSON)")
    from seqlab.core.atomic import atomic_open

    result = model.evaluate(args.file, batch_size=args.batch_size)
    output = Path(args.output) if args.output else default.with_name(default.name + ".scores.json")
    output.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(output) as out:
        json.dump(result.to_dict(), out, indent=2)
    return result.report + f"scores written to {output}\n"


#: ``seqlab eval`` by the loaded model's task: (model, arguments, default output path) → the report printed.
EVALUATORS: dict[str, Callable[[Any, argparse.Namespace, Path], str]] = {
    "tagging": _eval_tagging, "relation": _eval_relation, "extraction": _eval_extraction}


def cmd_eval(args: argparse.Namespace) -> int:
    from seqlab.data.formats.registry import located

    args.file = str(located(args.file))  # a relative path not here: under the data folder, as config paths are
    if file_format(args.file, args.format) != "brat":  # a brat folder is a gold "file" too
        require_file(args.file)
    check_encoding(args.encoding)  # a misspelt name is said before the model loads
    utf8_output()
    use_threads(args.threads)
    model = load_model(args.model_dir, device=model_device(args.device))
    where = Path(args.model_dir) if Path(args.model_dir).is_dir() else Path.cwd()  # a model file: here
    sys.stdout.write(EVALUATORS[model.task](model, args, where / "eval" / Path(args.file).name))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("eval", help="score a trained model on a labelled file: CoNLL, CoNLL-U, a brat folder, span "
                                    "or HF JSONL, a Label Studio export (SemEval file for relation runs)")
    e.add_argument("model_dir", help="a run directory, a .seqlab file or an installed model's name")
    e.add_argument("file", help="the gold file (a brat folder for --format brat)")
    e.add_argument("--format", choices=DATA_FORMATS, default="auto",
                   help="the gold file's format (default auto: by extension and content, as data.format)")
    e.add_argument("--label-map", metavar="OLD=NEW,...",
                   help="rename the gold file's types to the model's (person=PER,corporation=ORG; old= drops a "
                        "type), or a YAML/JSON file of the mapping; added to the model's own data.label_map")
    add_offsets_option(e, default=None)
    add_encoding_option(e, "the gold file")
    e.add_argument("--output", help="where to write token/gold/pred columns (default MODEL_DIR/eval/FILE.pred.txt, "
                                    "or ./eval/ for a model file)")
    e.add_argument("--batch-size", type=positive_int, default=100)
    e.add_argument("--post-viterbi", action="store_true",
                   help="softmax taggers: decode by Viterbi over the per-token probabilities, under the tag "
                        "scheme's allowed transitions (Turian et al. 2009)")
    e.add_argument("--scheme", choices=("auto", *SCHEME_NAMES), default="auto",
                   help="tag scheme of the gold file; predictions are written and compared in it (default auto: "
                        "detected from the file's tags, else the model's training scheme)")
    e.add_argument("--columns", metavar="NAMES",
                   help="the file's columns, comma-separated, in the model's column names (e.g. ner,word for a "
                        "'TAG token' file; _ skips a column); default: the model's layout, or token ... tag")
    e.add_argument("--calibration", action="store_true",
                   help="also report how well the confidences are calibrated: the expected calibration error (ECE) "
                        "of span confidences (token confidences for token labels) over 10 equal-width bins, and the "
                        "reliability table, at the model's temperature and uncalibrated")
    e.add_argument("--plot", metavar="FILE.png", help="write the reliability diagram there (implies --calibration; "
                                                      "needs matplotlib: pip install 'seqlab[plots]')")
    add_device_option(e)
    add_threads_option(e)
    e.set_defaults(func=cmd_eval)

    g = sub.add_parser("tag", help="tag raw text (one paragraph per line)",
                       description="seqlab tag [MODEL] [FILE]: with no MODEL, the English NER model installed with "
                                   "seqlab (en-ner-conll03, trained on CoNLL-2003) tags FILE.")
    g.add_argument("model", nargs="?", help="a run directory, a .seqlab file or an installed model's name "
                                            "(default: en-ner-conll03)")
    g.add_argument("file", nargs="?", help="text file, or - / nothing for standard input")
    g.add_argument("--format", choices=tuple(OUTPUTS), default="conll",
                   help="conll, jsonl (the JSON output schema), inline, conllu (labels in MISC NER=, a POS "
                        "tagger's in UPOS), brat (the input as one document, NAME.txt and NAME.ann in --output), "
                        "or html (one self-contained page, entities coloured by type)")
    g.add_argument("--tokenized", action="store_true",
                   help="the input is pre-tokenized: one sentence per line, tokens separated by spaces, tagged and "
                        "written back as they are")
    g.add_argument("--input-format", choices=INPUT_FORMATS, default="auto",
                   help="text (raw text, one paragraph per line), tokenized (as --tokenized), conll or conllu (a "
                        "column file's tokens, its labels ignored); default auto: by the file's extension, else text")
    add_encoding_option(g, "FILE or standard input (raw text, --tokenized lines, a CoNLL or CoNLL-U file)")
    g.add_argument("--output", metavar="DIR", help="--format brat: the folder to write the document to")
    g.add_argument("--batch-size", type=positive_int, default=100)
    g.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes, one torch thread each; output stays in input order")
    g.add_argument("--shard", metavar="I/N", help="tag only lines whose number (from 0) is I modulo N: one of N "
                                                  "jobs of an array (Slurm, Kubernetes)")
    g.add_argument("--scheme", choices=SCHEME_NAMES, default=None,
                   help="tag scheme of the labels --format conll and jsonl write (default iob2: B- opens every "
                        "entity; a token-label model, such as a POS tagger, writes its tags)")
    add_device_option(g, workers=True)
    add_threads_option(g)
    add_backend_option(g)
    g.set_defaults(func=cmd_tag)
