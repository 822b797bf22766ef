"""``seqlab features``: induce Brown clusters, train C&W or HLBL embeddings, look at the result.

Thin verbs over plain functions that can be imported and called: :func:`brown`, :func:`cw`,
:func:`hlbl` and :func:`skipgram` read a corpus with :func:`features.corpus.read_corpus`, call the learner
of ``features/`` (Brown et al. 1992; Collobert & Weston 2008; Mnih & Hinton 2009, as in
Turian et al. 2010), save the result atomically and return it; :func:`show` gives a word's
neighbours in a Brown ``paths`` file or a vector file. The CLI prints a summary and turns
the errors ``features/`` raises on bad input into :class:`~seqlab.core.errors.SeqlabError`.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from seqlab.core.errors import SeqlabError

if TYPE_CHECKING:  # pragma: no cover
    from features.brown import BrownClusters
    from features.vocab import Embeddings

PathLike = str | os.PathLike[str]
VECTOR_FORMATS = ("word2vec", "turian")  # what features.vocab.Embeddings.save writes
# The options of features.cw.train_cw and features.hlbl.train_hlbl that the CLI passes on, by name.
CW_OPTIONS = ("dim", "window", "hidden", "epochs", "batch_size", "lr_embeddings", "lr_network",
              "min_count", "seed", "device", "checkpoint", "max_updates")
HLBL_OPTIONS = ("dim", "context", "epochs", "batch_size", "lr", "min_count", "seed", "device",
                "checkpoint", "max_updates")
SKIPGRAM_OPTIONS = ("dim", "window", "epochs", "min_count", "negatives", "lr", "minn", "maxn", "bucket", "threads")


@dataclass(frozen=True)
class Reading:
    """How corpus files become sentences: the options of :func:`features.corpus.read_corpus`."""

    tokenize: bool = True
    clean: bool | str = False  # True or ascii: Liang's a-z test; letters: letters of every script
    normalize_numbers: bool = False
    lowercase: bool = False

    def sentences(self, paths: PathLike | Sequence[PathLike]) -> Iterator[list[str]]:
        """A one-pass stream of token lists; missing files are reported before it starts."""
        from features.corpus import read_corpus

        return read_corpus(paths, **asdict(self))


# ---------------------------------------------------------------- the plain functions

def brown(corpus: Sequence[PathLike], out: PathLike, *, num_clusters: int, min_count: int = 1,
          reading: Reading = Reading(), progress: bool = True, checkpoint: PathLike | None = None) -> BrownClusters:
    """Induce Brown clusters on the corpus files and write them to ``out`` (Liang's ``paths`` format).

    ``checkpoint``: a file the merge state is saved to every 10 minutes; the same call goes on
    from it after an interruption, and it is removed once ``out`` is written.

    Returns the :class:`features.brown.BrownClusters` (with ``tokens``, ``types``, ``ami``, ``seconds``).
    """
    from features.brown import induce_brown

    _check_out(out)
    clusters = induce_brown(reading.sentences(corpus), num_clusters, min_count=min_count, progress=progress,
                            checkpoint=checkpoint)
    clusters.save(out)
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    return clusters


def cw(corpus: Sequence[PathLike], out: PathLike, *, fmt: str = "word2vec", reading: Reading = Reading(),
       heldout: Sequence[PathLike] | None = None, **options: Any) -> Embeddings:
    """Train C&W embeddings and write them to ``out``; ``options`` are :func:`features.cw.train_cw`'s.

    ``heldout`` files (read like the corpus) are scored at the end (``stats.heldout``).
    Returns the :class:`features.vocab.Embeddings`.
    """
    from features.cw import train_cw

    return _train(train_cw, corpus, out, fmt, reading, heldout, options)


def hlbl(corpus: Sequence[PathLike], out: PathLike, *, tree: PathLike | None = None, fmt: str = "word2vec",
         reading: Reading = Reading(), heldout: Sequence[PathLike] | None = None, **options: Any) -> Embeddings:
    """Train HLBL embeddings and write them to ``out``; ``options`` are :func:`features.hlbl.train_hlbl`'s.

    ``tree`` is a Brown ``paths`` file whose bit-strings shape the model's word tree
    (default: a random balanced tree). Returns the :class:`features.vocab.Embeddings`.
    """
    from features.brown import BrownClusters
    from features.hlbl import train_hlbl

    bits = None if tree is None else BrownClusters.load(_existing(tree)).paths
    return _train(train_hlbl, corpus, out, fmt, reading, heldout, {**options, "tree": bits})


def skipgram(corpus: Sequence[PathLike], out: PathLike, *, fmt: str = "word2vec", reading: Reading = Reading(),
             model_out: PathLike | None = None, **options: Any) -> Embeddings:
    """Train fastText skip-gram vectors and write them to ``out`` (and the fastText model to ``model_out``);
    ``options`` are :func:`features.skipgram.train_skipgram`'s. Returns the :class:`features.vocab.Embeddings`."""
    from features.skipgram import train_skipgram

    if fmt not in VECTOR_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(VECTOR_FORMATS)}, but got {fmt!r}")
    _check_out(out)
    if model_out is not None:
        _check_out(model_out)
    embeddings = train_skipgram(reading.sentences(corpus), model_out=model_out, **options)
    embeddings.save(out, format=fmt)
    return embeddings


def _train(trainer: Callable[..., Any], corpus: Sequence[PathLike], out: PathLike, fmt: str, reading: Reading,
           heldout: Sequence[PathLike] | None, options: dict[str, Any]) -> Embeddings:
    if fmt not in VECTOR_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(VECTOR_FORMATS)}, but got {fmt!r}")
    max_updates = options.get("max_updates")
    if max_updates is not None and max_updates < 1:
        raise ValueError(f"max_updates must be positive, but got {max_updates}")
    _check_out(out)
    held = None if heldout is None else list(reading.sentences(heldout))  # read first: a bad file fails fast
    embeddings = trainer(reading.sentences(corpus), heldout=held, **options)
    embeddings.save(out, format=fmt)
    return embeddings


def file_kind(path: PathLike) -> str:
    """``"paths"`` for a Brown paths file (``bitstring<TAB>word<TAB>count``), else ``"vectors"``, by the first line."""
    from features.corpus import read_lines

    with contextlib.closing(read_lines(_existing(path))) as lines:
        first = next(lines, None)
    if first is None:
        raise ValueError(f"{path}: the file is empty (expected a Brown paths file or word vectors)")
    fields = first.split("\t")
    return "paths" if len(fields) == 3 and fields[0] and not fields[0].strip("01") else "vectors"


def show(path: PathLike, word: str, *, k: int = 10) -> str:
    """A word's ``k`` nearest neighbours, as text: in a Brown paths file its bit-string and the
    words sharing the longest prefix of it; in a vector file the words of highest cosine.

    A word not in the file raises ``KeyError``.
    """
    from features.brown import BrownClusters
    from features.vocab import Embeddings

    if k < 1:
        raise ValueError(f"k must be a positive integer, but got {k}")
    if file_kind(path) == "paths":
        clusters = BrownClusters.load(path)
        mates = clusters.nearest(word, k)
        bits = clusters.paths[word]
        size = sum(1 for p in clusters.paths.values() if p == bits)
        head = f"{word}: bit-string {bits}, count {clusters.counts.get(word, 0):,}, {size:,} words in its cluster"
        rows = []
        for w, n in mates:
            shared = "same cluster" if n == len(bits) else f"{n} of {len(bits)} bits shared"
            rows.append((w, f"{clusters.paths[w]}  {shared}"))
    else:
        vectors = Embeddings.load(path)
        head = f"{word}: nearest by cosine among {len(vectors):,} words of dim {vectors.dim}"
        rows = [(w, f"{sim:.4f}") for w, sim in vectors.nearest(word, k)]
    width = max((len(w) for w, _ in rows), default=0)
    return "\n".join([head] + [f"{i:>4}  {w:<{width}}  {rest}" for i, (w, rest) in enumerate(rows, start=1)]) + "\n"


def _check_out(out: PathLike) -> None:
    """Refuse an output path that cannot be written before the work starts, not after."""
    if Path(out).is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name")


def _existing(path: PathLike) -> PathLike:
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file")
    return path


# ---------------------------------------------------------------- summaries

def brown_summary(clusters: BrownClusters, out: PathLike) -> str:
    return (f"Brown clusters: {clusters.tokens:,} tokens, {clusters.types:,} types ({len(clusters):,} clustered), "
            f"{clusters.num_clusters} clusters, AMI {clusters.ami:.4f} bits, {clusters.seconds:.1f} s\n"
            f"wrote {out}\n")


def embeddings_summary(name: str, embeddings: Embeddings, out: PathLike, fmt: str) -> str:
    stats = embeddings.stats
    heldout = (", ".join(f"{key} {value:.4f}" for key, value in stats.heldout.items())
               if stats.heldout else "none (give --heldout FILE)")
    return (f"{name}: {len(embeddings):,} words of dim {embeddings.dim}; {stats.windows_seen:,} windows, "
            f"{stats.updates:,} updates in {stats.seconds:.1f} s ({stats.windows_per_second:,.0f} windows/s), "
            f"final training loss {stats.final_loss:.4f}\n"
            f"held-out: {heldout}\n"
            f"wrote {out} ({fmt})\n")


# ---------------------------------------------------------------- the verbs

@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """What ``features/`` raises on bad input (FeatureFileError is a ValueError) → SeqlabError."""
    try:
        yield
    except FileNotFoundError as err:
        raise SeqlabError(f"{err.filename}: no such file" if err.filename else str(err)) from err
    except (ValueError, FloatingPointError) as err:  # FloatingPointError: training diverged
        raise SeqlabError(str(err)) from err


def _reading(args: argparse.Namespace) -> Reading:
    return Reading(tokenize=not args.no_tokenize, clean=args.clean or False, normalize_numbers=args.normalize_numbers,
                   lowercase=args.lowercase)


def cmd_brown(args: argparse.Namespace) -> int:
    with _user_errors():
        clusters = brown(args.corpus, args.out, num_clusters=args.clusters, min_count=args.min_count,
                         reading=_reading(args), progress=not args.quiet, checkpoint=args.checkpoint)
    sys.stdout.write(brown_summary(clusters, args.out))
    return 0


def cmd_cw(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for name in CW_OPTIONS}
    with _user_errors():
        embeddings = cw(args.corpus, args.out, fmt=args.format, reading=_reading(args), heldout=args.heldout,
                        progress=not args.quiet, **options)
    sys.stdout.write(embeddings_summary("C&W", embeddings, args.out, args.format))
    return 0


def cmd_hlbl(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for name in HLBL_OPTIONS}
    with _user_errors():
        embeddings = hlbl(args.corpus, args.out, tree=args.tree, fmt=args.format, reading=_reading(args),
                          heldout=args.heldout, progress=not args.quiet, **options)
    sys.stdout.write(embeddings_summary("HLBL", embeddings, args.out, args.format))
    return 0


def cmd_skipgram(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for name in SKIPGRAM_OPTIONS}
    with _user_errors():
        embeddings = skipgram(args.corpus, args.out, fmt=args.format, reading=_reading(args), model_out=args.model,
                              progress=not args.quiet, **options)
    stats = embeddings.stats
    model = f" and {args.model} (fastText model, {Path(args.model).stat().st_size / 1e6:,.1f} MB)" if args.model else ""
    sys.stdout.write(f"skip-gram: {len(embeddings):,} words of dim {embeddings.dim}; {stats.windows_seen:,} tokens "
                     f"passed over in {stats.seconds:.1f} s\nwrote {args.out} ({args.format}){model}\n")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _user_errors():
        try:
            text = show(args.file, args.word, k=args.k)
        except KeyError as err:  # the word is not in the file; the message says so
            raise SeqlabError(err.args[0]) from err
    sys.stdout.write(text)
    return 0


def _corpus_arguments(p: argparse.ArgumentParser, *, min_count: int) -> None:
    p.add_argument("--corpus", nargs="+", required=True, metavar="FILE",
                   help="UTF-8 text, gzipped or not, one paragraph per line; a folder means its *.txt[.gz] files")
    p.add_argument("--min-count", type=int, default=min_count,
                   help="drop words seen fewer times")
    p.add_argument("--clean", nargs="?", const="letters", default=None, choices=("letters", "ascii"),
                   help="drop sentences that do not look like prose: under 90%% lower-case letters of any script "
                        "(letters, the default), or of a-z only (ascii: Liang 2005, English)")
    p.add_argument("--normalize-numbers", action="store_true", help="1980 -> *DDDD*")
    p.add_argument("--lowercase", action="store_true", help="lower-case every token")
    p.add_argument("--no-tokenize", action="store_true", help="lines are already tokenised sentences")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _training_arguments(p: argparse.ArgumentParser, *, epochs: int) -> None:
    """What C&W and HLBL share; the defaults are those of train_cw / train_hlbl (checked by a test)."""
    _corpus_arguments(p, min_count=3)
    p.add_argument("--epochs", type=int, default=epochs, help="passes over the corpus")
    p.add_argument("--dim", type=int, required=True, help="embedding size")
    p.add_argument("--out", required=True, metavar="VECS", help="vector file to write")
    p.add_argument("--format", choices=VECTOR_FORMATS, default="word2vec", help="layout of the vector file")
    p.add_argument("--heldout", nargs="+", metavar="FILE", help="text scored after training (read like --corpus)")
    p.add_argument("--batch-size", type=int, default=100, help="windows per update")
    p.add_argument("--seed", type=int, default=0, help="random seed (initialisation, order, noise)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--checkpoint", metavar="FILE", help="save progress here; the same command again resumes from it")
    p.add_argument("--max-updates", type=int, help="stop after this many updates (resume later with --checkpoint)")


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default where it has one (not for flags or options that are off by default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def add_parsers(subparsers: Any) -> None:
    """Register ``seqlab features {brown,cw,hlbl,skipgram,show}`` on the top-level subparsers."""
    f = subparsers.add_parser("features", help="induce Brown clusters, train C&W / HLBL / skip-gram embeddings, show "
                              "neighbours")
    verbs = f.add_subparsers(dest="features_command", required=True)
    verb = functools.partial(verbs.add_parser, formatter_class=_Help)

    b = verb("brown", help="induce Brown clusters (Liang's algorithm) into a paths file")
    b.set_defaults(func=cmd_brown)
    _corpus_arguments(b, min_count=1)
    b.add_argument("--clusters", type=int, required=True, help="number of clusters (the tree's leaves)")
    b.add_argument("--out", required=True, metavar="PATHS", help="paths file to write (bitstring, word, count)")
    b.add_argument("--checkpoint", metavar="FILE", help="save the merge state here every 10 minutes; the same "
                   "command goes on from it after an interruption (removed when done)")

    c = verb("cw", help="train C&W embeddings (Collobert & Weston 2008)")
    c.set_defaults(func=cmd_cw)
    _training_arguments(c, epochs=10)
    c.add_argument("--window", type=int, default=5, help="words per window")
    c.add_argument("--hidden", type=int, default=100, help="hidden units of the scorer")
    c.add_argument("--lr-embeddings", type=float, default=0.1, help="learning rate of the embeddings")
    c.add_argument("--lr-network", type=float, default=0.01, help="learning rate of the network")

    h = verb("hlbl", help="train HLBL embeddings (Mnih & Hinton 2009)")
    h.set_defaults(func=cmd_hlbl)
    _training_arguments(h, epochs=5)
    h.add_argument("--context", type=int, default=4, help="context words before the predicted one")
    h.add_argument("--lr", type=float, default=0.05, help="learning rate")
    h.add_argument("--tree", metavar="PATHS", help="Brown paths file whose bit-strings shape the word tree")

    g = verb("skipgram", help="train skip-gram vectors with sub-words (fastText)")
    g.set_defaults(func=cmd_skipgram)
    _corpus_arguments(g, min_count=5)
    g.add_argument("--dim", type=int, default=300, help="vector size")
    g.add_argument("--out", required=True, metavar="VECS", help="vector file to write (the vocabulary's vectors)")
    g.add_argument("--format", choices=VECTOR_FORMATS, default="word2vec", help="layout of the vector file")
    g.add_argument("--model", metavar="BIN", help="also keep the fastText model (sub-word vectors for unseen words; "
                   "taggers read it with format: fasttext_bin)")
    g.add_argument("--window", type=int, default=5, help="context words on each side")
    g.add_argument("--epochs", type=int, default=5, help="passes over the corpus")
    g.add_argument("--negatives", type=int, default=5, help="negative samples per context word")
    g.add_argument("--lr", type=float, default=0.05, help="learning rate")
    g.add_argument("--minn", type=int, default=3, help="shortest character n-gram")
    g.add_argument("--maxn", type=int, default=6, help="longest character n-gram (0: no sub-words)")
    g.add_argument("--bucket", type=int, help="hash buckets for the character n-grams (default: 20 per vocabulary "
                   "word, at most fastText's 2,000,000; the model's size is logged before training)")
    g.add_argument("--threads", type=int, help="cores fastText trains on (default: the cores this process may use, "
                   "at most fastText's 12; fastText 0.9.3 still starts at least 10 threads, pinned to them: see "
                   "features/fasttext_train.py)")

    s = verb("show", help="a word's neighbours in a Brown paths file or a vector file")
    s.add_argument("file", help="paths file (bitstring<TAB>word<TAB>count) or word vectors (word2vec/Turian)")
    s.add_argument("word", help="the word whose neighbours are listed")
    s.add_argument("--k", type=int, default=10, help="how many neighbours")
    s.set_defaults(func=cmd_show)

    from seqlab.cli.ls import add_parser as add_ls_parser  # seqlab features ls {build,show}

    add_ls_parser(verbs, _Help)
