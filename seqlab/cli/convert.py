"""``seqlab convert IN OUT --from FMT --to FMT``: labelled data from one format to another
(:func:`seqlab.data.formats.convert.convert`), with the alignment report of an offset format printed."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from seqlab.cli._util import add_offsets_option
from seqlab.core.errors import SeqlabError
from seqlab.data.encoding import DEFAULT_ENCODING, check_encoding
from seqlab.data.formats.align import LOGGED_PROBLEMS
from seqlab.data.schemes import SCHEMES
from seqlab.data.relations import CONVERT_FROM, CONVERT_TO, convert_relations


def cmd_convert(args: argparse.Namespace) -> int:
    from seqlab.data.formats.convert import convert
    from seqlab.data.label_map import parse_label_map

    if not Path(args.input).exists():
        raise SeqlabError(f"{args.input}: no such file or folder")
    if args.source in CONVERT_FROM or args.target in CONVERT_TO:  # relation data: seqlab.data.relations
        summary = convert_relations(args.input, args.output, source_format=args.source, target_format=args.target)
        print(f"{args.input} -> {args.output}: {summary}")
        return 0
    result = convert(args.input, args.output, source_format=args.source, target_format=args.target,
                     label_map=parse_label_map(args.label_map) if args.label_map else None, scheme=args.scheme,
                     columns=args.columns.split(",") if args.columns else None, tag_column=args.tag_column,
                     encoding=check_encoding(args.encoding), offsets=args.offsets)
    print(f"{args.input} -> {args.output}: {result.summary()}")
    if result.report.documents:
        print(f"alignment: {result.report.summary()}")
        for problem in result.report.problems[:LOGGED_PROBLEMS]:
            print(f"  {problem}")
        if len(result.report.problems) > LOGGED_PROBLEMS:
            print(f"  ... and {len(result.report.problems) - LOGGED_PROBLEMS} more")
    sys.stdout.flush()
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from seqlab.data.formats.convert import READ_FORMATS, WRITE_FORMATS

    c = sub.add_parser("convert", help="convert labelled data between formats (CoNLL, CoNLL-U, brat, span JSONL, "
                                       "Label Studio, HF JSONL, seqlab's own JSONL)",
                       description="Read IN with the readers of data.format, write OUT with a writer; spans that "
                                   "do not align to tokens are reported (the alignment policy: README).")
    c.add_argument("input", help="the file, or a brat folder, to read")
    c.add_argument("output", help="the file to write (a folder for --to brat)")
    c.add_argument("--from", dest="source", choices=("auto", *READ_FORMATS, *CONVERT_FROM), default="auto",
                   help="IN's format (default auto: by extension and content)")
    c.add_argument("--to", dest="target", choices=(*WRITE_FORMATS, *CONVERT_TO), required=True,
                   help="OUT's format (relations: relation JSON lines, from a SemEval-2010 Task 8 file)")
    c.add_argument("--label-map", metavar="OLD=NEW,...",
                   help="rename types as they are read (old= drops one), or a YAML/JSON file of the mapping")
    c.add_argument("--scheme", choices=list(SCHEMES),
                   help="the tag scheme to write (default: as read; the span formats read as iob2)")
    add_offsets_option(c)
    c.add_argument("--columns", metavar="NAMES",
                   help="a CoNLL IN's columns, naming the token column word and the tag column ner (_ skips one; "
                        "default: word ... ner)")
    c.add_argument("--tag-column", metavar="FIELD",
                   help="a CoNLL-U IN's tag field (default: NER= in misc where the file has it, else upos)")
    c.add_argument("--encoding", default=DEFAULT_ENCODING,
                   help="IN's text encoding (as data.encoding; default utf-8); OUT is written in UTF-8")
    c.set_defaults(func=cmd_convert)
