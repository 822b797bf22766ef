"""Feature tables cut down to the words a model needs, for portable model files (``seqlab package``).

A tagger reads its file-based token features (Brown paths, word vectors, LS vectors) when it is loaded.
A packaged model keeps, of each table, the entries of the words it is given (the model's word vocabulary and
the words of its training, dev and test files) and what keeps every other value the model sees unchanged:

* ``brown``: the paths of those words, and one word of every other path, so that the prefix ids a learned
  Brown embedding is indexed by (they number the file's distinct prefixes) stay the same;
* ``embeddings``: the rows those words are looked up in (with lower-casing and number shapes as configured)
  and the file's unknown-word row, already scaled, written as GloVe text with ``scale: null`` (scaling reads
  the whole matrix, which the pruned file no longer holds);
* ``ls``: the table rows of those words; the fastText model stays, so every other word still gets its LS
  vector from sub-words (the same vector its table row held).

A word outside the kept set has no Brown path and no word vector in the packaged model (it gets the
unknown value), where the run directory, reading the whole file, may have had one.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

Members = dict[str, bytes]


def _brown(feature: dict[str, Any], source: Path, prefix: str, words: set[str]) -> Members:
    from features.brown import BrownClusters

    clusters = BrownClusters.load(source, prefixes=tuple(feature.get("prefixes") or (4, 6, 10, 20)))
    kept = {w for w in words if w in clusters.paths}
    covered = {clusters.paths[w] for w in kept}
    for word in sorted(clusters.paths, key=lambda w: (-clusters.counts.get(w, 0), w)):
        if clusters.paths[word] not in covered:  # one word of every other path keeps the prefix ids
            kept.add(word)
            covered.add(clusters.paths[word])
    lines = (f"{clusters.paths[w]}\t{w}\t{clusters.counts.get(w, 0)}\n"
             for w in sorted(kept, key=lambda w: (clusters.paths[w], -clusters.counts.get(w, 0), w)))
    return {prefix: "".join(lines).encode("utf-8")}


def _embeddings(feature: dict[str, Any], source: Path, prefix: str, words: set[str]) -> Members:
    from features.embeddings import EmbeddingFeatures

    vectors = EmbeddingFeatures.load(source, fmt=feature.get("format", "auto"),
                                     lowercase=bool(feature.get("lowercase", False)),
                                     scale=feature.get("scale", 0.1))
    keys = {vectors.key(w) for w in words} - {None}
    if vectors.unknown_word is not None:
        keys.add(vectors.unknown_word)
    out = io.StringIO()
    for key in sorted(keys):  # type: ignore[type-var]
        row = vectors.vectors[vectors.index[key]]  # shape: (dim,), float32, already scaled
        out.write(key + " " + " ".join(repr(float(x)) for x in row) + "\n")  # float32 values print exactly
    if prefix.endswith(".gz"):  # written as plain text
        prefix = prefix[: -len(".gz")]
    feature.update(path=prefix, format="glove", scale=None)
    return {prefix: out.getvalue().encode("utf-8")}


def _ls(feature: dict[str, Any], source: Path, prefix: str, words: set[str]) -> Members:
    from features import ls

    table = ls.LSVectors.load(source)
    keep = sorted({w.lower() for w in words} & set(table.index))
    rows = np.array([table.index[w] for w in keep], dtype=np.int64)
    saved = io.BytesIO()
    np.save(saved, table.table[rows] if len(rows) else table.table[:0], allow_pickle=False)
    members = {f"{prefix}/{ls.WORDS}": "".join(w + "\n" for w in keep).encode("utf-8"),
               f"{prefix}/{ls.TABLE}": saved.getvalue()}
    for name in (ls.MANIFEST, ls.TYPES, ls.TYPE_VECTORS, ls.MODEL):  # the sub-word model stays whole
        if (source / name).is_file():
            members[f"{prefix}/{name}"] = (source / name).read_bytes()
    return members


PRUNERS: dict[str, Callable[[dict[str, Any], Path, str, set[str]], Members]] = {
    "brown": _brown,
    "embeddings": _embeddings,
    "ls": _ls,
}


def pruned_members(feature: dict[str, Any], source: Path, prefix: str, words: set[str]) -> Members:
    """The archive members (name → bytes, under ``prefix``) of feature ``feature`` (its config mapping, updated
    where the pruned file is read otherwise) from ``source``, kept to ``words``."""
    return PRUNERS[feature["type"]](feature, source, prefix, words)


def run_words(run_dir: Path) -> set[str]:
    """The words a tagging run knows: its word vocabulary and the tokens of its data files that can be read."""
    from seqlab.core import rundir
    from seqlab.core.errors import SeqlabError
    from seqlab.data.dataset import read_split
    from seqlab.data.vocab import load_vocabs
    from seqlab.tagging.config import load_config

    words = set(load_vocabs(run_dir / rundir.VOCABS)["words"].itos)
    config = load_config(run_dir / rundir.CONFIG)
    for split in ("train", "dev", "test"):
        if getattr(config.data, split):
            try:
                words.update(_tokens(read_split(config.data, split).tokens))
            except (SeqlabError, OSError):
                continue  # a data file that is not here: the vocabulary alone
    return words


def _tokens(sentences: Iterable[Iterable[str]]) -> Iterable[str]:
    return (w for sentence in sentences for w in sentence)


def copy_whole(source: Path, prefix: str) -> Members:
    """Every file of ``source`` (a file or a folder) as members under ``prefix``, unpruned."""
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    return {(prefix if f == source else f"{prefix}/{f.relative_to(source).as_posix()}"): f.read_bytes()
            for f in files}

