"""Training: epochs over bucketed batches, dev-F1 early stopping, atomic checkpoints, resume.

``train(config, out_dir)`` can be imported and called; the CLI is a thin layer on it.
A run directory holds the resolved config, vocabularies, best weights, the last
checkpoint, ``metrics.json`` and the log. ``resume`` continues a killed run from
its last checkpoint and reaches the same result as an uninterrupted run.
"""
from __future__ import annotations

import logging
import math
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from seqlab import archive
from seqlab.build import build_optimizer, build_tagger, embedding_matrix
from seqlab.config import Config, EmbeddingsConfig, dump_config
from seqlab.data.batching import Encoded, encode, iterate
from seqlab.data.dataset import Split, read_splits
from seqlab.data.schemes import labels_for, split_tag
from seqlab.data.vocab import UNK, Vocab, WordVocab, char_vocab, label_vocab
from seqlab.errors import SeqlabError
from seqlab.evaluate import evaluate_split
from seqlab.models.tagger import Tagger
from seqlab.token_features import encode_options, load_token_features

log = logging.getLogger("seqlab.train")


def resolve_device(name: str) -> torch.device:
    """``auto`` → the GPU when one is present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SeqlabError(f"train.device: {name!r} was asked for, but no CUDA GPU is available; use auto or cpu")
    return device


def build_vocabs(config: Config, splits: dict[str, Split]) -> tuple[dict[str, Vocab], torch.Tensor | None]:
    """Word, character and label vocabularies, and the initial word-embedding matrix.

    The word vocabulary holds every word of every split that has a pretrained
    vector (looked up as written, then lower-cased), plus training words seen at
    least ``min_count`` times; this uses no labels from dev or test.
    """
    emb = config.model.embeddings or EmbeddingsConfig()  # null: the vocabulary still indexes the words
    train = splits["train"]
    normalize = WordVocab([], digits_to_zero=emb.digits_to_zero).normalize
    counts = Counter(normalize(w) for s in train.tokens for w in s)
    found: dict[str, Any] = {}
    if emb.path:
        from features.vectors import load_vectors, select_vectors
        from seqlab.paths import resolve_data_path

        vectors = load_vectors(resolve_data_path(emb.path, key="model.embeddings.path"), emb.format)
        if vectors.dim != emb.dim:
            raise SeqlabError(f"model.embeddings.dim is {emb.dim}, but {emb.path} has {vectors.dim}-dimensional vectors")
        corpus_words = sorted({normalize(w) for split in splits.values() for s in split.tokens for w in s})
        by_word = select_vectors(vectors, corpus_words, lowercase_fallback=emb.lowercase_fallback)
        for word, vec in by_word.items():  # store under the key that matched, so lookup finds it the same way
            key = word if word in vectors else word.lower()
            found.setdefault(key, vec)
        log.info("pretrained vectors for %d of %d corpus word types", len(by_word), len(corpus_words))
    frequent = sorted(w for w, n in counts.items() if n >= emb.min_count and w not in found and w.lower() not in found)
    words = WordVocab(sorted(found) + frequent, lowercase_fallback=emb.lowercase_fallback, digits_to_zero=emb.digits_to_zero)
    types = sorted({split_tag(t)[1] for s in train.tags for t in s} - {""})
    vocabs: dict[str, Vocab] = {
        "words": words,
        "chars": char_vocab(w for s in train.tokens for w in s),
        "tags": label_vocab(labels_for(types, config.data.tag_scheme)),
    }
    matrix = embedding_matrix(words, found, emb.dim, config.train.seed, emb.scale) if emb.path else None
    return vocabs, matrix


def optimizer_step(loss: torch.Tensor, optimizer: torch.optim.Optimizer, params: list[torch.nn.Parameter],
                   clip: float, where: str) -> None:
    """One update from ``loss``: refuse a non-finite loss (naming ``where``), backward, clip the norm, step."""
    if not torch.isfinite(loss):
        raise SeqlabError(f"training diverged at {where}: loss is {loss.item()}; lower train.lr")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()


def record_epoch(state: dict[str, Any], epoch: int, score: float, stats: dict[str, Any]) -> bool:
    """Model-selection bookkeeping after ``epoch`` scored ``score`` on dev; returns whether it is the best so far."""
    improved = score > state["best_f1"]
    if improved:
        state.update(best_f1=score, best_epoch=epoch, bad_epochs=0)
    else:
        state["bad_epochs"] += 1
    state["epoch"] = epoch
    state["history"].append(stats)
    return improved


class Trainer:
    """Holds the model, optimizer and data of one run; ``fit`` runs epochs until done."""

    def __init__(self, config: Config, out_dir: Path, *, resume: bool = False, progress: bool = True) -> None:
        self.config = config
        self.out_dir = out_dir
        self.progress = progress
        t = config.train
        if t.threads:
            torch.set_num_threads(t.threads)
        self.device = resolve_device(t.device)
        self.splits = read_splits(config.data)
        if resume:  # the run's own vocabularies; its weights come from the checkpoint
            self.vocabs = archive.load_vocabs(out_dir)
            matrix = None
        else:
            self.vocabs, matrix = build_vocabs(config, self.splits)
        state = archive.load_feature_state(out_dir) if resume else None
        self.features = load_token_features(config.model.features, train=self.splits["train"], state=state,
                                            evaluation_files={f"data.{n}": s.path for n, s in self.splits.items()
                                                              if n != "train"})
        torch.manual_seed(t.seed)
        self.model: Tagger = build_tagger(config, self.vocabs, token_features=self.features, pretrained=matrix).to(self.device)
        self.optimizer, self.scheduler = build_optimizer(self.model, t)
        # Polyak-style weight averaging: dev is scored, and the best weights saved, from the moving average.
        self.averaged = AveragedModel(self.model, multi_avg_fn=get_ema_multi_avg_fn(t.ema)) if t.ema > 0 else None
        self.encoded: dict[str, Encoded] = {
            name: encode(s.tokens, self.vocabs, tags=s.tags, **encode_options(self.features, s.columns))
            for name, s in self.splits.items()
        }
        self.generator = torch.Generator().manual_seed(t.seed)
        self.singletons = self._singletons()
        self.state: dict[str, Any] = {"epoch": 0, "best_f1": -1.0, "best_epoch": 0, "bad_epochs": 0, "history": []}

    def _singletons(self) -> torch.Tensor | None:
        """Word ids seen once in training, for singleton-to-<unk> replacement (shape: (V,) bool)."""
        if self.config.model.embeddings is None or self.config.model.embeddings.singleton_unk <= 0:
            return None
        data = self.encoded["train"]
        counts = torch.bincount(data.words[data.types > 0], minlength=len(self.vocabs["words"]))
        return (counts == 1).to(self.device)

    def _drop_singletons(self, words: torch.Tensor) -> torch.Tensor:
        if self.singletons is None:
            return words
        p = self.config.model.embeddings.singleton_unk
        drop = self.singletons[words] & (torch.rand(words.shape, device=words.device) < p)  # shape: (B, T)
        return words.masked_fill(drop, self.vocabs["words"].index(UNK))

    # ------------------------------------------------------------ checkpoints

    def _parts(self) -> dict[str, Any]:
        return {"model": self.model, "optimizer": self.optimizer, "scheduler": self.scheduler,
                "averaged": self.averaged}

    def save_checkpoint(self) -> None:
        archive.save_training_state(self.out_dir, self._parts(), self.generator, self.state)

    def load_checkpoint(self) -> None:
        self.state = archive.load_training_state(self.out_dir, self._parts(), self.generator, self.device)
        log.info("resumed after epoch %d (best dev F1 %.2f at epoch %d)",
                 self.state["epoch"], self.state["best_f1"], self.state["best_epoch"])

    # ------------------------------------------------------------ epochs

    def train_epoch(self, epoch: int) -> dict[str, float]:
        t = self.config.train
        self.model.train()
        data = self.encoded["train"]
        batches = math.ceil(len(data) / t.batch_size)
        bar = tqdm(total=len(data), unit="sent", desc=f"epoch {epoch}", disable=not self.progress, leave=False,
                   mininterval=0.5 if sys.stderr.isatty() else 30.0)
        total, seen, tokens, start = 0.0, 0, 0, time.perf_counter()
        params = [p for p in self.model.parameters() if p.requires_grad]
        for step, batch in enumerate(iterate(data, t.batch_size, shuffle=True, generator=self.generator,
                                                   bucket_factor=t.bucket_factor)):
            batch = batch.to(self.device)
            batch.words = self._drop_singletons(batch.words)
            loss = self.model.loss(batch)
            optimizer_step(loss, self.optimizer, params, t.clip, f"epoch {epoch}, step {step}")
            if self.averaged is not None:
                self.averaged.update_parameters(self.model)
            size = int(batch.indices.shape[0])
            total += loss.item() * size
            seen += size
            tokens += int(batch.mask.sum())
            bar.update(size)
            if step % 20 == 0 or step == batches - 1:
                last = self.state["history"][-1]["dev_f1"] if self.state["history"] else float("nan")
                bar.set_postfix(loss=f"{total / seen:.3f}", lr=f"{self.optimizer.param_groups[0]['lr']:.5f}",
                                last_dev_f1=f"{last:.2f}")
        bar.close()
        elapsed = time.perf_counter() - start
        return {"loss": total / max(seen, 1), "train_seconds": elapsed, "sentences_per_second": seen / elapsed,
                "tokens_per_second": tokens / elapsed}

    @property
    def scored_model(self) -> Tagger:
        """The weights that are evaluated and saved: the moving average when ``train.ema`` is on."""
        return self.model if self.averaged is None else self.averaged.module

    def fit(self) -> dict[str, Any]:
        t = self.config.train
        while self.state["epoch"] < t.epochs and self.state["bad_epochs"] < t.patience:
            epoch = self.state["epoch"] + 1
            stats = self.train_epoch(epoch)
            self.scheduler.step()
            dev = evaluate_split(self.scored_model, self.encoded["dev"], self.splits["dev"], self.vocabs,
                                 self.config, self.device)
            stats.update(epoch=epoch, dev_f1=dev.f1, lr=self.optimizer.param_groups[0]["lr"])
            improved = record_epoch(self.state, epoch, dev.f1, stats)
            if improved:
                archive.save_weights(self.out_dir, self.scored_model)
            self.save_checkpoint()
            log.info("epoch %d: loss %.4f, dev F1 %.2f%s, %.0f sent/s, %.1f s, lr %.5f", epoch, stats["loss"], dev.f1,
                     " (best)" if improved else "", stats["sentences_per_second"], stats["train_seconds"], stats["lr"])
        if self.state["bad_epochs"] >= t.patience:
            log.info("early stopping: no dev F1 gain for %d epochs", t.patience)
        return self.finish()

    def finish(self) -> dict[str, Any]:
        """Reload the best weights, score dev and test, write predictions and metrics.json."""
        self.model.load_state_dict(archive.load_weights(self.out_dir, self.device))
        metrics: dict[str, Any] = {
            "best_epoch": self.state["best_epoch"],
            "epochs": self.state["epoch"],
            "history": self.state["history"],
        }
        for name in ("dev", "test"):
            if name in self.splits:
                result = evaluate_split(self.model, self.encoded[name], self.splits[name], self.vocabs, self.config,
                                        self.device, predictions=self.out_dir / f"{name}.predictions.txt")
                metrics[name] = result.to_dict()
                log.info("%s:\n%s", name, result.report_text)
        archive.save_metrics(self.out_dir, metrics)
        return metrics


def train(config: Config, out_dir: str | Path, *, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Train a tagger into ``out_dir``; with ``resume``, continue the run already there."""
    out_dir = Path(out_dir)
    archive.check_output(out_dir, resume)
    from seqlab.ls_features import require_ls_artefacts

    require_ls_artefacts(config.model.features)  # a missing LS folder fails now, not after loading embeddings

    def save_new_run(trainer: Trainer) -> None:
        archive.save_config(out_dir, dump_config(config))
        archive.save_vocabs(out_dir, trainer.vocabs)
        archive.save_feature_state(out_dir, trainer.features.state if trainer.features else {})

    def sizes(trainer: Trainer) -> str:
        counts = (str(len(trainer.splits[s].tokens) if s in trainer.splits else 0) for s in ("train", "dev", "test"))
        return f"{'/'.join(counts)} train/dev/test"

    return fit_in_run_dir(out_dir, lambda: Trainer(config, out_dir, resume=resume, progress=progress), resume=resume,
                          save_new_run=save_new_run, sizes=sizes)


def fit_in_run_dir(out_dir: Path, build: Callable[[], Any], *, resume: bool, save_new_run: Callable[[Any], None],
                   sizes: Callable[[Any], str]) -> dict[str, Any]:
    """Build a trainer (a tagger's or a relation classifier's) and train it, all with its log in
    ``out_dir/train.log`` (what building reports, such as pretrained-vector coverage, included): a resumed run
    restores its checkpoint, a new one first writes what loading the model needs. A new directory whose trainer
    cannot be built (bad data, a missing file) is removed again, so the same ``--output`` can be used once fixed."""
    first_new = None  # the outermost folder this call creates, if any
    for folder in (out_dir, *out_dir.parents):
        if folder.exists():
            break
        first_new = folder
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        with archive.run_log(out_dir):
            log.info("run directory %s", out_dir)
            trainer = build()
    except BaseException:
        if first_new is not None:
            shutil.rmtree(first_new, ignore_errors=True)
        raise
    with archive.run_log(out_dir):
        if resume:
            trainer.load_checkpoint()
        else:
            save_new_run(trainer)
        n_params = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
        log.info("device %s, %d trainable parameters, %s sentences", trainer.device, n_params, sizes(trainer))
        return trainer.fit()
