"""The plots of seqlab's reports as PNG ``data:`` URIs (matplotlib, the ``plots`` extra), so that a page that shows
them needs no other file: a run's dev score and loss per epoch, grouped bars (precision, recall and F1 per type)
and a confusion matrix."""
from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any, Mapping, Sequence

from seqlab.core.errors import SeqlabError

INSTALL_HINT = "pip install 'seqlab[plots]' (or pip install matplotlib)"


def have_matplotlib() -> bool:
    """Whether matplotlib can be imported (the plots are left out of a report, with a note, when not)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (files, no display), or a one-line error with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise SeqlabError(f"plots need matplotlib: {INSTALL_HINT}") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def png_bytes(figure: Any) -> bytes:
    """A matplotlib figure as PNG bytes (the figure is closed)."""
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png")
    pyplot().close(figure)
    return buffer.getvalue()


def data_uri(figure: Any) -> str:
    """A matplotlib figure as a PNG ``data:`` URI (the figure is closed)."""
    return png_uri(png_bytes(figure))


def save_png(figure: Any, path: str | Path) -> None:
    """Write a matplotlib figure as a PNG file, atomically (the figure is closed)."""
    from seqlab.core.atomic import atomic_open

    data = png_bytes(figure)
    with atomic_open(path, "wb") as out:
        out.write(data)


def png_uri(data: bytes) -> str:
    """PNG bytes as a ``data:`` URI."""
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _number(value: Any) -> float:
    """A recorded figure as a float; NaN (a gap in the line) where the run recorded none."""
    return float(value) if isinstance(value, (int, float)) else float("nan")


def history_plot(history: Sequence[Mapping[str, Any]], best_epoch: int, measure: str) -> str:
    """Dev score (left axis, the best epoch marked) and training loss (right axis) per epoch."""
    plt = pyplot()
    figure, score_axes = plt.subplots(figsize=(6, 3.4), dpi=100)
    epochs = [entry["epoch"] for entry in history]
    scores = [_number(entry.get("dev_score")) for entry in history]
    score_axes.plot(epochs, scores, marker="o", color="tab:blue", label=f"dev {measure}")
    best = [(e, s) for e, s in zip(epochs, scores) if e == best_epoch and s == s]  # s != s: NaN, no score
    if best:
        score_axes.plot(*best[0], marker="*", markersize=16, color="tab:red", linestyle="none",
                        label=f"best epoch ({best_epoch})")
    score_axes.set(xlabel="epoch", ylabel=f"dev {measure}")
    score_axes.xaxis.get_major_locator().set_params(integer=True)
    loss_axes = score_axes.twinx()
    losses = [_number(entry.get("loss")) for entry in history]
    loss_axes.plot(epochs, losses, color="tab:gray", linestyle="--", label="loss")
    loss_axes.set(ylabel="training loss")
    lines = score_axes.get_legend_handles_labels()[0] + loss_axes.get_legend_handles_labels()[0]
    score_axes.legend(lines, [line.get_label() for line in lines], loc="best", fontsize=8)
    return data_uri(figure)


def bars_plot(rows: Mapping[str, Mapping[str, float]], keys: Sequence[str], title: str) -> str:
    """Grouped bars: for each row name (a type, tag or relation), one bar per key (precision, recall, F1)."""
    plt = pyplot()
    names = list(rows)
    figure, axes = plt.subplots(figsize=(max(4.0, 0.6 * len(names) * len(keys) / 2 + 2), 3.2), dpi=100)
    width = 0.8 / max(len(keys), 1)
    for k, key in enumerate(keys):
        axes.bar([i + k * width for i in range(len(names))], [float(rows[n].get(key, 0.0)) for n in names],
                 width=width, label=key)
    axes.set_xticks([i + width * (len(keys) - 1) / 2 for i in range(len(names))], names, rotation=45, ha="right")
    axes.set(ylim=(0, 100), ylabel="%", title=title)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return data_uri(figure)


def matrix_plot(counts: Sequence[Sequence[int]], rows: Sequence[str], columns: Sequence[str], title: str) -> str:
    """A confusion matrix (gold rows, predicted columns), each cell's count written in it."""
    import numpy as np

    plt = pyplot()
    values = np.asarray(counts, dtype=float).reshape(len(rows), len(columns))
    side = max(3.5, 0.45 * max(len(rows), len(columns)) + 2)
    figure, axes = plt.subplots(figsize=(side, side), dpi=100)
    axes.imshow(values, cmap="Blues")
    axes.set_xticks(range(len(columns)), columns, rotation=45, ha="right")
    axes.set_yticks(range(len(rows)), rows)
    axes.set(xlabel="predicted", ylabel="gold", title=title)
    top = values.max() if values.size else 0
    for (i, j), value in np.ndenumerate(values):
        if value:
            axes.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=7,
                      color="white" if value > top / 2 else "black")
    return data_uri(figure)
