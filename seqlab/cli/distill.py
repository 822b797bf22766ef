"""``seqlab distill label``: unlabeled text tagged by a teacher into a corpus a student trains on.

A thin layer over :func:`seqlab.apps.distill.label`; the student reads the corpus through its config's
``train.teacher`` section (:class:`seqlab.tagging.config.TeacherConfig`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from seqlab.cli._util import add_device_option, add_threads_option, model_device, positive_int, use_threads
from seqlab.cli.tag import ONEDNN_CACHE
from seqlab.core.errors import SeqlabError


def cmd_label(args: argparse.Namespace) -> int:
    from seqlab.apps.distill import label

    os.environ.setdefault(*ONEDNN_CACHE)  # as seqlab tag: a stream of batches of every length
    if args.ray is not None:
        if args.device not in ("auto", "cpu"):
            raise SeqlabError(f"--device {args.device} with --ray: the Ray actors run the teacher on the CPU, one "
                              "thread each; leave --device out")
        device = "cpu"
    else:
        device = model_device(args.device, args.workers)
        if args.workers == 1:
            use_threads(args.threads)
    result = label(args.teacher, args.text, args.output, workers=args.workers, limit_words=args.limit_words,
                   lines_per_shard=args.lines_per_shard, batch_size=args.batch_size, device=device, ray=args.ray)
    corpus, run = result["corpus"], result["this_run"]
    print(f"{args.output}: {corpus['shards']} shards, {corpus['sentences']} sentences, {corpus['words']} words"
          f"{'' if corpus['finished'] else ' (input not finished)'}; this run {run['words']} words at "
          f"{run['words_per_second']} words/s, {run['cpu_seconds_per_million_words']} CPU s per million words",
          file=sys.stderr)
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("distill", help="distil a teacher tagger into a fast student: label unlabeled text with it")
    d_sub = d.add_subparsers(dest="action", required=True)
    g = d_sub.add_parser("label", help="tag unlabeled text with a teacher into shards of a labelled corpus, with "
                                       "each token's marginal and each sentence's path confidence (resumable)",
                         description="Tag TEXT (one sentence or paragraph per line, UTF-8, gzipped or not; "
                                     "several files are one text, in order) with TEACHER into DIR, a shard file "
                                     "every --lines-per-shard lines. Killed, it resumes when run again with the same arguments. A student trains on DIR "
                                     "through its config's train.teacher section.")
    g.add_argument("teacher", help="a run directory, a .seqlab file or an installed model's name "
                                   "(en-ner-conll03-minilm)")
    g.add_argument("text", nargs="+", help="the unlabeled text, one sentence or paragraph per line; several files "
                                            "are read as one text, in the order given")
    g.add_argument("--output", metavar="DIR", required=True, help="the corpus folder (made, or gone on with)")
    g.add_argument("--limit-words", type=positive_int, metavar="N",
                   help="stop once N words (tokens as the teacher splits them) are labelled")
    g.add_argument("--lines-per-shard", type=positive_int, default=1000,
                   help="input lines per shard file; a rerun must give the folder's own")
    g.add_argument("--batch-size", type=positive_int, default=100)
    g.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes, one torch thread each, each loading the teacher; shards are written "
                        "in input order")
    g.add_argument("--ray", metavar="ADDRESS",
                   help="tag the shards in --workers Ray actors (one CPU each) instead of local processes: 'local' "
                        "starts Ray on this machine, 'auto' joins the cluster this machine is part of, "
                        "ray://HEAD:10001 a remote one; the teacher must be readable at its path on every node "
                        "(an installed name, or a .seqlab file copied alike); this process writes the corpus "
                        "(pip install -e '.[ray]')")
    add_device_option(g, workers=True)
    add_threads_option(g)
    g.set_defaults(func=cmd_label)
