"""HLBL embeddings: the hierarchical log-bilinear language model (Mnih & Hinton 2009; Turian et al. 2010, §4.2).

The next word's representation is predicted linearly from the ``n - 1`` context words'
representations, ``r^ = sum_i C_i r_{w_i} + b`` (one full ``dim x dim`` matrix per
position; Turian's HLBL embeddings use n = 5). The next word's probability is a product
of binary decisions along its path in a binary tree over the vocabulary,
``P(d_j = 1) = sigmoid(r^ . q_node + b_node)``, so each update costs O(log V) instead of
O(V). The word representations returned are the context embeddings ``R``.

The tree (:class:`Tree`) is either a random balanced tree (the default; Mnih & Hinton's
"random" tree, which they found worse than trees built from data) or one that follows
Brown-cluster bit-strings (:func:`tree_from_bitstrings`), which is such a data-built tree.
Mnih & Hinton's best trees come from recursively clustering the embeddings of a model
first trained with a random tree; which tree Turian et al.'s HLBL embeddings (trained by
Mnih) used is not something we could confirm, so pass bit-strings to get a data-built one.

Paths are padded to the deepest leaf with a mask, so a batch gathers its node vectors
and makes one batched dot product. Training shares :func:`features.cw.run_sgd`: same
progress bar, checkpoints, resuming and determinism. As for C&W, rows of R and of the
node tables take the mean of their gradients over their occurrences in a batch (the root
is in every window), and C and b take the batch's mean gradient. The default rate, 0.05,
was the best of 0.02 / 0.05 / 0.1 / 0.2 after one epoch on Reuters-21578 (held-out
perplexity 130 / 124 / 141 / 234, random tree, min_count 3); 0.5 and 2 diverged.
torch is imported inside functions.
"""
from __future__ import annotations

import hashlib
import logging
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence, Union

import numpy as np

from features.cw import LoopSettings, check_positive, copy_state, fingerprint, resolve_device, run_sgd, sgd_rows_
from features.vocab import Embeddings, encode, windows

if TYPE_CHECKING:  # pragma: no cover
    import torch

log = logging.getLogger(__name__)

Subtree = Union[int, tuple]  # a word id (leaf) or a (left, right) pair


@dataclass(frozen=True)
class Tree:
    """A full binary tree whose leaves are word ids ``0..V-1``, as padded root-to-leaf paths.

    ``nodes[w, j]`` is the j-th internal node on word ``w``'s path and ``signs[w, j]`` is
    +1 where the path goes left (decision 1), -1 where it goes right (decision 0) and 0 in
    the padding past the leaf.
    """

    nodes: np.ndarray  # shape: (V, depth), int64
    signs: np.ndarray  # shape: (V, depth), float32
    n_nodes: int  # internal nodes: V - 1

    @property
    def depth(self) -> int:
        return int(self.nodes.shape[1])

    def digest(self) -> str:
        return hashlib.sha256(self.nodes.tobytes() + self.signs.tobytes()).hexdigest()


def _balanced(items: Sequence[Subtree]) -> Subtree:
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return (_balanced(items[:mid]), _balanced(items[mid:]))


def _flatten(root: Subtree, n_words: int) -> Tree:
    paths: list[tuple | None] = [None] * n_words
    stack: list[tuple[Subtree, tuple]] = [(root, ())]
    n_nodes = 0
    while stack:
        node, path = stack.pop()
        if isinstance(node, int):
            paths[node] = path
            continue
        k, n_nodes = n_nodes, n_nodes + 1
        stack.append((node[1], path + ((k, -1.0),)))
        stack.append((node[0], path + ((k, 1.0),)))
    depth = max(len(p) for p in paths)  # type: ignore[arg-type]
    nodes = np.zeros((n_words, depth), dtype=np.int64)
    signs = np.zeros((n_words, depth), dtype=np.float32)
    for w, path in enumerate(paths):
        for j, (k, sign) in enumerate(path):  # type: ignore[arg-type]
            nodes[w, j], signs[w, j] = k, sign
    return Tree(nodes, signs, n_nodes)


def random_tree(n_words: int, *, seed: int = 0) -> Tree:
    """A balanced tree over the word ids in a random order (depth ceil(log2 V))."""
    if n_words < 1:
        raise ValueError(f"a tree needs at least one word, but got {n_words}")
    order = np.random.default_rng(seed).permutation(n_words).tolist()
    return _flatten(_balanced(order), n_words)


def tree_from_bitstrings(words: Sequence[str], bitstrings: Mapping[str, str]) -> Tree:
    """A tree that follows Brown-cluster bit-strings: words sharing a prefix share those ancestors.

    The words of one cluster (same bit-string) hang under it in a balanced subtree, in id
    (frequency) order; words without a bit-string (e.g. PADDING, *UNKNOWN*) hang from the
    root the same way. Nodes with a single child are skipped, so the tree is full and the
    probabilities of all words sum to one. Bit-strings for words outside ``words`` are ignored.
    """
    root: dict = {"words": []}
    for i, word in enumerate(words):
        bits = bitstrings.get(word)
        if bits is None:
            root["words"].append(i)
            continue
        if not isinstance(bits, str) or not bits or set(bits) - {"0", "1"}:
            raise ValueError(f"the bit-string of {word!r} must be a non-empty string of 0s and 1s, but got {bits!r}")
        node = root
        for bit in bits:
            node = node.setdefault(bit, {"words": []})
        node["words"].append(i)

    def build(node: dict) -> Subtree:
        items = [_balanced(node["words"])] if node["words"] else []
        items += [build(node[bit]) for bit in "01" if bit in node]
        return _balanced(items)

    return _flatten(build(root), len(words))


class HLBLModel:
    """Context embeddings R, position matrices C_i and bias b, and per-node vectors q and biases.

    Initialisation: R, q uniform in [-0.01, 0.01] (as the C&W embeddings); C_i uniform in
    ±1/sqrt(dim); biases zero.
    """

    def __init__(self, vocab_size: int, tree: Tree, *, dim: int, context: int, lr: float, seed: int,
                 device: "torch.device") -> None:
        import torch

        if tree.nodes.shape[0] != vocab_size:
            raise ValueError(f"the tree must have one leaf per word, but got {tree.nodes.shape[0]} leaves and {vocab_size} words")
        g = torch.Generator().manual_seed(seed)
        uniform = lambda *shape, scale: ((torch.rand(*shape, generator=g) * 2 - 1) * scale).to(device)  # noqa: E731
        self.device, self.lr, self.context = device, lr, context
        self.R = uniform(vocab_size, dim, scale=0.01)  # shape: (V, dim)
        self.C = uniform(context, dim, dim, scale=1 / math.sqrt(dim)).requires_grad_()  # shape: (n-1, dim in, dim out)
        self.b = torch.zeros(dim, device=device, requires_grad=True)  # shape: (dim,)
        self.Q = uniform(max(tree.n_nodes, 1), dim, scale=0.01)  # shape: (V-1, dim)
        self.bq = torch.zeros(max(tree.n_nodes, 1), device=device)  # shape: (V-1,)
        self.nodes = torch.from_numpy(tree.nodes).to(device)  # shape: (V, depth)
        self.signs = torch.from_numpy(tree.signs).to(device)  # shape: (V, depth)

    def _predict(self, x: "torch.Tensor") -> "torch.Tensor":
        """r^ = sum_i r_i C_i + b (row vectors: C_i maps position i's word to the prediction)."""
        return x.reshape(len(x), -1) @ self.C.reshape(-1, self.C.shape[-1]) + self.b  # shape: (B, dim)

    def _path_nll(self, rhat: "torch.Tensor", q: "torch.Tensor", bq: "torch.Tensor", signs: "torch.Tensor") -> "torch.Tensor":
        import torch.nn.functional as F

        z = (q @ rhat.unsqueeze(-1)).squeeze(-1) + bq  # shape: (B, depth)
        return (F.softplus(-signs * z) * (signs != 0)).sum(-1)  # shape: (B,)

    def log_prob(self, windows_: "torch.Tensor") -> "torch.Tensor":
        """log P(last word | the words before it) for each window: shape (B,)."""
        import torch

        with torch.no_grad():
            y = windows_[:, -1]
            rhat = self._predict(self.R[windows_[:, :-1]])
            nodes = self.nodes[y]
            return -self._path_nll(rhat, self.Q[nodes], self.bq[nodes], self.signs[y])

    def log_prob_all(self, contexts: "torch.Tensor") -> "torch.Tensor":
        """log P(w | context) for every word w: shape (B, V). Memory B x V x depth; for checks."""
        import torch
        import torch.nn.functional as F

        with torch.no_grad():
            z = self._predict(self.R[contexts]) @ self.Q.T + self.bq  # shape: (B, n_nodes)
            picked = z[:, self.nodes]  # shape: (B, V, depth)
            return (F.logsigmoid(self.signs * picked) * (self.signs != 0)).sum(-1)

    def step(self, batch: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """One SGD update on a batch of windows; returns the batch's summed negative log-likelihood."""
        import torch

        ctx, y = batch[:, :-1], batch[:, -1]
        nodes, signs = self.nodes[y], self.signs[y]  # shape: (B, depth)
        x = self.R[ctx].requires_grad_()  # shape: (B, n-1, dim)
        q = self.Q[nodes].requires_grad_()  # shape: (B, depth, dim)
        bq = self.bq[nodes].requires_grad_()  # shape: (B, depth)
        with torch.enable_grad():
            loss = self._path_nll(self._predict(x), q, bq, signs).sum()
            gx, gq, gbq, gC, gb = torch.autograd.grad(loss, [x, q, bq, self.C, self.b])
        with torch.no_grad():
            self.C.sub_(gC, alpha=self.lr / len(batch))  # the batch's mean gradient
            self.b.sub_(gb, alpha=self.lr / len(batch))
            dim = self.R.shape[1]
            sgd_rows_(self.R, ctx.reshape(-1), gx.reshape(-1, dim), self.lr)
            real = signs.reshape(-1) != 0  # padding past the leaf is no occurrence of node 0
            sgd_rows_(self.Q, nodes.reshape(-1)[real], gq.reshape(-1, dim)[real], self.lr)
            sgd_rows_(self.bq, nodes.reshape(-1)[real], gbq.reshape(-1)[real], self.lr)
        return loss.detach()

    def perplexity(self, data: np.ndarray, *, batch_size: int = 4096) -> dict[str, float]:
        """Held-out diagnostic: exp of the mean negative log-likelihood per window (exact: the tree normalises)."""
        import torch

        total = 0.0
        for lo in range(0, len(data), batch_size):
            total -= float(self.log_prob(torch.from_numpy(data[lo:lo + batch_size]).long().to(self.device)).sum())
        mean = total / max(len(data), 1)
        return {"nll": mean, "perplexity": math.exp(mean)}

    def state_dict(self) -> dict[str, "torch.Tensor"]:
        return {"R": self.R, "C": self.C, "b": self.b, "Q": self.Q, "bq": self.bq}

    def load_state_dict(self, state: dict[str, "torch.Tensor"]) -> None:
        copy_state(self.state_dict(), state)


def train_hlbl(sentences: Iterable[Sequence[str]], *, dim: int = 50, context: int = 4,
               tree: Mapping[str, str] | None = None, epochs: int = 5, batch_size: int = 100, lr: float = 0.05,
               min_count: int = 3, seed: int = 0, device: str = "auto",
               heldout: Iterable[Sequence[str]] | None = None, checkpoint: str | os.PathLike[str] | None = None,
               checkpoint_every: int = 10_000, max_updates: int | None = None, progress: bool = True) -> Embeddings:
    """Train HLBL embeddings on tokenised ``sentences``; returns the context embeddings R.

    ``tree``: None for a random balanced tree (from ``seed``), or Brown-cluster bit-strings
    ``{word: "0110..."}``. ``heldout`` sentences are scored at the end (``stats.heldout``:
    per-word NLL and perplexity; *UNKNOWN* counts as a word). ``checkpoint``,
    ``checkpoint_every`` and ``max_updates`` work as in :func:`features.cw.train_cw`.
    """
    check_positive(dim=dim, context=context, epochs=epochs, batch_size=batch_size, lr=lr,
                   checkpoint_every=checkpoint_every)
    vocab, ids, lengths = encode(sentences, min_count=min_count)
    data = windows(ids, lengths, context + 1)
    shape = random_tree(len(vocab), seed=seed) if tree is None else tree_from_bitstrings(vocab.words, tree)
    settings = dict(model="hlbl", dim=dim, context=context, tree=shape.digest(),
                    batch_size=batch_size, lr=lr, min_count=min_count, seed=seed)
    model = HLBLModel(len(vocab), shape, dim=dim, context=context, lr=lr, seed=seed, device=resolve_device(device))
    loop = LoopSettings(epochs=epochs, batch_size=batch_size, seed=seed,
                        checkpoint=None if checkpoint is None else Path(checkpoint),
                        checkpoint_every=checkpoint_every, max_updates=max_updates, progress=progress, desc="HLBL")
    log.info("HLBL: %d words, tree depth %d, %d windows, on %s", len(vocab), shape.depth, len(data), model.device)
    stats = run_sgd(model, data, loop, fingerprint(settings, vocab, data))
    if heldout is not None:
        _, held_ids, held_lengths = encode(heldout, vocabulary=vocab)
        stats.heldout = model.perplexity(windows(held_ids, held_lengths, context + 1))
    log.info("HLBL: %s", asdict(stats))
    return Embeddings(list(vocab.words), model.R.detach().cpu().numpy().astype(np.float32), stats)
