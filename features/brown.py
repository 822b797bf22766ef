"""Brown clusters as word features: induction, Liang's ``paths`` files, prefix features.

Brown et al. (1992) cluster words so that a class bigram model keeps as much average
mutual information (AMI) between adjacent classes as it can; the merge history is a
binary tree and a word's bit-string is its path from the root (0 = left). Prefixes of the
bit-string are coarser clusters, used as features by Miller et al. (2004), Koo et al.
(2008), Ratinov & Roth (2009) and Turian et al. (2010), who take prefix lengths 4, 6, 10
and 20 (the default here).

- :func:`induce_brown` learns clusters with Liang's (2005) windowed greedy algorithm
  (implemented in :mod:`features.brown_induce`); :func:`ami` scores any clustering.
- :class:`BrownClusters` reads and writes wcluster's ``paths`` format
  (``bitstring<TAB>word<TAB>count``), so clusters made by Liang's C++ ``wcluster`` load too,
  and is a discrete extractor in the sense of :mod:`features.base`.

Two lines from any system::

    clusters = BrownClusters.load("paths")
    clusters.feature_dicts(["EU", "rejects", "German"])  # [{"brown4": "0110", ...}, ...]
"""
from __future__ import annotations

import gzip
import logging
from array import array
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from features.atomic import atomic_open
from features.base import FeatureFileError

logger = logging.getLogger(__name__)

DEFAULT_PREFIXES = (4, 6, 10, 20)
_FLUSH_TOKENS = 1 << 18  # tokens encoded per numpy batch while counting
_MERGE_CELLS = 1 << 22  # consolidate bigram batches beyond this many cells (or the merged ones' size)


@dataclass(frozen=True, eq=False)
class BigramCounts:
    """Word counts and within-sentence bigram counts, words ranked by falling count (ties alphabetically).

    ``fwd_*`` is a CSR table: word → the words to its right, with counts. ``tokens`` and
    ``types`` describe the corpus before ``min_count`` was applied.
    """

    words: list[str]
    counts: np.ndarray  # shape: (V,), int64
    fwd_ptr: np.ndarray  # shape: (V + 1,), int64
    fwd_idx: np.ndarray  # shape: (nnz,), int32
    fwd_cnt: np.ndarray  # shape: (nnz,), float64
    tokens: int
    types: int

    def matrix(self) -> Any:
        """The word bigram counts as a ``scipy.sparse.csr_matrix`` of shape ``(V, V)``."""
        from scipy.sparse import csr_matrix

        v = len(self.words)
        return csr_matrix((self.fwd_cnt, self.fwd_idx, self.fwd_ptr), shape=(v, v))


def count_bigrams(sentences: Iterable[Sequence[str]], *, min_count: int = 1) -> BigramCounts:
    """Count words and bigrams of adjacent tokens in one pass (the sentences may come from a generator).

    Bigrams never bridge two sentences. Words seen fewer than ``min_count`` times are dropped
    with their bigrams (as in wcluster; the words around them are not joined).
    """
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be an integer >= 1, but got {min_count!r}")
    index: dict[str, int] = {}
    ids = array("q")  # 8 bytes a token, not a Python int object
    lengths = array("q")
    batches: list[tuple[np.ndarray, np.ndarray]] = []
    unigrams = np.zeros(0, dtype=np.int64)
    for number, sentence in enumerate(sentences, start=1):
        if isinstance(sentence, str):
            raise TypeError(f"sentence {number} is a str ({sentence[:40]!r}); give token lists, e.g. line.split()")
        ids.extend([index.setdefault(token, len(index)) for token in sentence])
        lengths.append(len(sentence))
        if len(ids) >= _FLUSH_TOKENS:
            unigrams = _flush(ids, lengths, len(index), unigrams, batches)
    unigrams = _flush(ids, lengths, len(index), unigrams, batches)
    tokens = int(unigrams.sum())
    if tokens == 0:
        raise ValueError("empty corpus: the sentences hold no tokens")
    keys, cells = _consolidate(batches)
    batches.clear()
    words, counts = list(index), unigrams.tolist()
    kept = sorted((i for i in range(len(words)) if counts[i] >= min_count), key=lambda i: (-counts[i], words[i]))
    if not kept:
        raise ValueError(f"no word occurs min_count={min_count} times or more (the most frequent occurs {max(counts)})")
    rank = np.full(len(words), -1, dtype=np.int64)
    rank[np.array(kept, dtype=np.int64)] = np.arange(len(kept))
    left, right = rank[keys >> 32], rank[keys & 0xFFFFFFFF]
    ok = (left >= 0) & (right >= 0)
    left, right, cells = left[ok], right[ok], cells[ok]
    v = len(kept)
    order = np.argsort(left * v + right)
    ptr = np.zeros(v + 1, dtype=np.int64)
    np.cumsum(np.bincount(left, minlength=v), out=ptr[1:])
    return BigramCounts([words[i] for i in kept], unigrams[kept], ptr, right[order].astype(np.int32), cells[order],
                        tokens=tokens, types=len(words))


def _flush(ids: array, lengths: array, vocab: int, unigrams: np.ndarray,
           batches: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Turn the buffered token ids into unique bigram keys (left << 32 | right) with counts."""
    if not ids:
        return unigrams
    arr = np.array(ids, dtype=np.int64)
    last = np.cumsum(np.array(lengths, dtype=np.int64)) - 1
    joined = np.ones(arr.size, dtype=bool)
    joined[last[last >= 0]] = False  # the last token of a sentence has no right neighbour
    pos = np.flatnonzero(joined)
    keys, cells = np.unique((arr[pos] << 32) | arr[pos + 1], return_counts=True)
    batches.append((keys, cells.astype(np.float64)))
    pending = sum(k.size for k, _ in batches[1:])
    if pending > max(_MERGE_CELLS, batches[0][0].size):  # geometric: O(n log n) over the corpus
        batches[:] = [_consolidate(batches)]
    grown = np.zeros(vocab, dtype=np.int64)
    grown[: unigrams.size] = unigrams
    grown += np.bincount(arr, minlength=vocab)
    del ids[:], lengths[:]
    return grown


def _consolidate(batches: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not batches:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    keys = np.concatenate([k for k, _ in batches])
    if keys.size == 0:
        return keys, np.zeros(0)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    cells = np.concatenate([c for _, c in batches])[order]
    del order
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.add.reduceat(cells, starts)


def ami(bigram_counts: Any, clusters: Sequence[int] | np.ndarray) -> float:
    """Average mutual information, in bits, of the class bigram model of a clustering.

    ``bigram_counts`` is a ``(V, V)`` array or scipy sparse matrix of word bigram counts
    (row word followed by column word), e.g. :meth:`BigramCounts.matrix`; ``clusters``
    gives each word's class label (any integers).
    """
    if hasattr(bigram_counts, "tocoo"):
        coo = bigram_counts.tocoo()
        rows, cols, vals, shape = coo.row, coo.col, np.asarray(coo.data, dtype=np.float64), coo.shape
    else:
        table = np.asarray(bigram_counts, dtype=np.float64)
        if table.ndim != 2:
            raise ValueError(f"bigram_counts must be a 2-D (V, V) table, but got shape {table.shape}")
        rows, cols = np.nonzero(table)
        vals, shape = table[rows, cols], table.shape
    labels = np.asarray(clusters)
    if shape[0] != shape[1] or labels.shape != (shape[0],):
        raise ValueError(f"bigram_counts must be (V, V) and clusters (V,), but got {shape} and {labels.shape}")
    if vals.size and vals.min() < 0:
        raise ValueError(f"bigram counts must be non-negative, but got {vals.min()}")
    from features.brown_induce import ami_from_table  # scipy, only when inducing or scoring

    _, lab = np.unique(labels, return_inverse=True)
    k = int(lab.max()) + 1 if lab.size else 1
    _, cell = np.unique(lab[rows].astype(np.int64) * k + lab[cols], return_inverse=True)
    return ami_from_table(np.bincount(cell, weights=vals), np.bincount(lab[rows], vals, k),
                          np.bincount(lab[cols], vals, k))


def induce_brown(sentences: Iterable[Sequence[str]], num_clusters: int, *, min_count: int = 1,
                 progress: bool = False, checkpoint: str | os.PathLike[str] | None = None) -> "BrownClusters":
    """Brown clusters of a corpus of token lists, by Liang's (2005) windowed algorithm.

    Bigrams join adjacent tokens within a sentence and never bridge sentences (wcluster
    reads its whole input as one stream; with one document per line the two barely differ).
    ``.ami`` of the result is the AMI (bits) of the class bigram model at ``num_clusters``
    clusters, before they merge into the hierarchy; ``.seconds`` the time taken.
    With ``checkpoint`` (a file) the merge state is saved there every 10 minutes and a later
    call with the same corpus and settings goes on from it (the clusters are the same).
    """
    from features.brown_induce import induce  # scipy, only when inducing or scoring

    if isinstance(num_clusters, bool) or not isinstance(num_clusters, int) or num_clusters < 2:
        raise ValueError(f"num_clusters must be an integer >= 2, but got {num_clusters!r}")
    start = time.perf_counter()
    data = count_bigrams(sentences, min_count=min_count)
    if len(data.words) < num_clusters:
        raise ValueError(f"the corpus has {len(data.words)} distinct words (with count >= min_count={min_count}), "
                         f"fewer than num_clusters={num_clusters}")
    paths, final_ami = induce(data, num_clusters, progress=progress, checkpoint=checkpoint)
    seconds = time.perf_counter() - start
    logger.info("Brown clusters: %d words into %d clusters in %.1f s, AMI %.4f bits",
                len(data.words), num_clusters, seconds, final_ami)
    clusters = BrownClusters(paths, dict(zip(data.words, data.counts.tolist())), ami=final_ami, seconds=seconds)
    clusters.tokens, clusters.types = data.tokens, data.types
    return clusters


class BrownClusters:
    """Word → bit-string of a Brown clustering (Brown et al. 1992), as prefix features.

    ``paths`` maps each word to its bit-string and ``counts`` to its corpus count. Lookup is
    exact (case-sensitive), as the clusters were induced. For each prefix length ``d`` in
    ``prefixes`` a word has the feature ``brown{d}`` = the first ``d`` bits (the whole string
    when shorter; Ratinov & Roth 2009; Turian et al. 2010):

    - :meth:`feature_dicts`: crfsuite-style dicts; an unknown word gets no ``brown`` keys.
    - :meth:`prefix_ids`: ``(len, len(prefixes))`` ints for learned prefix embeddings; id 0
      is the unknown word, ids ``1..`` the prefixes at that depth (see :attr:`vocab_sizes`).
    - ``__call__``: one-hot per depth, ``dim = sum(vocab_sizes)`` (an unknown slot per depth).
    """

    def __init__(self, paths: Mapping[str, str], counts: Mapping[str, int] | None = None, *,
                 prefixes: Sequence[int] = DEFAULT_PREFIXES, ami: float | None = None,
                 seconds: float | None = None) -> None:
        if not paths:
            raise ValueError("no clusters: paths is empty")
        bad = next((w for w, p in paths.items() if not isinstance(p, str) or not p or p.strip("01")), None)
        if bad is not None:
            raise ValueError(f"bit-strings must be non-empty strings of 0s and 1s, but word {bad!r} has {paths[bad]!r}")
        if not prefixes or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in prefixes):
            raise ValueError(f"prefixes must be positive integers, but got {tuple(prefixes)!r}")
        self.paths, self.counts = dict(paths), dict(counts or {})
        self.prefixes = tuple(prefixes)
        self.ami, self.seconds = ami, seconds
        self.tokens: int | None = None
        self.types: int | None = None
        distinct = sorted(set(self.paths.values()))
        vocabs = [{p: i for i, p in enumerate(sorted({q[:d] for q in distinct}), start=1)} for d in self.prefixes]
        self.vocab_sizes = tuple(len(v) + 1 for v in vocabs)  # + the unknown id 0
        self._ids = {p: [v[p[:d]] for d, v in zip(self.prefixes, vocabs)] for p in distinct}
        self._feats = {p: tuple((f"brown{d}", p[:d]) for d in self.prefixes) for p in distinct}
        self._offsets = np.cumsum((0,) + self.vocab_sizes[:-1])
        self._by_path: dict[str, list[str]] | None = None

    @property
    def dim(self) -> int:
        return int(sum(self.vocab_sizes))

    @property
    def num_clusters(self) -> int:
        return len(self._ids)

    def __len__(self) -> int:
        return len(self.paths)

    def __contains__(self, word: object) -> bool:
        return word in self.paths

    def feature_dicts(self, tokens: Sequence[str]) -> list[dict[str, Any]]:
        out = []
        for token in tokens:
            path = self.paths.get(token)
            out.append(dict(self._feats[path]) if path is not None else {})
        return out

    def prefix_ids(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), len(prefixes)), int64
        unknown = [0] * len(self.prefixes)
        rows = [self._ids.get(self.paths.get(t), unknown) for t in tokens]  # type: ignore[arg-type]
        return np.array(rows, dtype=np.int64).reshape(len(rows), len(self.prefixes))

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        ids = self.prefix_ids(tokens) + self._offsets  # shape: (len, depths)
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        out[np.arange(len(tokens))[:, None], ids] = 1.0
        return out

    def nearest(self, word: str, k: int = 10) -> list[tuple[str, int]]:
        """The ``k`` words whose bit-strings share the longest prefix with ``word``'s, with that length.

        Cluster-mates (the whole bit-string shared) come first; ties go to the more frequent word.
        """
        if word not in self.paths:
            raise KeyError(f"{word!r} is not in the clusters ({len(self.paths)} words)")
        if self._by_path is None:
            by_path: dict[str, list[str]] = {}
            for w in self.paths:
                by_path.setdefault(self.paths[w], []).append(w)
            self._by_path = by_path
        target = self.paths[word]
        shared = {p: len(os.path.commonprefix([p, target])) for p in self._by_path}
        out: list[tuple[str, int]] = []
        for level in sorted(set(shared.values()), reverse=True):
            group = [w for p, n in shared.items() if n == level for w in self._by_path[p] if w != word]
            out.extend((w, level) for w in sorted(group, key=lambda w: (-self.counts.get(w, 0), w)))
            if len(out) >= k:
                break
        return out[:k]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write Liang's ``paths`` format atomically: ``bitstring<TAB>word<TAB>count`` per line."""
        bad = next((w for w in self.paths if not w or any(c in w for c in "\t\n\r")), None)
        if bad is not None:
            raise ValueError(f"words must be non-empty and hold no tab or line break to be saved, but got {bad!r}")
        path = Path(path)
        with atomic_open(path, "wb") as raw:
            out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if path.name.endswith(".gz") else raw
            for w in sorted(self.paths, key=lambda w: (self.paths[w], -self.counts.get(w, 0), w)):
                out.write(f"{self.paths[w]}\t{w}\t{self.counts.get(w, 0)}\n".encode("utf-8"))
            if out is not raw:
                out.close()

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, prefixes: Sequence[int] = DEFAULT_PREFIXES) -> "BrownClusters":
        """Read a ``paths`` file (ours or wcluster's; gzipped if it starts with the gzip magic bytes).

        A malformed line raises :class:`~features.base.FeatureFileError` naming the file and line.
        """
        paths: dict[str, str] = {}
        counts: dict[str, int] = {}
        first_line: dict[str, int] = {}
        with open(path, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as handle:
            for number, raw in enumerate(handle, start=1):
                word, bits, count = _parse_line(path, number, raw)
                if word in first_line:
                    raise FeatureFileError(str(path), number, f"word {word!r} appears twice (first on line {first_line[word]})")
                first_line[word] = number
                paths[word], counts[word] = bits, count
        if not paths:
            raise FeatureFileError(str(path), 1, "the file is empty: expected lines 'bitstring<TAB>word<TAB>count'")
        return cls(paths, counts, prefixes=prefixes)


def _parse_line(path: str | os.PathLike[str], number: int, raw: bytes) -> tuple[str, str, int]:
    try:
        line = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as err:
        raise FeatureFileError(str(path), number, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    fields = line.split("\t")
    if len(fields) != 3:
        raise FeatureFileError(str(path), number, f"expected 3 tab-separated fields (bitstring, word, count), "
                                                  f"but got {len(fields)}: {line[:80]!r}")
    bits, word, count = fields
    if not bits or bits.strip("01"):
        raise FeatureFileError(str(path), number, f"the bit-string must be 0s and 1s, but got {bits[:80]!r}")
    if not word:
        raise FeatureFileError(str(path), number, "the word is empty")
    if not (count.isascii() and count.isdigit()):
        raise FeatureFileError(str(path), number, f"the count must be a non-negative integer, but got {count[:40]!r}")
    return word, bits, int(count)
