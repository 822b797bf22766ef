"""``seqlab sweep SWEEP.yaml``: train a grid of ``--set`` overrides, write one table and one plot.

Made for Turian, Bergstra & Bengio (2009) Figure 2 (validation F1 against the number of
quadratic filters, one line per architecture) and Table 1, but any grid works::

    config: configs/conll00_io_q16.yaml      # the base config
    output: runs/conll00_sweep                # one run directory per point, and the results
    set: [train.epochs=4]                     # overrides for every point
    grid:                                     # the cartesian product of the axes is run
      arch:                                   # a named axis: label -> overrides
        I-O: {model.window.architecture: I-O, train.lr: 0.01}
        I-W-O: {model.window.architecture: I-W(400)-O, train.lr: 0.0032}
      model.window.filters: [0, 1, 2, 4]      # a key axis: each value sets that key
    skip: [{arch: I-W-O, model.window.filters: [8, 16]}]   # points left out (a list matches any value)
    plot: {x: model.window.filters, series: arch, y: dev_f1}

Each row gives the run's measure and its dev and test score in it (span F1 for NER and chunking, token accuracy
for POS, macro-F1 for relations: :func:`seqlab.core.scores.split_score`), and the F1 columns where the measure
is F1 (``test_np_f1``: the NP chunks', Turian et al.'s Table 1).

Every point is checked (its config loaded) before anything is trained. A finished point
(``metrics.json`` present) is not trained again and a killed one is resumed, so a sweep
can be rerun to completion. Each run is also scored with post-Viterbi decoding (the
softmax's per-token probabilities, decoded under the tag scheme's allowed transitions).
Results: ``results.md`` and ``results.csv`` (one row per point), ``results.png``.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import logging
import re
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.json_limits import read_json
from seqlab.core.scores import split_score
from seqlab.core.strict import read_mapping, suggest
from seqlab.core import runfiles

log = logging.getLogger("seqlab.apps.sweep")
KEYS = {"config": str, "output": str, "set": list, "grid": dict, "skip": list, "plot": dict}
COLUMNS = ("measure", "dev_score", "dev_score_viterbi", "test_score", "dev_acc", "dev_f1", "test_f1", "test_np_f1",
           "best_epoch", "epochs", "sec_per_epoch", "wall_s")
#: What a run's post-Viterbi dev score was cached as in sweep_row.json (``dev_f1_viterbi`` before it was any
#: measure's), and the wall time.
VITERBI_KEYS = ("dev_score_viterbi", "dev_f1_viterbi")


def read_sweep(path: str | Path) -> dict[str, Any]:
    """Read and check a sweep file; errors name the key."""
    path = Path(path)
    spec = read_mapping(path, "sweep file")
    for key, value in spec.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: {key}: unknown key{suggest(str(key), KEYS)}")
        if not isinstance(value, KEYS[key]):
            raise ConfigError(f"{path}: {key}: expected a {KEYS[key].__name__}, got {value!r}")
    for key in ("config", "output", "grid"):
        if key not in spec:
            raise ConfigError(f"{path}: {key}: required key is missing")
    for axis, values in spec["grid"].items():
        if not (isinstance(values, list) and values) and not (isinstance(values, dict) and values):
            raise ConfigError(f"{path}: grid.{axis}: expected a non-empty list of values "
                              "or a mapping label -> overrides")
        if isinstance(values, dict) and not all(isinstance(v, dict) for v in values.values()):
            raise ConfigError(f"{path}: grid.{axis}: every label of a named axis maps to overrides {{key: value}}")
    plot = spec.get("plot", {})
    for key in ("x", "series"):
        if key in plot and plot[key] not in spec["grid"]:
            raise ConfigError(f"{path}: plot.{key}: {plot[key]!r} is not a grid axis {sorted(spec['grid'])}")
    if plot.get("y", "dev_score") not in COLUMNS:
        raise ConfigError(f"{path}: plot.y: expected one of {list(COLUMNS)}, got {plot['y']!r}")
    return spec


def points(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The grid's points (axis -> value or label), in order, without the skipped ones."""
    axes = list(spec["grid"].items())
    combos = itertools.product(*[list(values) for _, values in axes])
    out = [dict(zip([a for a, _ in axes], combo)) for combo in combos]
    return [p for p in out if not any(_matches(p, rule) for rule in spec.get("skip", []))]


def _matches(point: Mapping[str, Any], rule: Mapping[str, Any]) -> bool:
    return all(point.get(k) in (v if isinstance(v, list) else [v]) for k, v in rule.items())


def overrides(spec: Mapping[str, Any], point: Mapping[str, Any]) -> list[str]:
    """The ``--set`` strings of a point: the sweep's ``set``, then each axis's value."""
    out = [str(s) for s in spec.get("set", [])]
    for axis, value in point.items():
        values = spec["grid"][axis]
        pairs = values[value].items() if isinstance(values, dict) else [(axis, value)]
        out += [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in pairs]
    return out


def slug(point: Mapping[str, Any]) -> str:
    """A run-directory name for a point: ``arch=I-W-O,filters=4``."""
    text = ",".join(f"{axis.split('.')[-1]}={value}" for axis, value in point.items())
    return re.sub(r"[^A-Za-z0-9=,.+-]", "_", text)


def run_sweep(path: str | Path, *, dry_run: bool = False, progress: bool = False) -> list[dict[str, Any]]:
    """Train every point not yet finished, then write the table and the plot; returns the rows."""
    from seqlab.core import rundir
    from seqlab.apps.tasks import read_config, train

    spec = read_sweep(path)
    out = Path(spec["output"])
    todo = [(p, read_config(spec["config"], overrides(spec, p))) for p in points(spec)]  # check all first
    log.info("sweep %s: %d points in %s", path, len(todo), out)
    if dry_run:
        return [dict(p) for p, _ in todo]
    rows = []
    for point, config in todo:
        run_dir = out / slug(point)
        start = time.perf_counter()
        if not (run_dir / rundir.METRICS).is_file():
            log.info("training %s", run_dir)
            train(config, run_dir, resume=rundir.has_checkpoint(run_dir), progress=progress)
        rows.append({**point, **_row(run_dir, time.perf_counter() - start)})
        write_results(spec, rows)
    return rows


def _row(run_dir: Path, wall: float) -> dict[str, Any]:
    """One table row from a finished run (post-Viterbi scores computed once and kept)."""
    path, extra_path = run_dir / runfiles.METRICS, run_dir / runfiles.SWEEP_ROW
    metrics = read_json(path)
    try:
        scores = _scores(metrics)
    except (KeyError, TypeError, AttributeError) as err:
        raise SeqlabError(f"{path}: not the metrics of a finished tagger run (missing or malformed {err})") from None
    if extra_path.is_file():
        extra = read_json(extra_path)
        if not isinstance(extra, dict) or "wall_s" not in extra or not any(k in extra for k in VITERBI_KEYS):
            raise SeqlabError(f"{extra_path}: not a sweep row (an object with dev_score_viterbi and wall_s); "
                              "delete it to measure the run again")
        extra = {"dev_score_viterbi": next(extra[k] for k in VITERBI_KEYS if k in extra), "wall_s": extra["wall_s"]}
    else:
        extra = {"dev_score_viterbi": post_viterbi_score(run_dir), "wall_s": round(wall, 1)}
        with atomic_open(extra_path) as handle:
            json.dump(extra, handle)
    row = {**scores, **extra}
    return {key: row[key] for key in COLUMNS}


def _scores(metrics: dict[str, Any]) -> dict[str, Any]:
    """A finished run's columns from its metrics: the measure, dev and test scores, epochs and pace."""
    dev, test, history = split_score(metrics, "dev"), split_score(metrics, "test"), metrics.get("history", [])
    if dev is None:
        raise KeyError("dev")
    f1 = dev.keys.key == "f1"  # span F1: the F1 columns too
    return {"measure": dev.measure, "dev_score": dev.score, "test_score": test.score if test else None,
            "dev_acc": dev.report.get("accuracy"), "dev_f1": dev.score if f1 else None,
            "test_f1": test.score if f1 and test else None,
            "test_np_f1": test.per_class().get("NP") if f1 and test else None,
            "best_epoch": metrics["best_epoch"], "epochs": metrics["epochs"],
            "sec_per_epoch": sum(h["train_seconds"] for h in history) / max(len(history), 1)}


def post_viterbi_score(run_dir: Path, split: str = "dev") -> float | None:
    """The dev score (its measure's) of a trained softmax tagger decoded by Viterbi under the scheme's allowed
    transitions.

    None for a model that does not decode with a softmax (a CRF already decodes by Viterbi; a relation
    classifier decodes no sequence).
    """
    from seqlab.apps.loader import load
    from seqlab.data.dataset import read_splits
    from seqlab.modules.decoders import SoftmaxDecoder

    tagger = load(run_dir, "cpu")
    if tagger.task != "tagging" or not isinstance(tagger.predictor.decoder, SoftmaxDecoder):
        return None
    return tagger.with_post_viterbi().evaluate(read_splits(tagger.config.data)[split]).score


def write_results(spec: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    """``results.md``, ``results.csv`` and ``results.png`` in the sweep's output folder (atomically)."""
    out = Path(spec["output"])
    axes = list(spec["grid"])
    header = axes + list(COLUMNS)
    fmt = lambda v: "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join([str(r.get(a)) for a in axes] + [fmt(r.get(c)) for c in COLUMNS]) + " |" for r in rows]
    with atomic_open(out / "results.md") as handle:
        handle.write("\n".join(lines) + "\n")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    with atomic_open(out / "results.csv") as handle:
        handle.write(buffer.getvalue())
    if spec.get("plot"):
        plot_results(spec, rows, out / "results.png")


def plot_results(spec: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    """One line per ``series`` value of ``y`` against ``x`` (x values equally spaced, in grid order)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot as plt
    except ImportError:
        raise SeqlabError("plotting needs matplotlib: pip install -e '.[plots]'") from None
    plot = spec["plot"]
    x_axis, series, y = plot["x"], plot.get("series"), plot.get("y", "dev_score")
    x_values = list(spec["grid"][x_axis])
    fig, ax = plt.subplots(figsize=(6, 4))
    groups = list(spec["grid"][series]) if series else [None]
    for group in groups:
        mine = [r for r in rows if series is None or r[series] == group]
        pts = sorted((x_values.index(r[x_axis]), r[y]) for r in mine if r.get(y) is not None)
        if pts:
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o", label=str(group) if series else y)
    ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
    ax.set_xlabel(x_axis)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    with atomic_open(path, "wb") as handle:
        handle.write(buffer.getvalue())
