"""Turn sentences into padded id tensors once, then cut batches by tensor indexing.

A data set is encoded up front into ``(N, T_max)`` matrices of word, capitalization
and word-type ids. Characters and fixed feature vectors are stored per word
*type*, so a batch runs the character BiLSTM only over the distinct words it
contains. Training batches are bucketed by length to keep padding small.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch

from seqlab.data.vocab import Vocab, WordVocab, capitalization

#: Longer words are clipped to their first and last MAX_WORD_CHARS / 2 characters for the char BiLSTM.
MAX_WORD_CHARS = 40

FeatureFn = Callable[[Sequence[str]], np.ndarray]  # word types -> (n, dim) fixed vectors


@dataclass
class Batch:
    """One padded batch, batch-first."""

    words: torch.Tensor  # shape: (B, T) word ids, 0 = padding
    caps: torch.Tensor  # shape: (B, T) capitalization ids
    mask: torch.Tensor  # shape: (B, T) bool, left-aligned
    chars: torch.Tensor  # shape: (U, C) char ids of the U distinct word types in the batch
    char_lengths: torch.Tensor  # shape: (U,)
    type_index: torch.Tensor  # shape: (B, T) row of `chars` for each token
    features: torch.Tensor | None  # shape: (B, T, F) fixed feature vectors
    tags: torch.Tensor | None  # shape: (B, T) label ids
    indices: torch.Tensor  # shape: (B,) positions of the sentences in their data set
    char_vectors: torch.Tensor | None = None  # shape: (B, T, C_dim) precomputed spelling vectors (decoding)
    feature_ids: torch.Tensor | None = None  # shape: (B, T, k) ids of discrete features (Brown prefixes)
    types: torch.Tensor | None = None  # shape: (B, T) word-type ids, on the CPU: with `type_strings`, the words
    type_strings: list[str] | None = None  # the word of each type id
    targets: torch.Tensor | None = None  # shape: (B, T, K) a distribution over the labels per token (a teacher's)

    @property
    def tokens(self) -> list[tuple[str, ...]] | None:
        """The words, for a contextual (transformer) embedder: built when asked for, not for every batch."""
        if not self.type_strings or self.types is None:
            return None
        words, lengths = self.type_strings, self.mask.sum(dim=1).tolist()
        return [tuple(words[t] for t in row[:n]) for row, n in zip(self.types.tolist(), lengths)]

    def to(self, device: torch.device) -> "Batch":
        if device.type == "cpu":
            return self
        move = lambda t: None if t is None else t.to(device, non_blocking=True)  # noqa: E731
        return Batch(
            move(self.words), move(self.caps), move(self.mask), move(self.chars), move(self.char_lengths),
            move(self.type_index), move(self.features), move(self.tags), self.indices, move(self.char_vectors),
            move(self.feature_ids), self.types, self.type_strings, move(self.targets),
        )


@dataclass
class Encoded:
    """A data set as id matrices plus per-type character and feature tables."""

    words: torch.Tensor  # shape: (N, T_max)
    caps: torch.Tensor  # shape: (N, T_max)
    types: torch.Tensor  # shape: (N, T_max) word-type ids, 0 = padding type
    lengths: torch.Tensor  # shape: (N,)
    type_chars: torch.Tensor  # shape: (n_types, C_max)
    type_char_lengths: torch.Tensor  # shape: (n_types,)
    type_features: torch.Tensor | None  # shape: (n_types, F)
    tags: torch.Tensor | None = None  # shape: (N, T_max)
    type_feature_ids: torch.Tensor | None = None  # shape: (n_types, k) discrete feature ids
    type_strings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.lengths.shape[0])


def encode(
    sentences: Sequence[Sequence[str]],
    vocabs: dict[str, Vocab],
    *,
    tags: Sequence[Sequence[str]] | None = None,
    features: FeatureFn | None = None,
    discrete: Callable[[Sequence[str]], np.ndarray] | None = None,
    columns: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> Encoded:
    """Encode tokenised sentences (and optionally their labels) into id matrices.

    With ``columns`` (other data columns per token, e.g. ``{"pos": ...}``), a type is a word
    together with its values in those columns, and ``features`` is called as
    ``features(words, {column: values})`` with one entry per type.
    """
    words_vocab = vocabs["words"]
    if not isinstance(words_vocab, WordVocab):
        raise TypeError(f"vocabs['words'] must be a WordVocab, but got {type(words_vocab).__name__}")
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    t_max = max(1, int(lengths.max(initial=1)))
    types, type_list, type_columns = _index_types(sentences, lengths, t_max, columns)
    word_of_type = torch.tensor([0] + words_vocab.indices(type_list[1:]), dtype=torch.long)
    cap_of_type = torch.tensor([0] + list(map(capitalization, type_list[1:])), dtype=torch.long)
    encoded = Encoded(
        words=word_of_type[types],
        caps=cap_of_type[types],
        types=types,
        lengths=torch.from_numpy(lengths),
        type_chars=torch.zeros(0),
        type_char_lengths=torch.zeros(0),
        type_features=None,
        type_strings=type_list,
    )
    encoded.type_chars, encoded.type_char_lengths = _char_table(type_list, vocabs["chars"], MAX_WORD_CHARS)
    if features is not None:
        table = np.asarray(features(type_list[1:]) if columns is None else
                           features(type_list[1:], {c: v[1:] for c, v in type_columns.items()}), dtype=np.float32)
        encoded.type_features = torch.cat([torch.zeros(1, table.shape[1]), torch.from_numpy(table)])
    if discrete is not None:
        ids = torch.from_numpy(np.asarray(discrete(type_list[1:]), dtype=np.int64))
        encoded.type_feature_ids = torch.cat([torch.zeros(1, ids.shape[1], dtype=torch.long), ids])
    if tags is not None:
        encoded.tags = _encode_tags(tags, vocabs["tags"], t_max)
    return encoded


def _index_types(
    sentences: Sequence[Sequence[str]], lengths: np.ndarray, width: int,
    columns: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> tuple[torch.Tensor, list[str], dict[str, list[str]]]:
    """Type ids per token (0 = padding), each type's word and its column values, in order of first appearance.

    A type is a word, or with ``columns`` a word and its values in them (``("can", "MD")``).
    """
    names = sorted(columns or {})
    type_ids: dict[object, int] = {("",) * (1 + len(names)) if names else "": 0}
    keys: Iterable[object] = chain.from_iterable(sentences)  # every token, sentence by sentence
    if names:
        for i, sentence in enumerate(sentences):
            values = [columns[c][i] for c in names]  # type: ignore[index]
            if any(len(v) != len(sentence) for v in values):
                raise ValueError(f"sentence {i}: every column must match the tokens in length, but got "
                                 f"{[len(v) for v in values]} values for {len(sentence)} tokens")
        keys = zip(keys, *(chain.from_iterable(columns[c]) for c in names))  # type: ignore[index]
    types = np.zeros((len(sentences), width), dtype=np.int64)
    types[np.arange(width)[None, :] < lengths[:, None]] = [type_ids.setdefault(k, len(type_ids)) for k in keys]
    if not names:
        return torch.from_numpy(types), list(type_ids), {}  # type: ignore[arg-type]
    keys_list = list(type_ids)
    return (torch.from_numpy(types), [k[0] for k in keys_list],  # type: ignore[index]
            {c: [k[j + 1] for k in keys_list] for j, c in enumerate(names)})  # type: ignore[index]


def _char_table(type_list: list[str], chars: Vocab, max_chars: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Char ids per word type; a word longer than ``max_chars`` keeps its first ``ceil(max_chars / 2)``
    and its last ``floor(max_chars / 2)`` characters."""
    tail = max_chars // 2
    head = max_chars - tail
    clipped = [w if len(w) <= max_chars else w[:head] + w[len(w) - tail :] for w in type_list[1:]]
    lengths = np.fromiter(map(len, clipped), dtype=np.int64, count=len(clipped))  # shape: (n_types - 1,)
    table = np.zeros((len(type_list), max(1, int(lengths.max(initial=1)))), dtype=np.int64)
    if clipped:  # every character at once: code points, then one vocabulary look-up per distinct character
        points = np.frombuffer("".join(clipped).encode("utf-32-le"), dtype=np.uint32)  # shape: (sum(lengths),)
        distinct, inverse = np.unique(points, return_inverse=True)
        ids = np.array([chars.index(chr(c)) for c in distinct.tolist()], dtype=np.int64)[inverse.reshape(-1)]
        rows = np.repeat(np.arange(1, len(type_list)), lengths)  # the type of each character
        starts = np.cumsum(lengths) - lengths  # shape: (n_types - 1,), each type's first character in `points`
        table[rows, np.arange(points.shape[0]) - np.repeat(starts, lengths)] = ids
    lengths = np.concatenate([[1], lengths])  # the padding type gets one padding char
    return torch.from_numpy(table), torch.from_numpy(lengths)


def _encode_tags(tags: Sequence[Sequence[str]], labels: Vocab, t_max: int) -> torch.Tensor:
    out = np.zeros((len(tags), t_max), dtype=np.int64)
    for i, row in enumerate(tags):
        out[i, : len(row)] = [labels.index(t) for t in row]
    return torch.from_numpy(out)


def make_batch(data: Encoded, indices: torch.Tensor, char_table: torch.Tensor | None = None) -> Batch:
    """Gather sentences ``indices`` into a padded batch (pure tensor indexing).

    With ``char_table`` (one spelling vector per word type, computed once for a
    whole data set when decoding), the batch carries those vectors instead of
    characters.
    """
    lengths = data.lengths[indices]
    width = int(lengths.max())
    types = data.types[indices, :width]  # shape: (B, T)
    if char_table is None:
        unique, inverse = torch.unique(types, return_inverse=True)  # U distinct types in this batch
        char_lengths = data.type_char_lengths[unique]
        chars = data.type_chars[unique, : int(char_lengths.max())]
        char_vectors = None
    else:
        chars = char_lengths = inverse = torch.zeros(0, dtype=torch.long)
        char_vectors = char_table[types.to(char_table.device)]  # shape: (B, T, C_dim)
    mask = length_mask(lengths)
    return Batch(
        words=data.words[indices, :width],
        caps=data.caps[indices, :width],
        mask=mask,
        chars=chars,
        char_lengths=char_lengths,
        type_index=inverse,
        features=None if data.type_features is None else data.type_features[types],
        tags=None if data.tags is None else data.tags[indices, :width],
        indices=indices,
        char_vectors=char_vectors,
        feature_ids=None if data.type_feature_ids is None else data.type_feature_ids[types],
        types=types,
        type_strings=data.type_strings,
    )


def iterate(
    data: Encoded,
    batch_size: int,
    *,
    shuffle: bool,
    generator: torch.Generator | None = None,
    bucket_factor: int = 50,
    char_table: torch.Tensor | None = None,
    shard: tuple[int, int] = (0, 1),
) -> Iterator[Batch]:
    """Batches over a data set.

    With ``shuffle``, sentences are shuffled, sorted by length within pools of
    ``bucket_factor * batch_size``, cut into batches, and the batches shuffled
    (bucketing as in AllenNLP's ``BucketBatchSampler``); ``shard`` = (rank, ranks)
    gives one data-parallel rank its part of each step (:func:`bucketed_batches`).
    Without ``shuffle``, sentences are sorted by length for fast decoding;
    ``Batch.indices`` maps them back.
    """
    if shuffle:
        for rows in bucketed_batches(data.lengths, batch_size, generator=generator, bucket_factor=bucket_factor,
                                     shard=shard):
            yield make_batch(data, rows)
    else:
        for part in sorted_batches(data, batch_size):
            yield make_batch(data, part, char_table)


def bucketed_batches(lengths: torch.Tensor, batch_size: int, *, generator: torch.Generator | None = None,
                     bucket_factor: int = 50, shard: tuple[int, int] = (0, 1)) -> list[torch.Tensor]:
    """Random batches of similar length (row indices), for training any model on sentences.

    The rows are shuffled, sorted by length within pools of ``bucket_factor * batch_size``, cut into
    batches, and the batches shuffled (bucketing as in AllenNLP's ``BucketBatchSampler``); with
    ``bucket_factor`` 1 the batches are plain random ones.

    ``shard`` = (rank, ranks) is data-parallel training: each step's global batch of ``batch_size ×
    ranks`` rows is drawn as above (the same draws for every rank, and the batches one process gets
    with ``batch_size × ranks``), and rank ``r`` takes its rows ``r, r + ranks, ...`` in length order,
    so every rank gets ``batch_size`` sentences of nearly the same lengths and no rank waits for a
    longer one at the gradient all-reduce. The last global batch is cut to a multiple of ``ranks``
    rows (a step's ranks hold equally many sentences, so averaging their gradients averages the
    sentences' alike).
    """
    rank, ranks = shard
    order = torch.randperm(len(lengths), generator=generator)
    step = batch_size * ranks  # rows in one step's global batch
    pool = step * bucket_factor
    chunks: list[torch.Tensor] = []
    for start in range(0, len(order), pool):
        part = order[start : start + pool]
        part = part[torch.argsort(lengths[part], stable=True)]
        chunks.extend(part.split(step))
    chunks = [chunks[k] for k in torch.randperm(len(chunks), generator=generator).tolist()]
    if ranks == 1:
        return chunks
    return [rows[: len(rows) - len(rows) % ranks][rank::ranks] for rows in chunks if len(rows) >= ranks]


#: Decoding batches on the CPU (:meth:`seqlab.tagging.predict.Predictor.scored_batches`) hold at most this many
#: padded cells (sentences × the longest one's tokens): a batch of 100 sentences of 256 tokens would hold 25,600,
#: and the encoder's and CRF's per-cell buffers for it (LSTM gates, (T, B, K, K) potentials) set a long stream's
#: peak memory. Over 20,000 Wikipedia lines, ``seqlab tag``'s peak RSS was 477-499 MB without a cap, 415-419 MB at
#: 8,192 cells and 390-407 MB at 4,096 (379-385 MB with the spelling cache's 32,768 words), at the same CPU time;
#: only batches of sentences over 40 tokens get fewer than 100 rows.
MAX_BATCH_CELLS = 4096


def sorted_batches(data: Encoded, batch_size: int, max_cells: int | None = None) -> list[torch.Tensor]:
    """Sentence indices for decoding: the data set sorted by length (stable), cut every ``batch_size``
    sentences or sooner, so that no batch holds more than ``max_cells`` padded cells (a longer sentence is a
    batch by itself; ``None``: no such limit)."""
    order = torch.argsort(data.lengths, stable=True)
    if max_cells is None:
        return list(order.split(batch_size))
    lengths = data.lengths[order].tolist()  # ascending: a batch's last sentence is its longest
    batches, start = [], 0
    while start < len(lengths):
        low, high = 1, min(batch_size, len(lengths) - start)  # the most sentences that fit: n * (n-th length) rises
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if middle * lengths[start + middle - 1] <= max_cells else (low, middle - 1)
        size = low
        batches.append(order[start:start + size])
        start += size
    return batches


def length_mask(lengths: torch.Tensor) -> torch.Tensor:
    """(B, T) bool mask of the first ``lengths[b]`` positions of each row, T = ``lengths.max()``."""
    return torch.arange(int(lengths.max())).unsqueeze(0) < lengths.unsqueeze(1)
