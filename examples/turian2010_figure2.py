"""Turian, Ratinov & Bengio (2010), Figure 2: F1 against the number of Brown clusters and the embedding dimension.

Collects the linear chunker's and the linear NER's results (``examples/crfsuite_chunker.py``,
``examples/crfsuite_ner.py``) for representations induced from the Wikipedia corpus and writes one table
(Markdown, to standard output) and, with the ``plots`` extra (matplotlib), one PNG of two panels::

    python -m examples.turian2010_figure2 --runs runs --png runs/turian2010_figure2.png

Where a result is looked for, under ``--runs``:

* chunking: ``crfsuite_chunker_{brownC,cwD,hlblD}_wiki/model.crfsuite.json``, the results file that
  ``crfsuite_chunker.py --model crfsuite_chunker_NAME/model.crfsuite`` writes (test F1; CoNLL-2000 has no dev
  set, and the paper's validation F1 is on a held-out part of train, which the chunker reports only with
  ``--tune``: ``tuning.dev_f1`` at the chosen c2, shown where present);
* NER: ``ner_linear/{brownC,cwD,hlblD}_wiki.crfsuite.json``, written by ``crfsuite_ner.py --model
  ner_linear/NAME.crfsuite`` (dev and test F1; dev is the paper's validation set).

The baselines are ``crfsuite_chunker_baseline/model.crfsuite.json`` and ``ner_linear/base.crfsuite.json``.

Run directories do not outlive the machine that made them, so the figures can also come from a file kept in
the repository, ``--recorded docs/turian2010/recorded.json``: a value from ``--runs`` wins, a value only in the
file is used and marked ``*`` in the table, and ``--record`` writes the merged values back to the file (the run's
full precision), so a row trained once stays in the figure after its directory is gone::

    python -m examples.turian2010_figure2 --runs runs --recorded docs/turian2010/recorded.json --record \
        --png docs/turian2010/figure2.png

A setting with no result yet is left out of the plot and shown as "—" in the table. The paper's own curves
are not reproduced here (their points are read off a figure); its text: Brown clusters help more as they
grow, up to the 3200 tried, and the embeddings' dimension matters less. c = 10,000, which the paper wanted but did
not induce ("this would take several months"), is one point further.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from features.atomic import atomic_open, atomic_path

CLUSTERS = (100, 320, 1000, 3200, 10000)  # 10,000: beyond the paper, which did not induce it
DIMS = (25, 50, 100, 200)
CHUNK_RESULTS = "model.crfsuite.json"  # what crfsuite_chunker.py writes beside --model
NER_RESULTS = ".crfsuite.json"  # what crfsuite_ner.py writes beside --model NAME.crfsuite
SETTINGS = [("brown", c) for c in CLUSTERS] + [(kind, d) for kind in ("cw", "hlbl") for d in DIMS]
SCORES = ("chunk_dev", "chunk_test", "ner_dev", "ner_test")
BASELINE = "baseline"  # the recorded file's name for the row without representations
Recorded = dict[str, dict[str, float]]  # setting name (brown1000_wiki, baseline) -> score name -> F1


def _read(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        sys.exit(f"turian2010_figure2: {path}: not a results file ({err})")


def _chunk_dev(result: dict[str, Any]) -> float | None:
    tuning = result.get("tuning") or {}
    scores = tuning.get("dev_f1") or {}
    return max(scores.values()) if scores else None


def _scores(chunk: dict[str, Any] | None, ner: dict[str, Any] | None) -> dict[str, float | None]:
    return {"chunk_dev": _chunk_dev(chunk) if chunk else None, "chunk_test": chunk["test_f1"] if chunk else None,
            "ner_dev": ner["dev_f1"] if ner else None, "ner_test": ner["test_f1"] if ner else None}


def collect(runs: Path) -> list[dict[str, Any]]:
    """One row per (representation, size): chunking test (and dev where tuned), NER dev and test."""
    rows = []
    for kind, size in SETTINGS:
        name = f"{kind}{size}_wiki"
        chunk = _read(runs / f"crfsuite_chunker_{name}" / CHUNK_RESULTS)
        ner = _read(runs / "ner_linear" / f"{name}{NER_RESULTS}")
        rows.append({"representation": kind, "size": size, **_scores(chunk, ner)})
    return rows


def baseline(runs: Path) -> dict[str, Any]:
    chunk = _read(runs / "crfsuite_chunker_baseline" / CHUNK_RESULTS)
    ner = _read(runs / "ner_linear" / f"base{NER_RESULTS}")
    return _scores(chunk, ner)


def load_recorded(path: Path) -> Recorded:
    """The kept figures; strict, so a typo in a setting or score name is an error, not a missing point."""
    if not path.is_file():
        return {}
    where = f"turian2010_figure2: {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        sys.exit(f"{where}: not a recorded-results file ({err})")
    names = {BASELINE} | {f"{kind}{size}_wiki" for kind, size in SETTINGS}
    if not isinstance(data, dict):
        sys.exit(f"{where}: expected an object of settings, found {type(data).__name__}")
    recorded: Recorded = {}
    for name, scores in data.items():
        if name not in names:
            sys.exit(f"{where}: unknown setting {name!r} (expected one of {', '.join(sorted(names))})")
        if not isinstance(scores, dict) or not set(scores) <= set(SCORES) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values()):
            sys.exit(f"{where}: {name}: expected an object of F1 numbers keyed by {', '.join(SCORES)}")
        recorded[name] = {key: float(value) for key, value in scores.items()}
    return recorded


def merge(row: dict[str, Any], kept: dict[str, float]) -> set[str]:
    """Fills the row's missing scores from the kept ones; returns the names filled (marked in the table)."""
    filled = {key for key in SCORES if row[key] is None and key in kept}
    for key in filled:
        row[key] = kept[key]
    return filled


def write_recorded(path: Path, rows: list[dict[str, Any]], base: dict[str, Any]) -> None:
    data = {BASELINE: base} | {f"{r['representation']}{r['size']}_wiki": r for r in rows}
    data = {name: {key: row[key] for key in SCORES if row[key] is not None} for name, row in data.items()}
    data = {name: scores for name, scores in data.items() if scores}
    try:
        with atomic_open(path) as out:
            out.write(json.dumps(data, indent=1) + "\n")
    except OSError as err:
        sys.exit(f"turian2010_figure2: {path}: cannot write the recorded figures ({err.strerror or err})")


def table(rows: list[dict[str, Any]], baselines: dict[str, Any]) -> str:
    """Markdown; a value taken from the recorded file, not a run directory, is marked *."""
    def cell(row: dict[str, Any], key: str) -> str:
        value = row[key]
        return "—" if value is None else f"{value:.2f}" + ("*" if key in row.get("recorded", ()) else "")

    lines = ["| representation | clusters / dim | chunking dev | chunking test | NER dev | NER test |",
             "|---|---|---|---|---|---|",
             f"| none (baseline) | | {' | '.join(cell(baselines, key) for key in SCORES)} |"]
    names = {"brown": "Brown", "cw": "C&W", "hlbl": "HLBL"}
    for row in rows:
        lines.append(f"| {names[row['representation']]} | {row['size']} | "
                     f"{' | '.join(cell(row, key) for key in SCORES)} |")
    if any(r.get("recorded") for r in [baselines, *rows]):
        lines += ["", "\\* from the recorded file: no result for it under --runs"]
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], baselines: dict[str, Any], png: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        sys.exit("turian2010_figure2: the plot needs matplotlib: pip install -e '.[plots]'")
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, panels = plt.subplots(1, 2, figsize=(10, 4))
    for panel, (kinds, sizes, label) in zip(panels, [(("brown",), CLUSTERS, "Brown clusters"),
                                                     (("cw", "hlbl"), DIMS, "embedding dimension")]):
        for key, task in (("ner_dev", "NER dev"), ("chunk_test", "chunking test")):
            for kind in kinds:
                points = [(r["size"], r[key]) for r in rows if r["representation"] == kind and r[key] is not None]
                if points:
                    panel.plot(*zip(*points), marker="o", label=f"{task}, {kind}")
            if baselines[key] is not None:
                panel.axhline(baselines[key], linestyle=":", color="grey")
        panel.set_xscale("log")
        panel.minorticks_off()  # log-scale minor ticks would be labelled 3x10^1 ...
        panel.set_xticks(sizes, [str(s) for s in sizes])
        panel.set_xlabel(label)
        panel.set_ylabel("F1")
        panel.legend(fontsize=8)
    figure.suptitle("Turian et al. (2010) Figure 2 on 36.7M words of Wikipedia (dotted: no representation)")
    figure.tight_layout()
    with atomic_path(png, ".tmp.png") as tmp:  # matplotlib picks the format by the extension
        figure.savefig(tmp, dpi=120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=Path("runs"), help="where the results are (default runs)")
    p.add_argument("--recorded", type=Path, help="kept figures for the settings with no result under --runs "
                   "(docs/turian2010/recorded.json)")
    p.add_argument("--record", action="store_true", help="write the merged figures back to --recorded")
    p.add_argument("--png", type=Path, help="also write the plot here (needs matplotlib)")
    args = p.parse_args()
    if args.record and not args.recorded:
        p.error("--record needs --recorded FILE")
    recorded = load_recorded(args.recorded) if args.recorded else {}
    baselines = baseline(args.runs)
    baselines["recorded"] = merge(baselines, recorded.get(BASELINE, {}))
    rows = collect(args.runs)
    for row in rows:
        row["recorded"] = merge(row, recorded.get(f"{row['representation']}{row['size']}_wiki", {}))
    print(table(rows, baselines))
    if args.record:
        write_recorded(args.recorded, rows, baselines)
    if args.png:
        plot(rows, baselines, args.png)


if __name__ == "__main__":
    main()
