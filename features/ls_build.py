"""Build LS vectors (Ghaddar & Langlais, COLING 2018, section 3) from typed corpora.

:func:`build_ls` reads typed column files (:func:`features.ls_corpus.read_typed`), writes one
training line per sentence: the sentence concatenated with its annotated version, in which each
mention is replaced by its type tokens (``/person /person/politician``), lower-cased; optionally
adds sentences of unlabelled corpora onto which the typed corpus's mention strings were projected
(:mod:`features.ls_distant`); trains fastText skip-gram (100 dimensions, minimum count 5, window 5,
as the paper); and saves the artefact folder :class:`features.ls.LSVectors` reads, with a
``manifest.json`` that records every source (path, size, SHA-256), the options and the counts.
The folder is written under a temporary name and renamed into place when complete.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from features.ls import FORMAT, MANIFEST, MODEL, TABLE, TYPE_VECTORS, TYPES, WORDS, LSVectors, import_fasttext, \
    ls_from_vectors
from features.fasttext_train import MIN_THREADS, train_unsupervised
from features.ls_corpus import PathLike, TypedSentence, detect_separator, read_typed, sha256_file, training_line, \
    type_tokens
from features.ls_distant import DistantOptions, DistantStats, Gazetteer, project

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LSOptions:
    """fastText and corpus options. The paper's: skip-gram, ``dim`` 100, ``min_count`` 5, ``window`` 5.

    ``bucket`` (fastText's sub-word hash table; fastText's default is 2,000,000 rows, 800 MB at
    100 dimensions) is smaller here: the typed corpus has tens of thousands of word types.
    """

    dim: int = 100
    min_count: int = 5
    window: int = 5
    epochs: int = 5
    lr: float = 0.05
    minn: int = 3
    maxn: int = 6
    bucket: int = 200_000
    threads: int = MIN_THREADS  # fewer are raised to 10: see features.fasttext_train
    hierarchy_sep: str | None = "auto"
    column: int = -1  # the tag column of the typed files

    def __post_init__(self) -> None:
        for name in ("dim", "min_count", "window", "epochs", "bucket", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, but got {getattr(self, name)}")
        if not 0 <= self.minn <= self.maxn:
            raise ValueError(f"expected 0 <= minn <= maxn, but got minn {self.minn} and maxn {self.maxn}")
        if self.lr <= 0:
            raise ValueError(f"lr must be positive, but got {self.lr}")


def build_ls(typed: Sequence[PathLike], out: PathLike, *, options: LSOptions = LSOptions(),
             unlabeled: Sequence[PathLike] = (), distant: DistantOptions | None = None,
             overwrite: bool = False, progress: bool = True) -> LSVectors:
    """Learn LS vectors from the ``typed`` files (and, with ``distant``, the ``unlabeled`` corpora) into ``out``.

    Returns the loaded :class:`LSVectors`; ``vectors.manifest`` holds the sources, counts and timings.
    """
    start = time.perf_counter()
    out = Path(out)
    if not typed:
        raise ValueError("give at least one typed corpus file")
    if out.exists() and not (overwrite and out.is_dir()):
        raise ValueError(f"{out} already exists; remove it, give another --out, or pass --overwrite")
    if distant is not None and not unlabeled:
        raise ValueError("distant supervision needs unlabelled corpora (--unlabeled FILE ...)")
    sources, sentences = _read_sources(typed, options.column)
    separators = _separators(sources, options.hierarchy_sep)
    types_of = _type_cache(separators)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        text = work / "train.txt"
        with open(text, "w", encoding="utf-8") as handle:
            counts = _write_lines(handle, sentences, types_of)
            dstats = _write_distant(handle, sentences, unlabeled, distant, types_of) if distant else None
        trained = time.perf_counter()
        model = _train(text, options, progress)
        seconds = {"fasttext": round(time.perf_counter() - trained, 1)}
        text.unlink()
        vectors = _save(model, work, types_of, counts)
        seconds["total"] = round(time.perf_counter() - start, 1)
        manifest = {
            "format": FORMAT, "paper": "Ghaddar & Langlais, COLING 2018, section 3", "sources": sources,
            "unlabeled": [_describe(p) for p in unlabeled] if distant else [],
            "options": asdict(options), "hierarchy_separator": _common_separator(sources),
            "fasttext": {"bucket": model.f.getArgs().bucket, "threads": model.f.getArgs().thread},
            "distant": None if distant is None else {"options": asdict(distant), "stats": dstats.to_dict()},
            "counts": {**{k: v for k, v in counts.items() if k != "type_mentions"},
                       "vocabulary": len(vectors), "types": vectors.dim},
            "type_mentions": {t: counts["type_mentions"].get(t, 0) for t in vectors.types},
            "seconds": seconds, "bytes": sum(f.stat().st_size for f in work.iterdir()),
        }
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    logger.info("LS vectors: %d words x %d types in %s (%.1f s)", len(vectors), vectors.dim, out, seconds["total"])
    return LSVectors.load(out)


def _describe(path: PathLike) -> dict[str, Any]:
    return {"path": str(Path(path).resolve()), "bytes": Path(path).stat().st_size, "sha256": sha256_file(path)}


def _replace(work: Path, out: Path) -> None:
    """Move the finished folder into place (replacing an old one only when asked to overwrite)."""
    work.chmod(0o755)  # mkdtemp made it private
    if out.exists():
        shutil.rmtree(out)
    os.replace(work, out)


def _read_sources(typed: Sequence[PathLike], column: int) -> tuple[list[dict[str, Any]], list[TypedSentence]]:
    """All sentences of the typed files, and a manifest entry per file (path, bytes, SHA-256, counts, labels)."""
    sources, sentences = [], []
    for item in typed:
        path = Path(item)
        found = list(read_typed(path, column=column))  # FileNotFoundError / FeatureFileError name the file
        sources.append({**_describe(path), "sentences": len(found), "mentions": sum(len(s.mentions) for s in found),
                        "labels": sorted({m.label for s in found for m in s.mentions})})
        sentences.extend(found)
        logger.info("typed corpus %s: %d sentences, %d mentions", path, len(found), sources[-1]["mentions"])
    return sources, sentences


def _separators(sources: list[dict[str, Any]], hierarchy_sep: str | None) -> dict[str, str | None]:
    """The level separator of every label. With ``"auto"`` it is detected per file, so a two-level corpus
    (Few-NERD's ``person-politician``) keeps its hierarchy beside a flat one (OntoNotes' ``WORK_OF_ART``);
    each source's entry records its separator. A label two files would split differently is refused."""
    separators: dict[str, str | None] = {}
    origin: dict[str, str] = {}
    for source in sources:
        labels = source.pop("labels")
        sep = detect_separator(labels, hierarchy_sep)
        source["hierarchy_separator"] = sep
        for label in labels:
            if label in separators and separators[label] != sep:
                raise ValueError(
                    f"type {label!r} is split on {separators[label]!r} in {origin[label]} but on {sep!r} in "
                    f"{source['path']}; give --hierarchy-sep to use one separator for every file")
            separators[label], origin[label] = sep, source["path"]
    return separators


def _common_separator(sources: list[dict[str, Any]]) -> str | None:
    """The separator every source shares (None when they differ: see each source's entry)."""
    found = {source["hierarchy_separator"] for source in sources}
    return found.pop() if len(found) == 1 else None


def _type_cache(separators: dict[str, str | None]) -> Callable[[str], tuple[str, ...]]:
    cache: dict[str, tuple[str, ...]] = {}

    def types_of(label: str) -> tuple[str, ...]:
        if label not in cache:
            cache[label] = type_tokens(label, separators.get(label))
        return cache[label]

    return types_of


def _write_lines(handle: TextIO, sentences: Iterable[TypedSentence], types_of: Callable[[str], Sequence[str]],
                 *, annotated: bool = True) -> dict[str, Any]:
    """One training line per sentence: with its annotated version, or (``annotated=False``) the words alone."""
    n_sentences = n_mentions = n_tokens = 0
    per_type: Counter[str] = Counter()
    for sentence in sentences:
        if annotated:
            line = training_line(sentence.tokens, sentence.mentions, types_of)
        else:
            line = " ".join(token.lower() for token in sentence.tokens)
        handle.write(line + "\n")
        n_sentences += 1
        n_mentions += len(sentence.mentions)
        n_tokens += line.count(" ") + 1
        per_type.update(t for m in sentence.mentions for t in types_of(m.label))
    return {"sentences": n_sentences, "mentions": n_mentions, "training_tokens": n_tokens, "type_mentions": per_type}


def _write_distant(handle: TextIO, sentences: Sequence[TypedSentence], unlabeled: Sequence[PathLike],
                   options: DistantOptions, types_of: Callable[[str], Sequence[str]]) -> DistantStats:
    from features.corpus import read_corpus

    stats = DistantStats()
    gazetteer = Gazetteer.from_typed(sentences, options, stats)
    projected = project(gazetteer, read_corpus(list(unlabeled)), options, stats)
    added = _write_lines(handle, _bar(projected, options.max_sentences), types_of, annotated=options.annotate)
    logger.info("distant supervision: %d of %d unlabelled sentences kept, %d mentions projected",
                stats.sentences_kept, stats.sentences_scanned, stats.mentions_projected)
    stats.training_tokens = added["training_tokens"]
    return stats


def _bar(items: Iterable[TypedSentence], total: int) -> Iterable[TypedSentence]:
    from tqdm import tqdm

    return tqdm(items, total=total, unit=" projected sentences", disable=None, mininterval=10.0)


def _train(text: Path, options: LSOptions, progress: bool) -> Any:
    import_fasttext()  # a clear error when fastText is missing
    logger.info("training fastText skip-gram on %s (dim %d, minCount %d, window %d, %d epochs)", text,
                options.dim, options.min_count, options.window, options.epochs)
    return train_unsupervised(
        str(text), model="skipgram", dim=options.dim, min_count=options.min_count, ws=options.window,
        epoch=options.epochs, lr=options.lr, minn=options.minn, maxn=options.maxn, bucket=options.bucket,
        thread=options.threads, verbose=2 if progress else 0,
    )


def _save(model: Any, folder: Path, types_of: Callable[[str], Sequence[str]], counts: dict[str, Any]) -> LSVectors:
    """Write the tables and the model into ``folder``; types seen fewer than min_count times are dropped."""
    vocabulary = [w for w in model.get_words() if w != "</s>"]
    all_types = sorted(counts["type_mentions"])
    known = set(vocabulary)
    types = [t for t in all_types if t in known]
    if len(types) < len(all_types):
        logger.warning("types below the minimum count, left out: %s", sorted(set(all_types) - set(types)))
    if not types:
        raise ValueError("no type token reached the minimum count; the typed corpus is too small for these options")
    words = [w for w in vocabulary if w not in counts["type_mentions"]]
    type_vectors = np.stack([model.get_word_vector(t) for t in types]).astype(np.float32)  # shape: (k, d)
    word_vectors = np.stack([model.get_word_vector(w) for w in words]).astype(np.float32)  # shape: (V, d)
    table = ls_from_vectors(word_vectors, type_vectors)  # shape: (V, k)
    (folder / TYPES).write_text("".join(t + "\n" for t in types), encoding="utf-8")
    (folder / WORDS).write_text("".join(w + "\n" for w in words), encoding="utf-8")
    np.save(folder / TYPE_VECTORS, type_vectors, allow_pickle=False)
    np.save(folder / TABLE, table, allow_pickle=False)
    model.save_model(str(folder / MODEL))
    return LSVectors(types, type_vectors, words, table, model=model, name=str(folder))
