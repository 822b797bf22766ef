"""C&W embeddings: Collobert & Weston (2008) as Turian, Ratinov & Bengio (2010, §4.1) train them.

A window of ``n`` words (n = 5) is scored by one hidden layer over its concatenated
embeddings; the window's LAST word is replaced by a word drawn uniformly from the
vocabulary, and the hinge loss ``max(0, 1 - s(x) + s(x~))`` asks the real window to
outscore the corrupted one by a margin of 1. Training is SGD with separate learning rates
for the embeddings and for the network (Turian: the embeddings' rate 1000-32000 times
higher), embeddings initialised uniformly in [-0.01, 0.01].

How a minibatch update uses the learning rates: an embedding row takes the mean of its
gradients over its occurrences in the batch (:func:`sgd_rows_`), so a rare word moves
exactly as under one-window-at-a-time SGD, while PADDING or "the" cannot overshoot; the
network weights take the batch's mean gradient. Turian's code (turian/neural-language-model,
``model.py``) multiplies its configured rates by the noise weight 1/P(noise) = V. An
embeddings file his configs load, ``model-2520000000.LEARNING_RATE=1e-09.
EMBEDDING_LEARNING_RATE=1e-06...`` (RCV1, V = 268,810, 2.52 billion updates), thus used
about 0.27 per window for an embedding and 2.7e-4 per window for the network, i.e.
about 0.027 for a batch-mean step over 100 windows. Our defaults (0.1 and 0.01, tanh,
batch 100) keep that ratio of 10. On Reuters-21578 (3.4M tokens) we tried embedding
rates 0.03-1 and network rates 0.003-0.1 for up to one epoch: the held-out ranking loss
barely differs, an embedding rate of 1 gives neighbours that look random, and tanh gave
better neighbours than hardtanh. Expect C&W to learn slowly: after one epoch the vectors
mostly encode frequency; after four, months and a few antonyms (profit/loss) find each
other; that file had seen 2.5 billion windows (740 epochs of Reuters).

This module also holds the resumable minibatch loop that :mod:`features.hlbl` reuses.
torch is imported inside the functions only.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

import numpy as np

from features.atomic import atomic_open
from features.vocab import Embeddings, TrainingStats, Vocabulary, encode, windows

if TYPE_CHECKING:  # pragma: no cover
    import torch

log = logging.getLogger(__name__)

ACTIVATIONS = ("hardtanh", "tanh")  # C&W 2008 use hardtanh; Turian's code offers tanh (and softsign)
CHECKPOINT_FORMAT = "features.sgd/1"


# ---------------------------------------------------------------- the shared loop

@dataclass(frozen=True)
class LoopSettings:
    """How the minibatch loop runs: what :func:`run_sgd` needs besides the model and data."""

    epochs: int
    batch_size: int
    seed: int
    checkpoint: Path | None = None
    checkpoint_every: int = 10_000  # updates between checkpoints (one is also written when the loop stops)
    max_updates: int | None = None  # stop early after this many updates in all (resume later)
    progress: bool = True
    desc: str = "train"


class Trainable(Protocol):
    device: "torch.device"

    def step(self, batch: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor": ...

    def state_dict(self) -> dict[str, "torch.Tensor"]: ...

    def load_state_dict(self, state: dict[str, "torch.Tensor"]) -> None: ...


def resolve_device(device: str) -> "torch.device":
    """``"auto"`` is CUDA when available, else the CPU; anything else is passed to torch."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError as err:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', but got {device!r}") from err
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for, but torch sees no CUDA device; use 'auto' or 'cpu'")
    return resolved


def seed_for(seed: int, stream: int, index: int) -> int:
    """An independent 63-bit seed for (run seed, stream, index): epochs' orders, updates' noise."""
    return int(np.random.SeedSequence([seed % 2**63, stream, index]).generate_state(1, np.uint64)[0] >> 1)


def fingerprint(settings: dict[str, Any], vocab: Vocabulary, data: np.ndarray) -> str:
    """What a checkpoint must match to be resumed: settings, vocabulary and training windows."""
    h = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    h.update("\n".join(vocab.words).encode())
    h.update(np.ascontiguousarray(data).tobytes())
    return h.hexdigest()


def run_sgd(model: Trainable, data: np.ndarray, loop: LoopSettings, key: str) -> TrainingStats:
    """Minibatch SGD over the rows of ``data`` (one window per row), resumable and deterministic.

    Epoch ``e`` visits the rows in an order drawn from ``(seed, e)`` and update ``t`` draws
    its noise from ``(seed, t)``, so a run resumed from a checkpoint makes exactly the
    updates an uninterrupted run makes (bit for bit on the CPU).
    """
    import torch
    from tqdm import tqdm

    n, size = len(data), loop.batch_size
    if n == 0:
        raise ValueError("the corpus has no tokens to train on")
    per_epoch = math.ceil(n / size)
    stop = per_epoch * loop.epochs if loop.max_updates is None else min(per_epoch * loop.epochs, loop.max_updates)
    step, seconds, ema = 0, 0.0, torch.tensor(float("nan"), device=model.device)
    if loop.checkpoint is not None and loop.checkpoint.exists():
        step, seconds, ema = _resume(model, loop.checkpoint, key)
    done = lambda t: (t // per_epoch) * n + min((t % per_epoch) * size, n)  # noqa: E731  windows seen after t updates
    rows = torch.from_numpy(np.ascontiguousarray(data)).to(model.device)  # shape: (n, window), int32
    bar = tqdm(total=n * loop.epochs, initial=done(step), unit="win", unit_scale=True, desc=loop.desc,
               disable=not loop.progress, smoothing=0.1, mininterval=0.5 if sys.stderr.isatty() else 30.0)
    order_epoch, order, start = -1, None, time.perf_counter()
    while step < stop:
        epoch, b = divmod(step, per_epoch)
        if epoch != order_epoch:
            g = torch.Generator().manual_seed(seed_for(loop.seed, 1, epoch))
            order, order_epoch = torch.randperm(n, generator=g).to(model.device), epoch
        batch = rows[order[b * size:(b + 1) * size]].long()  # shape: (B, window)
        loss = model.step(batch, torch.Generator().manual_seed(seed_for(loop.seed, 2, step)))
        per_window = loss / batch.shape[0]
        ema = torch.where(torch.isnan(ema), per_window, 0.99 * ema + 0.01 * per_window)
        step += 1
        bar.update(batch.shape[0])
        if step % 50 == 0 or step == stop:
            value = float(ema)
            if not math.isfinite(value):
                raise FloatingPointError(f"training diverged by update {step}: loss is {value}; lower the learning rates")
            bar.set_postfix(loss=f"{value:.4f}", refresh=False)
        if step % loop.checkpoint_every == 0 or step == stop:
            if loop.checkpoint is not None:
                save_checkpoint(loop.checkpoint, model, step, seconds + time.perf_counter() - start, ema, key)
            if not loop.progress:  # no bar: a line per checkpoint interval, so a background run can be followed
                log.info("%s: update %d of %d (epoch %d of %d), loss %.4f, %.0f s of training, %.0f s process CPU",
                         loop.desc, step, stop, (step - 1) // per_epoch + 1, loop.epochs, float(ema),
                         seconds + time.perf_counter() - start, time.process_time())
    bar.close()
    seconds += time.perf_counter() - start
    return TrainingStats(windows_seen=done(step), updates=step, seconds=seconds, final_loss=float(ema))


def save_checkpoint(path: Path, model: Trainable, step: int, seconds: float, ema: "torch.Tensor", key: str) -> None:
    """Tensors and plain values only (loadable with ``weights_only=True``), written atomically."""
    import torch

    state = {"format": CHECKPOINT_FORMAT, "fingerprint": key, "step": step, "seconds": seconds,
             "loss_ema": ema.detach().cpu(), "params": {k: v.detach().cpu() for k, v in model.state_dict().items()}}
    with atomic_open(path, "wb") as handle:
        torch.save(state, handle)


def _resume(model: Trainable, path: Path, key: str) -> tuple[int, float, "torch.Tensor"]:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a damaged or foreign file
        raise ValueError(f"{path}: not a readable checkpoint ({err.__class__.__name__}: {err})") from err
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: expected a {CHECKPOINT_FORMAT} checkpoint, but got something else")
    if state["fingerprint"] != key:
        raise ValueError(f"{path}: this checkpoint was written for another corpus or other settings; "
                         "delete it or pass another checkpoint path")
    model.load_state_dict(state["params"])
    log.info("resumed from %s after %d updates", path, state["step"])
    return int(state["step"]), float(state["seconds"]), state["loss_ema"].to(model.device)


def sgd_rows_(table: "torch.Tensor", ids: "torch.Tensor", grads: "torch.Tensor", lr: float) -> None:
    """``table[i] -= lr * (mean of the gradients for row i in this batch)`` for every row i in ``ids``.

    Averaging over a row's occurrences (instead of summing them) keeps a row that appears
    in many windows of the batch (PADDING, "the", the tree's root) from overshooting, while
    a rare word's row moves exactly as under one-window-at-a-time SGD.
    """
    import torch

    counts = torch.bincount(ids, minlength=len(table))  # shape: (rows,)
    scale = counts[ids].reciprocal().to(grads.dtype)  # shape: (len(ids),)
    table.index_add_(0, ids, grads * scale.view(-1, *([1] * (grads.dim() - 1))), alpha=-lr)


def check_positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, but got {value}")


# ---------------------------------------------------------------- the C&W model

def corrupt(windows_: "torch.Tensor", vocab_size: int, generator: "torch.Generator") -> "torch.Tensor":
    """The windows with their last word replaced by a different word, uniform over ids 1..V-1.

    Id 0 (PADDING) is never drawn; the true word is never drawn either (as in Turian's code,
    which redraws until the word changes): ``u`` uniform over V-2 values, shifted past it.
    """
    import torch

    if vocab_size < 3:
        raise ValueError(f"corruption needs at least one word besides PADDING and UNKNOWN, but the vocabulary has {vocab_size} entries")
    true = windows_[:, -1]
    u = torch.randint(1, vocab_size - 1, (len(windows_),), generator=generator).to(windows_.device)
    out = windows_.clone()
    out[:, -1] = u + (u >= true).long()
    return out


class CWModel:
    """The C&W window scorer (Collobert & Weston 2008; Turian et al. 2010, §4.1).

    ``s(x) = w2 . act(W1 [e(x_1); ...; e(x_n)] + b1)``; an output bias would cancel in the
    hinge loss, so there is none. Network weights are uniform in ±1/sqrt(fan-in), as in
    Turian's code.
    """

    def __init__(self, vocab_size: int, *, dim: int, window: int, hidden: int, activation: str,
                 lr_embeddings: float, lr_network: float, seed: int, device: "torch.device") -> None:
        import torch

        g = torch.Generator().manual_seed(seed)
        uniform = lambda *shape, scale: ((torch.rand(*shape, generator=g) * 2 - 1) * scale).to(device)  # noqa: E731
        self.device, self.window, self.activation = device, window, activation
        self.lr_embeddings, self.lr_network = lr_embeddings, lr_network
        self.E = uniform(vocab_size, dim, scale=0.01)  # shape: (V, dim)
        self.W1 = uniform(window * dim, hidden, scale=1 / math.sqrt(window * dim)).requires_grad_()  # (n*dim, H)
        self.b1 = torch.zeros(hidden, device=device, requires_grad=True)  # shape: (H,)
        self.w2 = uniform(hidden, scale=1 / math.sqrt(hidden)).requires_grad_()  # shape: (H,)

    def _hidden(self, pre: "torch.Tensor") -> "torch.Tensor":
        import torch.nn.functional as F

        return F.hardtanh(pre) if self.activation == "hardtanh" else pre.tanh()

    def score(self, windows_: "torch.Tensor") -> "torch.Tensor":
        """s(x) for each window: shape (B,)."""
        import torch

        with torch.no_grad():
            x = self.E[windows_].reshape(len(windows_), -1)  # shape: (B, n*dim)
            return self._hidden(x @ self.W1 + self.b1) @ self.w2

    def step(self, batch: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """One SGD update on a batch of windows; returns the batch's summed hinge loss."""
        import torch

        size, dim = len(batch), self.E.shape[1]
        noise = corrupt(batch, len(self.E), generator)[:, -1]  # shape: (B,)
        x = self.E[batch].requires_grad_()  # shape: (B, n, dim)
        x_noise = self.E[noise].requires_grad_()  # shape: (B, dim)
        with torch.enable_grad():
            pre = x.reshape(size, -1) @ self.W1 + self.b1  # shape: (B, H)
            # a corrupted window differs from its window only in the last word: reuse the rest
            pre_noise = pre + (x_noise - x[:, -1]) @ self.W1[-dim:]  # shape: (B, H)
            s = self._hidden(torch.cat([pre, pre_noise])) @ self.w2  # shape: (2B,)
            loss = (1 - s[:size] + s[size:]).clamp(min=0).sum()
            gx, gx_noise, gW1, gb1, gw2 = torch.autograd.grad(loss, [x, x_noise, self.W1, self.b1, self.w2])
        with torch.no_grad():
            for p, grad in ((self.W1, gW1), (self.b1, gb1), (self.w2, gw2)):
                p.sub_(grad, alpha=self.lr_network / size)  # the batch's mean gradient
            rows = torch.cat([batch.reshape(-1), noise])
            sgd_rows_(self.E, rows, torch.cat([gx.reshape(-1, dim), gx_noise]), self.lr_embeddings)
        return loss.detach()

    def ranking_loss(self, data: np.ndarray, *, seed: int, batch_size: int = 4096) -> dict[str, float]:
        """Held-out diagnostic: mean hinge loss and error rate against one fixed corruption per window."""
        import torch

        total, errors = 0.0, 0
        g = torch.Generator().manual_seed(seed_for(seed, 3, 0))
        for lo in range(0, len(data), batch_size):
            batch = torch.from_numpy(data[lo:lo + batch_size]).long().to(self.device)
            good, bad = self.score(batch), self.score(corrupt(batch, len(self.E), g))
            total += float((1 - good + bad).clamp(min=0).sum())
            errors += int((bad >= good).sum())
        return {"ranking_loss": total / max(len(data), 1), "ranking_error": errors / max(len(data), 1)}

    def state_dict(self) -> dict[str, "torch.Tensor"]:
        return {"E": self.E, "W1": self.W1, "b1": self.b1, "w2": self.w2}

    def load_state_dict(self, state: dict[str, "torch.Tensor"]) -> None:
        copy_state(self.state_dict(), state)


# ---------------------------------------------------------------- training

def train_cw(sentences: Iterable[Sequence[str]], *, dim: int = 50, window: int = 5, hidden: int = 100,
             activation: str = "tanh", epochs: int = 10, batch_size: int = 100,
             lr_embeddings: float = 0.1, lr_network: float = 0.01, min_count: int = 3, seed: int = 0,
             device: str = "auto", heldout: Iterable[Sequence[str]] | None = None,
             checkpoint: str | os.PathLike[str] | None = None, checkpoint_every: int = 10_000,
             max_updates: int | None = None, progress: bool = True) -> Embeddings:
    """Train C&W embeddings on tokenised ``sentences``; returns the word vectors (PADDING and *UNKNOWN* included).

    ``heldout`` sentences, when given, are scored at the end (``stats.heldout``: ranking loss
    and error rate against one random corruption per window). With ``checkpoint``, the
    state is saved there atomically every ``checkpoint_every`` updates and when training
    stops; calling again with the same arguments resumes from it (with more ``epochs`` it
    trains on, exactly as a longer run would; other changes are refused). ``max_updates``
    stops early (a time budget, or a test of resuming).
    """
    check_positive(dim=dim, window=window, hidden=hidden, epochs=epochs, batch_size=batch_size,
                   lr_embeddings=lr_embeddings, lr_network=lr_network, checkpoint_every=checkpoint_every)
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, but got {activation!r}")
    settings = dict(model="cw", dim=dim, window=window, hidden=hidden, activation=activation,
                    batch_size=batch_size, lr_embeddings=lr_embeddings, lr_network=lr_network,
                    min_count=min_count, seed=seed)
    vocab, ids, lengths = encode(sentences, min_count=min_count)
    data = windows(ids, lengths, window)
    model = CWModel(len(vocab), dim=dim, window=window, hidden=hidden, activation=activation,
                    lr_embeddings=lr_embeddings, lr_network=lr_network, seed=seed, device=resolve_device(device))
    loop = LoopSettings(epochs=epochs, batch_size=batch_size, seed=seed,
                        checkpoint=None if checkpoint is None else Path(checkpoint),
                        checkpoint_every=checkpoint_every, max_updates=max_updates, progress=progress, desc="C&W")
    log.info("C&W: %d words in the vocabulary, %d windows, on %s", len(vocab), len(data), model.device)
    stats = run_sgd(model, data, loop, fingerprint(settings, vocab, data))
    if heldout is not None:
        _, held_ids, held_lengths = encode(heldout, vocabulary=vocab)
        stats.heldout = model.ranking_loss(windows(held_ids, held_lengths, window), seed=seed)
    log.info("C&W: %s", asdict(stats))
    return Embeddings(list(vocab.words), model.E.detach().cpu().numpy().astype(np.float32), stats)


def copy_state(params: dict[str, "torch.Tensor"], state: dict[str, "torch.Tensor"]) -> None:
    """Copy checkpoint tensors into a model's parameters in place, checking every shape."""
    import torch

    with torch.no_grad():
        for name, p in params.items():
            if state[name].shape != p.shape:
                raise ValueError(f"checkpoint tensor {name} must have shape {tuple(p.shape)}, but got {tuple(state[name].shape)}")
            p.copy_(state[name])
