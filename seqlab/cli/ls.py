"""``seqlab features ls {build,show}``: LS vectors (Ghaddar & Langlais, COLING 2018, section 3).

Thin verbs over :func:`build` and :func:`show`, which can be imported and called. ``build`` learns
LS vectors from typed column files (optionally grown by distant supervision over unlabelled text)
into an artefact folder; ``show`` prints a word's most similar types, as the paper's Table 1.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Sequence

from seqlab.core.errors import SeqlabError

if TYPE_CHECKING:  # pragma: no cover
    from features.ls import LSVectors

PathLike = str | os.PathLike[str]

def build(typed: Sequence[PathLike], out: PathLike, *, unlabeled: Sequence[PathLike] = (),
          options: dict[str, Any] | None = None, distant: dict[str, Any] | None = None,
          overwrite: bool = False, progress: bool = True) -> LSVectors:
    """Build LS vectors into the folder ``out``; ``options`` are :class:`features.ls_build.LSOptions` fields,
    ``distant`` (with ``unlabeled`` files) turns on distant supervision with those
    :class:`features.ls_distant.DistantOptions` fields."""
    from features.ls_build import LSOptions, build_ls
    from features.ls_distant import DistantOptions

    dist = DistantOptions(**distant) if unlabeled else None
    return build_ls(typed, out, options=LSOptions(**(options or {})), unlabeled=unlabeled, distant=dist,
                    overwrite=overwrite, progress=progress)


def show(path: PathLike, words: Sequence[str], *, top: int = 10) -> str:
    """Each word's ``top`` most similar types with their LS coefficient and cosine."""
    from features.ls import LSVectors

    vectors = LSVectors.load(path)
    return "\n".join(vectors.show(word, top) for word in words)


def summary(vectors: LSVectors, out: PathLike) -> str:
    m = vectors.manifest
    counts, seconds = m["counts"], m["seconds"]
    text = (f"LS vectors: {counts['vocabulary']:,} words x {vectors.dim} types, from {counts['sentences']:,} "
            f"sentences with {counts['mentions']:,} mentions ({counts['training_tokens']:,} training tokens)\n")
    if m.get("distant"):
        d = m["distant"]["stats"]
        text += (f"distant supervision: {d['strings_kept']:,} of {d['strings_seen']:,} mention strings projected; "
                 f"{d['sentences_kept']:,} of {d['sentences_scanned']:,} unlabelled sentences kept, "
                 f"{d['mentions_projected']:,} mentions\n")
    return text + (f"fastText {seconds['fasttext']:.1f} s, total {seconds['total']:.1f} s; "
                   f"{m['bytes'] / 1e6:.1f} MB\nwrote {out}\n")


# ---------------------------------------------------------------- the verbs

def _errors(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except FileNotFoundError as err:
        raise SeqlabError(str(err)) from err
    except (ValueError, ImportError) as err:  # FeatureFileError is a ValueError naming file and line
        raise SeqlabError(str(err)) from err


def cmd_build(args: argparse.Namespace) -> int:
    sep = None if args.hierarchy_sep == "none" else args.hierarchy_sep
    options = {"dim": args.dim, "min_count": args.min_count, "window": args.window, "epochs": args.epochs,
               "bucket": args.bucket, "threads": args.threads, "hierarchy_sep": sep, "column": args.column}
    distant = {"max_sentences": args.max_distant_sentences, "min_link_prob": args.min_link_prob,
               "min_type_share": args.min_type_share, "annotate": not args.distant_plain}
    vectors = _errors(build, args.typed, args.out, unlabeled=args.unlabeled or (), options=options,
                      distant=distant, overwrite=args.overwrite,
                      progress=not args.quiet and sys.stderr.isatty())  # a log file gets no progress lines
    sys.stdout.write(summary(vectors, args.out))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise SeqlabError(f"--top must be a positive integer, but got {args.top}")
    sys.stdout.write(_errors(show, args.file, args.word, top=args.top))
    return 0


def add_parser(verbs: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``ls build`` and ``ls show`` under ``seqlab features``."""
    ls = verbs.add_parser("ls", help="LS vectors (Ghaddar & Langlais 2018): build from a typed corpus, show types")
    sub = ls.add_subparsers(dest="ls_command", required=True)
    b = sub.add_parser("build", formatter_class=formatter, help="learn LS vectors into a folder")
    b.set_defaults(func=cmd_build)
    b.add_argument("--typed", nargs="+", required=True, metavar="FILE",
                   help="typed corpus files: token ... tag columns, BIO/IOB1/BILOU, blank line between sentences")
    b.add_argument("--out", required=True, metavar="DIR", help="artefact folder to write")
    b.add_argument("--unlabeled", nargs="+", metavar="FILE",
                   help="turn on distant supervision: project the typed mentions onto this text (paragraph a line)")
    b.add_argument("--max-distant-sentences", type=int, default=200_000, help="projected sentences kept at most")
    b.add_argument("--min-link-prob", type=float, default=0.5,
                   help="least share of a mention string's occurrences in the typed corpus that are annotated")
    b.add_argument("--min-type-share", type=float, default=0.6, help="least share of its most frequent type")
    b.add_argument("--distant-plain", action="store_true",
                   help="add the selected unlabelled sentences without their annotated version (a control run)")
    b.add_argument("--dim", type=int, default=100, help="fastText dimensions")
    b.add_argument("--min-count", type=int, default=5, help="fastText minCount")
    b.add_argument("--window", type=int, default=5, help="fastText window size")
    b.add_argument("--epochs", type=int, default=5, help="fastText epochs")
    b.add_argument("--bucket", type=int, default=200_000, help="fastText sub-word hash buckets")
    b.add_argument("--threads", type=int, default=10,
                   help="fastText threads; fewer than 10 are raised to 10, since fastText 0.9.3 initialises its "
                        "input matrix one tenth per thread")
    b.add_argument("--hierarchy-sep", default="auto",
                   help="separator of type levels in the tags (person_politician); auto: per file, '_' or '-' if "
                        "every type of that file has it (Few-NERD keeps two levels beside OntoNotes' flat "
                        "WORK_OF_ART); none: flat types")
    b.add_argument("--column", type=int, default=-1, help="the tag column (0-based; negative counts from the end)")
    b.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    b.add_argument("--quiet", action="store_true", help="no fastText progress (shown only when stderr is a terminal)")
    s = sub.add_parser("show", formatter_class=formatter, help="a word's most similar types (the paper's Table 1)")
    s.set_defaults(func=cmd_show)
    s.add_argument("--top", type=int, default=10, help="how many types")
    s.add_argument("file", metavar="DIR", help="LS artefact folder")
    s.add_argument("word", nargs="+", help="the words whose most similar types are listed")
