"""A pretrained transformer (BERT, MiniLM, ...) as a token embedder: contextual vectors, one per token.

Each token's vector is the mean of the chosen hidden layers over its word pieces, pooled by ``first``,
``mean`` or ``last`` piece (Devlin et al. 2019 §5.3 read the first piece; flair and AllenNLP offer the
mean), and sentences longer than the model's limit are read in overlapping windows
(:mod:`seqlab.modules.subwords`). Frozen, the encoder sits outside the module's parameters and state:
vectors are computed once per sentence (:meth:`TransformerEmbedder.precompute`) and cached, and a saved
model holds only the record of which encoder it needs (:class:`EncoderRecord`). Fine-tuned, the encoder is
an ordinary submodule, trained and saved with the rest.

Weights load from ``model.safetensors`` only (no pickled code), and only from local files; the
``transformers`` package is an optional extra (``pip install 'seqlab[transformers]'``).
"""
from __future__ import annotations

import copy
import hashlib
import importlib.util
import logging
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import torch
from torch import nn
from tqdm import tqdm

from features.ls_corpus import sha256_file
from seqlab.core.config import TransformerConfig
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.modules.subwords import piece_windows, pool, pooling_index

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'seqlab[transformers]'"
WEIGHTS_FILE = "model.safetensors"
KEY = "model.transformer.path"
STORE_VERSION = 1  # bump when the layout of the stored vectors changes


def require_transformers() -> Any:
    """The ``transformers`` module, or a one-line error that says how to install it."""
    try:
        import transformers
    except ImportError:
        raise SeqlabError(f"model.transformer needs the transformers package, which is not installed: "
                          f"{INSTALL_HINT}") from None
    return transformers


def resolve_model_folder(path: str) -> Path:
    """The model folder ``path`` names: a folder (found as data paths are, :mod:`seqlab.core.paths`), or ``pkg:NAME`` (the shallowest folder holding
    ``config.json`` and ``model.safetensors`` inside the installed package NAME, found without importing it)."""
    if path.startswith("pkg:"):
        name = path[4:]
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            raise SeqlabError(f"{KEY}: {path!r} names no installed package {name!r} "
                              f"(pip install {name.replace('_', '-')})")
        root = Path(next(iter(spec.submodule_search_locations)))
        found = sorted((p.parent for p in root.rglob("config.json") if (p.parent / WEIGHTS_FILE).is_file()),
                       key=lambda p: (len(p.parts), str(p)))
        if not found:
            raise SeqlabError(f"{KEY}: the package {name!r} ({root}) holds no folder with config.json and {WEIGHTS_FILE}")
        return found[0]
    folder = resolve_data_path(path, key=KEY)  # relative to SEQLAB_DATA, or ./ and ../ to the working directory
    if not folder.is_dir():
        raise SeqlabError(f"{KEY}: {path!r} is not a folder (give a Hugging Face model folder or pkg:NAME)")
    if not (folder / "config.json").is_file():
        raise SeqlabError(f"{KEY}: {folder} has no config.json, so it is not a Hugging Face model folder")
    if not (folder / WEIGHTS_FILE).is_file():
        raise SeqlabError(f"{KEY}: {folder} has no {WEIGHTS_FILE}; seqlab loads transformer weights only from "
                          f"safetensors files, which cannot run code")
    return folder


@dataclass(frozen=True)
class EncoderRecord:
    """Which encoder a trained model needs: the configured path and the sha256 of its weights file."""

    path: str
    weights_sha256: str
    model_type: str
    hidden_size: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def check(self, other: "EncoderRecord", where: str) -> None:
        """Refuse an encoder whose weights differ from those this model was trained with."""
        if other.weights_sha256 != self.weights_sha256:
            raise SeqlabError(f"{where}: this model was trained with the encoder {self.path!r} (weights sha256 "
                              f"{self.weights_sha256[:16]}…), but {other.path!r} has weights sha256 "
                              f"{other.weights_sha256[:16]}…; install the encoder it was trained with")


def recorded_encoder(run_dir: Path) -> EncoderRecord | None:
    """The encoder record a run directory holds (``encoder.json``), or None when the model reads no transformer."""
    from seqlab.core import rundir

    record = rundir.load_encoder_record(run_dir)
    if record is None:
        return None
    try:
        return EncoderRecord(**record)
    except TypeError:
        raise SeqlabError(f"{Path(run_dir) / rundir.ENCODER}: not an encoder record (expected the keys path, "
                          f"weights_sha256, model_type and hidden_size)") from None


class TransformerEmbedder(nn.Module):
    """Contextual token vectors from a pretrained transformer: sentences (lists of tokens) → (B, T, D)."""

    def __init__(self, config: TransformerConfig, *, expected: EncoderRecord | None = None,
                 where: str = KEY) -> None:
        super().__init__()
        transformers = require_transformers()
        transformers.utils.logging.disable_progress_bar()  # seqlab logs what it loads; no bar per weight
        folder = resolve_model_folder(config.path)
        hf_config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
        self.record = EncoderRecord(config.path, sha256_file(folder / WEIGHTS_FILE), hf_config.model_type,
                                    hf_config.hidden_size)
        if expected is not None:
            expected.check(self.record, where)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        encoder = transformers.AutoModel.from_pretrained(folder, local_files_only=True, use_safetensors=True)
        depth = hf_config.num_hidden_layers
        for layer in config.layers:
            if not -(depth + 1) <= layer <= depth:
                raise SeqlabError(f"model.transformer.layers: {layer} is not a layer of this {depth}-layer encoder "
                                  f"(0 is the embeddings, -1 the last layer)")
        self.config = config
        self.fine_tune = config.fine_tune
        if config.fine_tune:
            for name, param in encoder.named_parameters():  # the sentence pooler reads [CLS] for next-sentence
                if name.startswith("pooler."):  # prediction; token vectors never pass through it
                    param.requires_grad_(False)
            self.encoder = encoder
        else:  # kept out of parameters() and state_dict(): never trained, never saved with the model
            encoder.requires_grad_(False).eval()
            self.__dict__["_frozen_encoder"] = encoder
        self.output_dim = hf_config.hidden_size
        limit = self._model_limit(hf_config)
        if config.window is not None and config.window > limit:
            raise SeqlabError(f"model.transformer.window: this encoder reads at most {limit} pieces at a time "
                              f"(besides its special tokens), got {config.window}")
        self.window = config.window or limit
        self.stride = config.stride or max(1, self.window // 2)
        if self.stride > self.window:
            raise SeqlabError(f"model.transformer.stride: {self.stride} is larger than the window ({self.window})")
        self._before, self._after = self._special_tokens()
        self._pieces: dict[str, list[int]] = {}
        self.cache: dict[tuple[str, ...], torch.Tensor] = {}

    def _special_tokens(self) -> tuple[list[int], list[int]]:
        """The special pieces the tokenizer puts before and after a single sequence ([CLS] and [SEP] for BERT)."""
        bare = self.tokenizer("a", add_special_tokens=False)["input_ids"]
        full = self.tokenizer("a")["input_ids"]
        for at in range(len(full) - len(bare) + 1):
            if full[at: at + len(bare)] == bare:
                return full[:at], full[at + len(bare):]
        raise SeqlabError(f"{KEY}: cannot tell this tokenizer's special tokens apart from a text's pieces")

    def _model_limit(self, hf_config: Any) -> int:
        """Pieces per input: the smaller of the tokenizer's and the position table's limit, less special tokens."""
        limit = getattr(hf_config, "max_position_embeddings", 512)
        if 0 < getattr(self.tokenizer, "model_max_length", limit) < limit:
            limit = self.tokenizer.model_max_length
        before, after = self._special_tokens()
        return max(2, limit - len(before) - len(after))

    @property
    def transformer(self) -> nn.Module:
        return self.encoder if self.fine_tune else self.__dict__["_frozen_encoder"]

    def _apply(self, fn: Callable[..., Any], recurse: bool = True) -> "TransformerEmbedder":  # .to(), .half()
        super()._apply(fn, recurse)
        if not self.fine_tune:
            self.__dict__["_frozen_encoder"]._apply(fn)
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> "TransformerEmbedder":
        """A copy (e.g. the weight average of ``train.ema``) that shares what is never trained: a frozen encoder,
        its vector cache and the tokenizer, rather than holding a second copy of each."""
        clone = self.__class__.__new__(self.__class__)
        memo[id(self)] = clone
        shared = ("_frozen_encoder", "cache", "tokenizer", "_pieces")
        for key, value in self.__dict__.items():
            clone.__dict__[key] = value if key in shared else copy.deepcopy(value, memo)
        return clone

    def train(self, mode: bool = True) -> "TransformerEmbedder":
        super().train(mode)
        if not self.fine_tune:
            self.transformer.eval()  # a frozen encoder reads without dropout, so cached vectors stay valid
        return self

    # ------------------------------------------------------------ pieces

    def word_pieces(self, word: str) -> list[int]:
        """A word's piece ids (memoised per word); a word the tokenizer drops entirely is the unknown piece."""
        ids = self._pieces.get(word)
        if ids is None:
            ids = self.tokenizer(word, add_special_tokens=False)["input_ids"] or [self.tokenizer.unk_token_id]
            self._pieces[word] = ids
        return ids

    def _inputs(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[tuple[int, int]], list[int]]:
        """Window inputs (with special tokens); for every pooled piece, its (window, position in the input) and
        its word's index among all the sentences' words."""
        inputs: list[list[int]] = []
        at: list[tuple[int, int]] = []
        flat_words: list[int] = []
        words_before = 0
        for tokens in sentences:
            per_word = [self.word_pieces(t) for t in tokens]
            ids = [i for piece_ids in per_word for i in piece_ids]
            windows, where = piece_windows(len(ids), self.window, self.stride)
            first = len(inputs)
            inputs.extend(self._before + ids[w.start:w.end] + self._after for w in windows)
            pieces, words = pooling_index([len(p) for p in per_word], self.config.pooling)
            at.extend((first + where[p][0], len(self._before) + where[p][1]) for p in pieces)
            flat_words.extend(words_before + w for w in words)
            words_before += len(tokens)
        return inputs, at, flat_words

    def encode(self, sentences: Sequence[Sequence[str]]) -> list[torch.Tensor]:
        """Each sentence's token vectors, (T_i, D), from the transformer (no cache)."""
        if any(len(s) == 0 for s in sentences):
            raise ValueError("a sentence needs at least one token")
        inputs, at, words = self._inputs(sentences)
        device = next(self.transformer.parameters()).device
        width = max(len(window) for window in inputs)
        ids = torch.full((len(inputs), width), self.tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros(len(inputs), width, dtype=torch.long)
        for row, window in enumerate(inputs):
            ids[row, : len(window)] = torch.tensor(window)
            mask[row, : len(window)] = 1
        out = self.transformer(input_ids=ids.to(device), attention_mask=mask.to(device), output_hidden_states=True)
        layers = torch.stack([out.hidden_states[i] for i in self.config.layers]).mean(dim=0)  # shape: (W, P, D)
        flat = layers.reshape(-1, layers.shape[-1])  # shape: (W * P, D)
        pieces = torch.tensor([w * width + p for w, p in at], device=device)
        lengths = [len(s) for s in sentences]
        vectors = pool(flat, pieces, torch.tensor(words, device=device), sum(lengths))  # shape: (sum T_i, D)
        return list(vectors.split(lengths))

    # ------------------------------------------------------------ cache and forward

    def precompute(self, sentences: Iterable[Sequence[str]], progress: bool = False) -> dict[str, float]:
        """Compute and cache the vectors of every distinct sentence (frozen only), longest first in batches
        of ``batch_size``; returns how many, the cache's size in MB and the seconds it took.

        The order is fixed (length, then the tokens), so the batches and hence the vectors do not depend on
        Python's hash seed. The vectors of a whole sentence set are also kept on disk
        (:func:`stored_vectors_path`), so a second run over the same data and encoder settings (the next
        seed of a sweep) reads them instead of running the encoder again."""
        if self.fine_tune:
            raise ValueError("a fine-tuned encoder changes every step; its vectors cannot be cached")
        todo = sorted({tuple(s) for s in sentences if len(s)} - self.cache.keys(), key=lambda s: (-len(s), s))
        start = time.perf_counter()
        stored = self.stored_vectors_path(todo) if todo else None
        found = _read_stored(stored, todo, self.output_dim) if stored is not None else None
        if found is not None:
            self.cache.update(zip(todo, found))
            log.info("transformer vectors of %d sentences read from %s", len(todo), stored)
        else:
            bar = tqdm(total=len(todo), unit="sent", desc="transformer vectors", disable=not progress, leave=False,
                       mininterval=0.5 if sys.stderr.isatty() else 30.0)
            with torch.no_grad():
                for at in range(0, len(todo), self.config.batch_size):
                    chunk = todo[at: at + self.config.batch_size]
                    for key, vectors in zip(chunk, self.encode(chunk)):
                        self.cache[key] = vectors.to("cpu", torch.float16)  # half precision: half the memory
                    bar.update(len(chunk))
            bar.close()
            if stored is not None:
                _write_stored(stored, [self.cache[key] for key in todo])
        megabytes = sum(v.numel() * v.element_size() for v in self.cache.values()) / 1e6
        return {"sentences": len(self.cache), "megabytes": megabytes, "seconds": time.perf_counter() - start}

    def stored_vectors_path(self, ordered: Sequence[tuple[str, ...]]) -> Path | None:
        """Where the vectors of exactly these sentences, in this order, from this encoder's weights and
        settings are kept on disk (``$SEQLAB_CACHE/transformer/<sha256>.pt``), or None with the cache off."""
        from features.vector_cache import cache_root

        root = cache_root()
        if root is None:
            return None
        c = self.config
        digest = hashlib.sha256(f"{STORE_VERSION}|{self.record.weights_sha256}|{list(c.layers)}|{c.pooling}|"
                                f"{self.window}|{self.stride}|{c.batch_size}".encode("utf-8"))
        for sentence in ordered:
            digest.update("\x1f".join(sentence).encode("utf-8", "surrogatepass") + b"\x1e")
        return root / "transformer" / f"{digest.hexdigest()[:32]}.pt"

    def forward(self, sentences: Sequence[Sequence[str]], width: int | None = None) -> torch.Tensor:
        """Token vectors, (B, T, D), zero-padded to ``width`` (default: the longest sentence)."""
        width = width or max(len(s) for s in sentences)
        device = next(self.transformer.parameters()).device
        rows: list[torch.Tensor | None] = [None if self.fine_tune else self.cache.get(tuple(s)) for s in sentences]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            with torch.set_grad_enabled(self.fine_tune and torch.is_grad_enabled()):
                for i, vectors in zip(missing, self.encode([sentences[i] for i in missing])):
                    rows[i] = vectors
        out = torch.zeros(len(sentences), width, self.output_dim, device=device)  # shape: (B, T, D)
        for i, row in enumerate(rows):
            out[i, : row.shape[0]] = row.to(device, torch.float32)
        return out


def _read_stored(path: Path, ordered: Sequence[tuple[str, ...]], dim: int) -> list[torch.Tensor] | None:
    """The stored vectors of ``ordered``'s sentences, or None when there are none or they cannot be read."""
    if not path.is_file():
        return None
    try:
        stored = torch.load(path, map_location="cpu", weights_only=True)
        lengths, vectors = stored["lengths"], stored["vectors"]
    except Exception as err:  # noqa: BLE001 - a damaged entry only costs the speed-up
        log.warning("ignoring the unreadable transformer vector store %s (%s); computing them again", path, err)
        return None
    expected = [len(s) for s in ordered]
    if (lengths.tolist() != expected or vectors.dtype != torch.float16
            or tuple(vectors.shape) != (sum(expected), dim)):
        log.warning("ignoring the transformer vector store %s: it does not match these sentences", path)
        return None
    return list(vectors.split(expected))


def _write_stored(path: Path, rows: list[torch.Tensor]) -> None:
    """Keep ``rows`` (one (T_i, D) fp16 tensor per sentence) at ``path``, written atomically; a cache folder
    that cannot be written only costs the speed-up."""
    from seqlab.core.atomic import atomic_torch_save

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_torch_save({"lengths": torch.tensor([r.shape[0] for r in rows], dtype=torch.int64),
                           "vectors": torch.cat(rows)}, path)
    except OSError as err:
        log.warning("could not keep the transformer vectors in %s (%s); set SEQLAB_CACHE=off to skip this", path, err)
