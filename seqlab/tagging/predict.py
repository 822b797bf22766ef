"""Batched inference: label sequences (and span confidences) for encoded sentences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, Sequence

import numpy as np
import torch
from torch import nn

from seqlab.data.batching import MAX_BATCH_CELLS, Encoded, length_mask, make_batch, sorted_batches
from seqlab.data.labelling import DEFAULT_LABELLING, Labelling
from seqlab.data.schemes import Chunk
from seqlab.data.vocab import Vocab
from seqlab.models.tagger import Tagger
from seqlab.modules.window_fast import Workspace


@dataclass(frozen=True)
class Prediction:
    """One sentence's labels (in the model's training scheme) and its spans with confidences (none for
    token labels); decoded with ``marginals``, also each token's posterior marginal of its label and the
    probability of the whole label sequence (the path confidence)."""

    labels: list[str]
    spans: list[tuple[str, int, int, float]]  # (type, start, end exclusive, confidence)
    marginals: list[float] | None = None  # p(y_t = labels[t] | x) per token
    path_confidence: float | None = None  # p(y = labels | x)
    #: per token, every label whose marginal p(y_t = label | x) is at least :data:`DISTRIBUTION_FLOOR`, with it
    distributions: list[dict[str, float]] | None = None


class SpellingCache:
    """The character BiLSTM's spelling vectors by word, kept from one call of a :class:`Predictor` to the
    next: a stream tagged batch by batch (``seqlab tag``, a service) runs the BiLSTM once per word type of
    the whole stream instead of once per type and batch. At most ``capacity`` words are kept (about 400
    bytes each for a 100-wide spelling vector); when a call would pass it, the cache starts afresh with the
    words of that call (on 20,000 Wikipedia lines, clearing it all made the BiLSTM run 28% more words than
    the stream's 80,000 types). The default keeps 32,768 words (13 MB of vectors): over those lines the BiLSTM
    spelled 107,267 words, against 90,492 when it kept 65,536, for 10-20 MB less peak memory at the same CPU
    time. The model's weights must not change while it is used (a trained model, in eval mode)."""

    def __init__(self, capacity: int = 1 << 15) -> None:
        self.capacity = capacity
        self.slots: dict[str, int] = {}  # word -> row of `store`
        self.store = torch.empty(0)  # shape: (rows allocated, C_dim)

    def table(self, model: Tagger, data: Encoded) -> torch.Tensor | None:
        """Spelling vectors of every word type of ``data`` (shape: (n_types, C_dim)); None without a
        character BiLSTM."""
        if not model.spells or len(data.type_strings) != data.type_chars.shape[0] or \
                len(data.type_strings) > self.capacity:  # nothing to keep, or more words than it may keep
            return model.spelling_table(data)
        words = data.type_strings
        new = [i for i, word in enumerate(words) if word not in self.slots]
        if len(self.slots) + len(new) > self.capacity:  # full: start afresh, with the words of this call it holds
            known = [word for word in words if word in self.slots]
            rows = torch.tensor([self.slots[word] for word in known], dtype=torch.long, device=self.store.device)
            kept = self.store[rows]  # shape: (known, C_dim), a copy
            self.slots = {}
            self._keep(known, kept)
        if new:
            vectors = model.spelling_table(data, torch.tensor(new))  # shape: (new, C_dim)
            self._keep([words[i] for i in new], vectors)
        return self.store[torch.tensor([self.slots[word] for word in words], device=self.store.device)]

    def _keep(self, words: list[str], vectors: torch.Tensor) -> None:
        start, end = len(self.slots), len(self.slots) + len(words)
        if end > self.store.shape[0] or self.store.shape[1:] != vectors.shape[1:] or self.store.device != vectors.device:
            grown = torch.empty(min(self.capacity, max(end, 2 * self.store.shape[0])), vectors.shape[1],
                                device=vectors.device)  # shape: (rows, C_dim)
            if self.store.shape[1:] == vectors.shape[1:] and start:
                grown[:start] = self.store[:start]
            self.store = grown
        self.store[start:end] = vectors
        self.slots.update(zip(words, range(start, end)))


class Emissions(Protocol):
    """Where a :class:`Predictor` gets label scores: a torch :class:`Tagger` (:class:`TorchEmissions`) or an
    onnxruntime model (:class:`seqlab.apps.onnx_runtime.OnnxEmissions`). Both hand the scores to the
    same ``decoder`` (a CRF, softmax or post-Viterbi module), so decoding and confidences are one code path."""

    device: torch.device
    decoder: nn.Module

    def scorer(self, data: Encoded) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """A function of (sentence indices (B,), mask (B, T)) returning their emissions (B, T, K)."""
        ...


class TorchEmissions:
    """Emissions of a torch :class:`Tagger` in eval mode. Spelling vectors are computed once per word type
    and kept from call to call (:class:`SpellingCache`); a windowed tagger reads its window through per-type
    tables, whose memory one instance reuses, and another tagger its input vectors from a per-type table
    (:meth:`Tagger.input_table`) (same scores; ``tables=False`` runs the plain forward pass instead)."""

    def __init__(self, model: Tagger, device: torch.device | None = None, tables: bool = True) -> None:
        self.model, self.tables = model, tables
        self.device = device or next(model.parameters()).device
        self.workspace = Workspace()
        self.spelling = SpellingCache()  # kept from call to call: once per word type of a whole stream

    @property
    def decoder(self) -> nn.Module:
        return self.model.decoder

    @decoder.setter
    def decoder(self, decoder: nn.Module) -> None:
        self.model.decoder = decoder

    def scorer(self, data: Encoded) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        self.model.eval()
        table = self.spelling.table(self.model, data)  # shape: (n_types, C_dim), once per word type of the stream
        fast = self.model.window_tables(data, table, self.workspace) if self.tables else None
        inputs = self.model.input_table(data, table) if self.tables and fast is None else None  # (n_types, D)

        def score(indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            if fast is not None:  # the tables need only which sentences, and their lengths
                return fast.emissions(indices, mask)  # shape: (B, T, K)
            if inputs is not None:  # each token's input vector is its type's row
                types = data.types[indices, : mask.shape[1]].to(inputs.device)  # shape: (B, T)
                tokens = inputs.index_select(0, types.reshape(-1)).view(*types.shape, -1)  # shape: (B, T, D)
                return self.model.encode(tokens, mask)  # shape: (B, T, K)
            return self.model.emissions(make_batch(data, indices, table).to(self.device))  # shape: (B, T, K)
        return score


class Predictor:
    """Decodes encoded sentences, in the original order, from the emissions of ``model``: a trained
    :class:`Tagger` (run by :class:`TorchEmissions`) or another :class:`Emissions` backend.

    A span's confidence is the smallest posterior marginal p(y_t = predicted label | x) over its
    tokens, from the CRF's forward-backward (or the softmax). One predictor used for many inputs (a
    service) reuses the window tables' memory from one call to the next.
    """

    def __init__(self, model: Tagger | Emissions, labels: Vocab, labelling: Labelling | None = None, *,
                 device: torch.device | None = None, tables: bool = True, temperature: float = 1.0,
                 decoder: nn.Module | None = None) -> None:
        """``labelling``: what the labels mean (default: a span scheme, whose spans are read by conlleval's
        rules whatever the scheme; token labels give no spans). ``temperature``: the calibration fitted on
        dev data (:mod:`seqlab.tagging.calibration`), which softens confidences and leaves labels alone.
        ``decoder``: what decodes the emissions (default: the model's own; post-Viterbi decoding of a softmax
        tagger is another). Both are fixed here: another temperature or decoder is another predictor."""
        self.backend: Emissions = TorchEmissions(model, device, tables) if isinstance(model, Tagger) else model
        self.device = self.backend.device
        self.names = np.array(labels.itos, dtype=object)  # label id -> label string, indexed by whole rows
        self.read_spans = (labelling or DEFAULT_LABELLING).chunk_reader(labels.itos)
        self.temperature = temperature
        self.decoder: nn.Module = decoder if decoder is not None else self.backend.decoder

    def __call__(self, data: Encoded, *, batch_size: int = 100, confidences: bool = False,
                 marginals: bool = False) -> list[Prediction]:
        """One prediction per sentence of ``data``, in order: its labels and spans, the spans with confidences
        when asked for; ``marginals`` (which implies ``confidences``) adds each token's marginal and the path
        confidence, all at the predictor's temperature."""
        if len(data) == 0:
            return []
        out: list[Prediction | None] = [None] * len(data)
        for indices, mask, emissions in self.scored_batches(data, batch_size):
            self._decode(emissions, mask, indices, data.lengths[indices], confidences or marginals, marginals, out)
        return out  # type: ignore[return-value]

    def scored_batches(self, data: Encoded, batch_size: int = 100) -> Iterator[tuple[torch.Tensor, torch.Tensor,
                                                                                     torch.Tensor]]:
        """(sentence indices, mask (B, T), emissions (B, T, K)) of every batch of ``data``, sorted by length,
        under inference mode: what :meth:`__call__` decodes, and what calibration re-reads at other temperatures.
        On the CPU a batch holds at most :data:`~seqlab.data.batching.MAX_BATCH_CELLS` padded cells (the process's
        peak memory); a GPU takes each ``batch_size`` whole."""
        cap = MAX_BATCH_CELLS if self.device.type == "cpu" else None
        with torch.inference_mode():
            score = self.backend.scorer(data)
            for indices in sorted_batches(data, batch_size, cap):
                mask = length_mask(data.lengths[indices]).to(self.device)  # shape: (B, T)
                yield indices, mask, score(indices, mask)  # emissions, shape: (B, T, K)

    def _decode(self, emissions: torch.Tensor, mask: torch.Tensor, indices: torch.Tensor, lengths: torch.Tensor,
                confidences: bool, marginals: bool, out: list[Prediction | None]) -> None:
        decoder = self.decoder
        best = decoder.decode(emissions, mask)  # shape: (B, T)
        chosen = paths = spread = None
        ids, sizes = best.cpu().numpy(), lengths.numpy()  # shapes: (B, T), (B,)
        if confidences:
            posterior = decoder.marginals(emissions, mask, self.temperature)  # shape: (B, T, K)
            chosen = posterior.gather(-1, best.unsqueeze(-1)).squeeze(-1).cpu().tolist()  # (B, T) floats
        if marginals:
            paths = decoder.log_likelihood(emissions, best, mask, self.temperature).exp().cpu().tolist()  # (B,)
            spread = distributions(posterior.float().cpu().numpy(), self.names, sizes.tolist())
        found = self.read_spans(ids, sizes)  # the chunks of every sentence at once (no loop over tokens)
        names = self.names[ids].tolist()  # the whole batch's labels at once
        for row, (index, length) in enumerate(zip(indices.tolist(), sizes.tolist())):
            scored = _confident(found[row], chosen[row] if chosen is not None else None)
            if paths is None:
                out[index] = Prediction(names[row][:length], scored)
            else:
                out[index] = Prediction(names[row][:length], scored, chosen[row][:length], paths[row], spread[row])


#: The smallest marginal a token's distribution (``Prediction.distributions``) keeps: what a student's soft loss reads
#: of its teacher (:mod:`seqlab.tagging.teacher`); the mass under it (at most K times it) is left out.
DISTRIBUTION_FLOOR = 1e-3


def distributions(posterior: np.ndarray, names: np.ndarray, lengths: list[int],
                  floor: float = DISTRIBUTION_FLOOR) -> list[list[dict[str, float]]]:
    """Each sentence's token distributions from marginals of shape (B, T, K): per token, ``{label: p}`` for every
    label with p >= ``floor``, found for the whole batch at once (np.nonzero), only the dicts built per token."""
    rows, steps, labels = np.nonzero(posterior >= floor)  # row-major order: by sentence, token, then label
    values = posterior[rows, steps, labels].tolist()
    out: list[list[dict[str, float]]] = [[{} for _ in range(n)] for n in lengths]
    for row, step, name, value in zip(rows.tolist(), steps.tolist(), names[labels].tolist(), values):
        if step < lengths[row]:
            out[row][step][name] = value
    return out


def predict(model: Tagger, data: Encoded, labels: Vocab, labelling: Labelling | None = None, *,
            batch_size: int = 100, confidences: bool = False, device: torch.device | None = None) -> list[Prediction]:
    """Decode every sentence of ``data`` once (see :class:`Predictor`, which a repeated caller keeps)."""
    return Predictor(model, labels, labelling, device=device)(data, batch_size=batch_size, confidences=confidences)


def _confident(found: Sequence[Chunk], probs: list[float] | None) -> list[tuple[str, int, int, float]]:
    """Each chunk with its confidence: the smallest marginal of its tokens (a plain list: a tensor slice per
    chunk costs microseconds), or 1.0 without marginals."""
    if probs is None:
        return [(k, s, e, 1.0) for k, s, e in found]
    return [(k, s, e, min(probs[s:e])) for k, s, e in found]
