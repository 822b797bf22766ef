"""Looking inside a trained relation classifier, as in Lee, Seo & Choi (2019) §5.

``explain_file`` writes, for a SemEval-format file or relation JSON lines (:mod:`seqlab.data.relations`):

- ``attention.html``: per sentence, the entity-aware attention over the tokens (Fig. 3 of the
  paper) and the self-attention matrix averaged over heads, as colour-scaled HTML tables;
- ``latent_types.md``: the entities most strongly assigned to each latent type (the paper's Table 3);
- ``latent_types_tsne.png``: a t-SNE map (scikit-learn) of the entities' latent type
  representations ``t_e`` together with the K latent type vectors, coloured by each entity's most
  likely type (the paper's Fig. 4), drawn by matplotlib (the ``plots`` extra; without it the map is
  left out, and the log says how to install it).

The heat maps are HTML tables and need no plotting library.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import html
import logging
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from seqlab.core.atomic import atomic_open
from seqlab.data.relations import read_relations
from seqlab.data.semeval import RelationExample
from seqlab.relation.build import batches, encode, model_inputs

if TYPE_CHECKING:
    from seqlab.relation.api import RelationModel

log = logging.getLogger(__name__)
COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@torch.no_grad()
def collect(model: torch.nn.Module, examples: list[RelationExample], vocabs: dict, batch_size: int = 200
            ) -> dict[str, list]:
    """Per-example probabilities, attention weights, entity states and latent-type weights, as CPU arrays
    whichever device the model is on."""
    data = encode(examples, vocabs)
    model.eval()
    device = next(model.parameters()).device
    out: dict[str, list] = defaultdict(lambda: [None] * len(examples))
    for rows, batch in batches(data, batch_size):
        logits, extras = model(batch.to(device))
        probs = logits.softmax(dim=-1).cpu()
        extras = {key: value.cpu() for key, value in extras.items()}
        for j, row in enumerate(rows.tolist()):
            n = int(batch.lengths[j])
            out["probs"][row] = probs[j].numpy()
            out["alpha"][row] = extras["alpha"][j, :n].numpy()
            if "self_attention" in extras:
                out["self_attention"][row] = extras["self_attention"][j, :, :n, :n].mean(dim=0).numpy()
            for key in ("e1_state", "e2_state", "e1_types", "e2_types"):
                if key in extras:
                    out[key][row] = extras[key][j].numpy()
    return dict(out)


def _cell(value: float, scale: float, text: str, entity: bool = False) -> str:
    level = 0.0 if scale <= 0 else min(value / scale, 1.0)
    style = f"background: rgba(214, 39, 40, {level:.3f});" + (" font-weight: bold; text-decoration: underline;" if entity else "")
    return f'<td style="{style}" title="{value:.4f}">{html.escape(text)}</td>'


def _sentence_html(example: RelationExample, info: dict[str, object], labels: list[str]) -> str:
    tokens = example.tokens
    entity = {i for a, b in (example.e1, example.e2) for i in range(a, b + 1)}
    probs = info["probs"]
    best = int(np.argmax(probs))
    parts = [f"<h2>{html.escape(example.id)}: predicted {html.escape(labels[best])} ({probs[best]:.3f})"
             f"{'' if example.label is None else ', gold ' + html.escape(example.label)}</h2>",
             "<h3>Entity-aware attention</h3><table><tr>"]
    alpha = info["alpha"]
    parts.extend(_cell(float(a), float(alpha.max()), t, i in entity) for i, (t, a) in enumerate(zip(tokens, alpha)))
    parts.append("</tr></table>")
    matrix = info.get("self_attention")
    if matrix is not None:
        parts.append("<h3>Self-attention (mean over heads; row attends to column)</h3><table><tr><td></td>")
        parts.extend(f"<th>{html.escape(t)}</th>" for t in tokens)
        parts.append("</tr>")
        for i, token in enumerate(tokens):
            parts.append(f"<tr><th>{html.escape(token)}</th>")
            parts.extend(_cell(float(v), float(matrix[i].max()), f"{v:.2f}") for v in matrix[i])
            parts.append("</tr>")
        parts.append("</table>")
    return "\n".join(parts)


def write_attention_html(path: Path, examples: list[RelationExample], info: dict[str, list], labels: list[str],
                         count: int) -> None:
    """Heat maps of the first ``count`` sentences."""
    head = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>seqlab attention</title><style>"
            "body{font-family:sans-serif} table{border-collapse:collapse;margin-bottom:1em} "
            "td,th{padding:2px 4px;border:1px solid #eee;font-size:12px}</style></head><body>"
            "<h1>Entity-aware and self-attention (Lee et al. 2019 §5)</h1>"
            "<p>Darker red: more weight. Entities are bold and underlined.</p>")
    body = [_sentence_html(e, {k: v[i] for k, v in info.items()}, labels) for i, e in enumerate(examples[:count])]
    with atomic_open(path) as out:
        out.write(head + "\n".join(body) + "</body></html>\n")


def latent_type_table(examples: list[RelationExample], info: dict[str, list], top: int) -> str:
    """Markdown: per latent type, the entity mentions assigned to it most confidently (distinct words)."""
    best: dict[int, dict[str, float]] = defaultdict(dict)
    counts: dict[int, int] = defaultdict(int)
    for i, example in enumerate(examples):
        for key, text in (("e1_types", example.e1_text), ("e2_types", example.e2_text)):
            weights = info[key][i]
            k = int(np.argmax(weights))
            counts[k] += 1
            word = text.lower()
            best[k][word] = max(best[k].get(word, 0.0), float(weights[k]))
    types = len(info["e1_types"][0])
    lines = ["| latent type | entity mentions | top entities (type weight) |", "|---|---|---|"]
    for k in range(types):
        ranked = sorted(best[k].items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        shown = ", ".join(f"{w} ({p:.2f})" for w, p in ranked) or "none"
        lines.append(f"| {k + 1} | {counts[k]} | {shown} |")
    return "\n".join(lines) + "\n"


def tsne_map(states: np.ndarray, types: np.ndarray, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """t-SNE coordinates (N, 2) of the entity representations ``states`` and (K, 2) of the type vectors ``types``,
    mapped together (perplexity at most 30, at least 2, and below a third of the points)."""
    from sklearn.manifold import TSNE

    points = np.concatenate([states, types]).astype(np.float64)
    perplexity = float(min(30, max(2, (len(points) - 1) // 3)))
    xy = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(points)
    return xy[: len(states)], xy[len(states):]


def tsne_figure(states_xy: np.ndarray, assigned: np.ndarray, types_xy: np.ndarray) -> Any:
    """A matplotlib figure of the t-SNE map: entities as dots coloured by their most likely latent type
    (``assigned``), the K type vectors as large squares labelled ``type k``."""
    from seqlab.render.plots import pyplot

    figure, axes = pyplot().subplots(figsize=(6, 6), dpi=100)
    axes.scatter(states_xy[:, 0], states_xy[:, 1], s=8, alpha=0.6,
                 c=[COLOURS[k % len(COLOURS)] for k in assigned])
    axes.scatter(types_xy[:, 0], types_xy[:, 1], s=160, marker="s", edgecolors="black", linewidths=2,
                 c=[COLOURS[k % len(COLOURS)] for k in range(len(types_xy))])
    for k, (x, y) in enumerate(types_xy):
        axes.annotate(f"type {k + 1}", (x, y), xytext=(9, 4), textcoords="offset points")
    axes.set(xticks=[], yticks=[], title="t-SNE of the entities\u2019 latent type representations (dots, colour = "
             "most likely type)\nand the K latent type vectors (squares)")
    axes.title.set_fontsize(9)
    return figure


def write_tsne(path: Path, states: np.ndarray, assigned: np.ndarray, types: np.ndarray, seed: int = 1) -> bool:
    """Write the t-SNE map as a PNG at ``path``; False (and a log line with the install hint) without matplotlib."""
    from seqlab.render.plots import INSTALL_HINT, have_matplotlib, save_png

    if not have_matplotlib():
        log.info("no t-SNE map: drawing it needs matplotlib (%s)", INSTALL_HINT)
        return False
    states_xy, types_xy = tsne_map(states, types, seed)
    save_png(tsne_figure(states_xy, assigned, types_xy), path)
    return True


def explain_file(model: "RelationModel | str | Path", path: str | Path, out_dir: Path, *, sentences: int = 20,
                 top: int = 10, max_points: int = 2000) -> list[Path]:
    """Write the §5 visualisations of ``model`` (loaded, or a run directory) for the sentences of ``path``;
    returns the files written."""
    from seqlab.relation.api import RelationModel

    run = model if isinstance(model, RelationModel) else RelationModel.load(model, "cpu")
    run_dir = model if not isinstance(model, RelationModel) else "the model"
    examples = model_inputs(read_relations(path), run.config.model)
    info = collect(run.model, examples, run.vocabs)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "attention.html"]
    write_attention_html(written[0], examples, info, run.labels, sentences)
    if "e1_types" not in info:
        log.info("the model has no latent entity typing (model.latent_types: 0): no type table or t-SNE")
        return written
    table = out_dir / "latent_types.md"
    with atomic_open(table) as out:
        out.write(f"Latent entity types of {run_dir} on {path} ({len(examples)} sentences)\n\n")
        out.write(latent_type_table(examples, info, top))
    written.append(table)
    weights = np.stack(info["e1_types"] + info["e2_types"])  # shape: (2N, K)
    types = run.model.attention.typing.types.detach().cpu().numpy()  # shape: (K, 2H)
    keep = np.random.default_rng(run.config.train.seed).permutation(len(weights))[:max_points]
    png = out_dir / "latent_types_tsne.png"  # the entities' latent type representations t_e = Σ_k α_k c_k
    if write_tsne(png, weights[keep] @ types, np.argmax(weights[keep], axis=1), types, seed=run.config.train.seed):
        written.append(png)
    return written
