"""``seqlab summarize RUN_DIR...``: one table of several runs, and mean ± std over the finished ones.

Made for seeds: results in this field are reported as the mean and sample standard
deviation over several random seeds (Reimers & Gurevych 2017), and two seeds of one
config can differ more than two configs do. Each run directory gives one row, read from
its ``metrics.json``: best epoch, dev score, test precision / recall / F1 (span F1 for
taggers, the official macro-F1 for relation classifiers), F1 per type, training time.

The runs' resolved configs (``config.yaml``) are compared and every key whose value
differs, other than the seed and where the run ran (threads, device), is listed, so runs of
different configs are never averaged without it being said. A run with no test score
yet (still training, or killed) is listed and left out of the mean. ``--json`` output keeps
each run's resolved config, so a saved summary stands in for its run directories later
(``seqlab summarize NEW_RUNS... --versus baseline.json``).
"""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.json_limits import load_json, read_json
from seqlab.core.scores import split_score
from seqlab.core.strict import read_mapping
from seqlab.core import runfiles

SEED_KEYS = frozenset({"train.seed", "train.threads", "train.device"})  # may differ between seeds of one config
STAT_COLUMNS = ("dev", "test_precision", "test_recall", "test_f1", "train_hours")


@dataclass(frozen=True)
class RunRow:
    """What one run directory says about itself."""

    run: str
    task: str  # "tagger" or "relation"
    epochs: int
    best_epoch: int
    dev: float | None
    test_precision: float | None = None
    test_recall: float | None = None
    test_f1: float | None = None
    per_type: dict[str, float] = field(default_factory=dict)
    train_hours: float = 0.0
    measure: str = ""  # the score's name (F1, macro-F1, accuracy); empty in summaries saved before it was kept

    @property
    def finished(self) -> bool:
        return self.test_f1 is not None


def _read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / runfiles.CONFIG
    if not path.is_file():
        raise SeqlabError(f"{run_dir}: no config.yaml there; not a seqlab run directory")
    return read_mapping(path)


def _progress(run_dir: Path) -> dict[str, Any]:
    """The metrics a run has so far, from its checkpoint: epochs, best epoch, best dev score, history."""
    from seqlab.core import rundir
    from seqlab.core.trainer import upgrade_state

    path = run_dir / rundir.CHECKPOINT
    try:
        text = rundir.load_checkpoint(run_dir)["state"]  # the training loop's state, as JSON text
        if not isinstance(text, str):
            raise TypeError(f"'state' is {type(text).__name__}, not JSON text")
        state = upgrade_state(load_json(text.encode("utf-8"), f"{path} (its state)"))
        return {"epochs": state["epoch"], "best_epoch": state["best_epoch"], "history": state["history"],
                "best_dev": state["best_score"]}
    except (KeyError, TypeError, ValueError) as err:
        raise SeqlabError(f"{path}: not the checkpoint of a seqlab run (missing or malformed {err})") from None


def read_run(run_dir: str | Path) -> RunRow:
    """The row of one run directory (tagger or relation classifier, finished or still training)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise SeqlabError(f"{run_dir}: not a directory")
    task = "relation" if _read_config(run_dir).get("task") == "relation" else "tagger"
    path = run_dir / runfiles.METRICS
    if path.is_file():
        metrics = read_json(path)
    elif (run_dir / runfiles.CHECKPOINT).is_file():
        metrics, path = _progress(run_dir), run_dir / runfiles.CHECKPOINT
    else:
        raise SeqlabError(f"{run_dir}: neither metrics.json nor checkpoint.pt there; its first epoch has not finished")
    try:
        history = metrics["history"]
        dev, test = split_score(metrics, "dev"), split_score(metrics, "test")
        row = RunRow(run=str(run_dir), task=task, epochs=int(metrics.get("epochs", len(history))),
                     best_epoch=int(metrics.get("best_epoch", 0)),
                     dev=dev.score if dev else metrics.get("best_dev"),
                     train_hours=sum(float(h.get("train_seconds", 0.0)) for h in history) / 3600,
                     measure=(dev or test).measure if dev or test else "F1")
        if not test:
            return row
        return RunRow(**{**asdict(row), "test_precision": test.precision, "test_recall": test.recall,
                         "test_f1": test.score, "per_type": test.per_class()})
    except (KeyError, TypeError, ValueError) as err:
        raise SeqlabError(f"{path}: not the metrics of a seqlab {task} run (missing or malformed {err})") from None


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): tree}


def _resolved(run_dir: Path) -> dict[str, Any]:
    """A run's config with today's defaults filled in, so a key added since the run was made is not a difference."""
    from seqlab.core.strict import to_tree
    from seqlab.apps.tasks import read_config

    tree = _read_config(run_dir)
    try:
        config = read_config(run_dir / runfiles.CONFIG)
    except ConfigError:  # a key since removed: compare the file as written
        return _flatten(tree)
    return _flatten(to_tree(config))


def config_differences(configs: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Config keys whose values differ between the runs (seed, threads and device left out), given each run's
    flattened resolved config: key -> {value as text -> the runs with it}."""
    out: dict[str, dict[str, list[str]]] = {}
    for key in sorted(set().union(*configs.values())):
        if key in SEED_KEYS:
            continue
        groups: dict[str, list[str]] = {}
        for run, tree in configs.items():
            groups.setdefault(json.dumps(tree.get(key), sort_keys=True), []).append(run)
        if len(groups) > 1:
            out[key] = groups
    return out


def read_saved(path: Path) -> tuple[list[RunRow], dict[str, dict[str, Any]]]:
    """The rows and configs of a summary saved with ``seqlab summarize --json`` (its run directories may be gone)."""
    data = read_json(path)
    try:
        rows = [RunRow(**row) for row in data["rows"]]
        configs = {str(run): dict(tree) for run, tree in data["configs"].items()}
    except (KeyError, TypeError, AttributeError) as err:
        raise SeqlabError(f"{path}: not a summary saved with `seqlab summarize --json` (missing or malformed "
                          f"{err})") from None
    missing = [r.run for r in rows if r.run not in configs]
    if missing:
        raise SeqlabError(f"{path}: no config for the run {missing[0]!r}")
    return rows, configs


def mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for a single value)."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def summarize(run_dirs: Sequence[str | Path]) -> dict[str, Any]:
    """Rows, mean ± std of the finished runs' columns and per-type F1, and the config keys that differ.

    Each item is a run directory or a summary saved with ``seqlab summarize --json`` (``.json``), whose runs are
    read from it: a group of seeds can be compared after its run directories are gone.
    """
    if not run_dirs:
        raise SeqlabError("summarize: name at least one run directory")
    rows: list[RunRow] = []
    configs: dict[str, dict[str, Any]] = {}
    for item in run_dirs:
        path = Path(item)
        if path.suffix == ".json" and path.is_file():
            saved, saved_configs = read_saved(path)
            rows += saved
            configs.update(saved_configs)
        else:
            rows.append(read_run(path))
            configs[str(path)] = _resolved(path)
    tasks = {r.task for r in rows}
    if len(tasks) > 1:
        raise SeqlabError("summarize: the runs mix taggers and relation classifiers: "
                          + ", ".join(f"{r.run} ({r.task})" for r in rows))
    done = [r for r in rows if r.finished]
    stats: dict[str, Any] = {}
    for column in STAT_COLUMNS:
        values = [getattr(r, column) for r in done if getattr(r, column) is not None]
        if values:
            stats[column] = mean_std(values)
    types = sorted({t for r in done for t in r.per_type})
    per_type = {t: mean_std([r.per_type[t] for r in done if t in r.per_type]) for t in types}
    return {"task": rows[0].task, "rows": rows, "finished": len(done), "mean_std": stats,
            "per_type_mean_std": per_type, "config_differences": config_differences(configs), "configs": configs}


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _pm(pair: tuple[float, float | None] | None) -> str:
    if pair is None:
        return "–"
    mean, std = pair
    return f"{mean:.2f}" if std is None else f"{mean:.2f} ± {std:.2f}"


def render(summary: dict[str, Any]) -> str:
    """A markdown table: one row per run, then the mean ± std row, then the config differences."""
    rows: list[RunRow] = summary["rows"]
    measure = rows[0].measure or ("macro-F1" if summary["task"] == "relation" else "F1")
    types = list(summary["per_type_mean_std"]) if summary["task"] == "tagger" else []
    header = ["run", "best epoch / epochs", f"dev {measure}", "test P", "test R", f"test {measure}", *types, "train h"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        if r.finished:
            cells = [_num(r.test_precision), _num(r.test_recall), f"**{_num(r.test_f1)}**"]
            cells += [_num(r.per_type.get(t)) for t in types]
        else:
            cells = ["no test score yet (left out of the mean)", "", "", *[""] * len(types)]
        lines.append("| " + " | ".join([r.run, f"{r.best_epoch} / {r.epochs}", _num(r.dev), *cells,
                                         f"{r.train_hours:.2f}"]) + " |")
    stats = summary["mean_std"]
    n = summary["finished"]
    if n:
        cells = [f"mean ± std ({n} finished)", "", _pm(stats.get("dev")), _pm(stats.get("test_precision")),
                 _pm(stats.get("test_recall")), f"**{_pm(stats.get('test_f1'))}**",
                 *[_pm(summary["per_type_mean_std"][t]) for t in types], _pm(stats.get("train_hours"))]
        lines.append("| " + " | ".join(cells) + " |")
    differences = summary["config_differences"]
    if differences:
        lines.append("")
        lines.append("Config keys that differ between these runs (seed, threads and device aside):")
        for key, groups in differences.items():
            lines.append(f"- {key}: " + "; ".join(f"{value} ({', '.join(Path(r).name for r in runs)})"
                                                 for value, runs in groups.items()))
    return "\n".join(lines) + "\n"


def to_json(summary: dict[str, Any]) -> str:
    """The summary as one JSON object (rows as mappings; mean ± std as [mean, std])."""
    out = {**summary, "rows": [asdict(r) for r in summary["rows"]]}
    return json.dumps(out, indent=2)


def versus(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Mean dev and test scores of two summaries' finished runs, their difference, and the exact
    permutation test over seeds (:func:`seqlab.core.significance.seed_permutation_test`)."""
    from seqlab.core.significance import seed_permutation_test

    if a["task"] != b["task"]:
        raise SeqlabError(f"summarize --versus: {a['task']} runs against {b['task']} runs")
    out = {}
    for column in ("dev", "test_f1"):
        xs = [getattr(r, column) for r in a["rows"] if r.finished]
        ys = [getattr(r, column) for r in b["rows"] if r.finished]
        if xs and ys:
            out[column] = asdict(seed_permutation_test(xs, ys))
    if not out:
        raise SeqlabError("summarize --versus: each side needs at least one finished run")
    return {"scores": out, "config_differences": config_differences({**a["configs"], **b["configs"]})}


def render_versus(result: dict[str, Any]) -> str:
    """One line per score: A's mean, B's, A − B and the permutation p-value."""
    names = {"dev": "dev", "test_f1": "test"}
    lines = []
    for column, c in result["scores"].items():
        how = "exact, all" if c["exact"] else "random"
        lines.append(f"{names[column]}: A {c['mean_a']:.2f} ({c['runs_a']} runs) − B {c['mean_b']:.2f} "
                     f"({c['runs_b']} runs) = {c['difference']:+.2f}; permutation test over seeds p = "
                     f"{c['p_value']:.3f} ({how} {c['splits']} splits)")
    differences = result["config_differences"]
    lines.append("A and B differ in: " + ("; ".join(
        f"{key} " + " vs ".join(f"{value} ({len(runs)} runs)" for value, runs in groups.items())
        for key, groups in differences.items()) if differences else "nothing but the seeds"))
    return "\n".join(lines) + "\n"
