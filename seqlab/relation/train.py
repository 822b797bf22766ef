"""Training the relation classifier: epochs, model selection on the dev split, atomic checkpoints, resume.

The dev split is ``data.dev_size`` training sentences sampled with ``data.dev_seed``; the best epoch
is chosen by the official macro-F1 on it and never by the test set (Lee et al.'s public code
evaluated on test during training; we do not). The test set is scored once, at the end, with the
selected weights. The run directory has the tagger's layout (see :mod:`seqlab.core.archive`) plus the
official-format answer files and reports (``dev.answers.txt``, ``test.answers.txt``, ``test.report.txt``).
"""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from seqlab.core import archive
from seqlab.core.atomic import atomic_open
from seqlab.tagging.config import dump_config
from seqlab.data.semeval import RelationExample, dev_split, read_semeval
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.relation.build import batches, build_model, build_optimizer, build_vocabs, encode, model_inputs
from seqlab.relation.config import RelationConfig
from seqlab.relation.predict import evaluate_examples
from seqlab.relation.score import SemEvalResult
from seqlab.tagging.train import fit_in_run_dir, optimizer_step, record_epoch, resolve_device

log = logging.getLogger("seqlab.relation.train")


def read_splits(config: RelationConfig) -> dict[str, list[RelationExample]]:
    """train / dev (sampled from training) / test examples, as the model reads them."""
    d = config.data
    full = read_semeval(resolve_data_path(d.train, key="data.train"))
    if any(e.label is None for e in full):
        raise SeqlabError(f"data.train: {d.train} has sentences without labels")
    train, dev = dev_split(full, d.dev_size, d.dev_seed)
    splits = {"train": train, "dev": dev}
    if d.test:
        splits["test"] = read_semeval(resolve_data_path(d.test, key="data.test"))
    return {name: model_inputs(examples, config.model) for name, examples in splits.items()}


class RelationTrainer:
    """Model, optimizer and data of one run; ``fit`` runs epochs until done."""

    def __init__(self, config: RelationConfig, out_dir: Path, *, resume: bool = False, progress: bool = True) -> None:
        self.config, self.out_dir, self.progress = config, out_dir, progress
        t = config.train
        if t.threads:
            torch.set_num_threads(t.threads)
        self.device = resolve_device(t.device)
        self.splits = read_splits(config)
        if resume:
            self.vocabs, matrix = archive.load_vocabs(out_dir), None
        else:
            self.vocabs, matrix = build_vocabs(config, self.splits)
        torch.manual_seed(t.seed)
        self.model = build_model(config, self.vocabs, matrix).to(self.device)
        self.optimizer = build_optimizer(self.model, t)
        self.data = {name: encode(examples, self.vocabs) for name, examples in self.splits.items()}
        self.generator = torch.Generator().manual_seed(t.seed)
        self.state: dict[str, Any] = {"epoch": 0, "best_f1": -1.0, "best_epoch": 0, "bad_epochs": 0, "history": []}

    def save_checkpoint(self) -> None:
        archive.save_training_state(self.out_dir, {"model": self.model, "optimizer": self.optimizer}, self.generator,
                                    self.state)

    def load_checkpoint(self) -> None:
        self.state = archive.load_training_state(self.out_dir, {"model": self.model, "optimizer": self.optimizer},
                                                 self.generator, self.device)
        log.info("resumed after epoch %d (best dev macro-F1 %.2f at epoch %d)",
                 self.state["epoch"], self.state["best_f1"], self.state["best_epoch"])

    def train_epoch(self, epoch: int) -> dict[str, float]:
        t = self.config.train
        self.model.train()
        data = self.data["train"]
        bar = tqdm(total=len(data), unit="sent", desc=f"epoch {epoch}", disable=not self.progress, leave=False,
                   mininterval=0.5 if sys.stderr.isatty() else 30.0)
        params = [p for p in self.model.parameters() if p.requires_grad]
        total, seen, start = 0.0, 0, time.perf_counter()
        for step, (_, batch) in enumerate(batches(data, t.batch_size, shuffle=True, generator=self.generator)):
            loss = self.model.loss(batch.to(self.device))
            optimizer_step(loss, self.optimizer, params, t.clip, f"epoch {epoch}, step {step}")
            size = int(batch.words.shape[0])
            total, seen = total + loss.item() * size, seen + size
            bar.update(size)
            if step % 20 == 0:
                bar.set_postfix(loss=f"{total / seen:.3f}")
        bar.close()
        elapsed = time.perf_counter() - start
        return {"loss": total / max(seen, 1), "train_seconds": elapsed, "sentences_per_second": seen / elapsed}

    def evaluate(self, name: str, answers: Path | None = None) -> SemEvalResult:
        return evaluate_examples(self.model, self.splits[name], self.data[name], self.vocabs["labels"].itos,
                                 batch_size=self.config.train.eval_batch_size, device=self.device, answers=answers)

    def fit(self) -> dict[str, Any]:
        t = self.config.train
        while self.state["epoch"] < t.epochs and self.state["bad_epochs"] < t.patience:
            epoch = self.state["epoch"] + 1
            stats = self.train_epoch(epoch)
            start = time.perf_counter()
            dev = self.evaluate("dev")
            stats.update(epoch=epoch, dev_f1=dev.official_f1, dev_seconds=time.perf_counter() - start)
            improved = record_epoch(self.state, epoch, dev.official_f1, stats)
            if improved:
                archive.save_weights(self.out_dir, self.model)
            self.save_checkpoint()
            log.info("epoch %d: loss %.4f, dev macro-F1 %.2f%s, %.1f sent/s, %.1f s", epoch, stats["loss"],
                     dev.official_f1, " (best)" if improved else "", stats["sentences_per_second"], stats["train_seconds"])
        if self.state["bad_epochs"] >= t.patience:
            log.info("early stopping: no dev macro-F1 gain for %d epochs", t.patience)
        return self.finish()

    def finish(self) -> dict[str, Any]:
        """Reload the best weights; score dev and test once; write answers, reports and metrics.json."""
        self.model.load_state_dict(archive.load_weights(self.out_dir, self.device))
        metrics: dict[str, Any] = {"best_epoch": self.state["best_epoch"], "epochs": self.state["epoch"],
                                   "selected_on": "dev", "history": self.state["history"]}
        for name in ("dev", "test"):
            if name not in self.splits:
                continue
            start = time.perf_counter()
            result = self.evaluate(name, answers=self.out_dir / f"{name}.answers.txt")
            seconds = time.perf_counter() - start
            metrics[name] = {**result.to_dict(), "sentences": len(self.splits[name]),
                             "classify_seconds": seconds, "sentences_per_second": len(self.splits[name]) / seconds}
            with atomic_open(self.out_dir / f"{name}.report.txt") as out:
                out.write(result.report)
            log.info("%s: official macro-F1 %.2f (%d sentences, %.0f sent/s)", name, result.official_f1,
                     len(self.splits[name]), len(self.splits[name]) / seconds)
        archive.save_metrics(self.out_dir, metrics)
        return metrics


def train_relation(config: RelationConfig, out_dir: str | Path, *, resume: bool = False,
                   progress: bool = True) -> dict[str, Any]:
    """Train a relation classifier into ``out_dir``; with ``resume``, continue the run already there."""
    out_dir = Path(out_dir)
    archive.check_output(out_dir, resume)

    def save_new_run(trainer: RelationTrainer) -> None:
        archive.save_config(out_dir, dump_config(config))
        archive.save_vocabs(out_dir, trainer.vocabs)

    return fit_in_run_dir(out_dir, lambda: RelationTrainer(config, out_dir, resume=resume, progress=progress),
                          resume=resume, save_new_run=save_new_run,
                          sizes=lambda trainer: "/".join(f"{len(v)} {k}" for k, v in trainer.splits.items()))
