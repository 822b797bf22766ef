"""Turian, Ratinov & Bengio (2010), Figure 2: F1 against the number of Brown clusters and the embedding dimension.

Collects the linear chunker's and the linear NER's results (``examples/crfsuite_chunker.py``,
``examples/crfsuite_ner.py``) for representations induced from the Wikipedia corpus and writes one table
(Markdown, to standard output) and, with the ``plots`` extra (matplotlib), one PNG of two panels::

    python examples/turian2010_figure2.py --runs runs --png runs/turian2010_figure2.png

Where a result is looked for, under ``--runs``:

* chunking: ``crfsuite_chunker_{brownC,cwD,hlblD}_wiki/model.crfsuite.json``, the results file that
  ``crfsuite_chunker.py --model crfsuite_chunker_NAME/model.crfsuite`` writes (test F1; CoNLL-2000 has no dev
  set, and the paper's validation F1 is on a held-out part of train, which the chunker reports only with
  ``--tune``: ``tuning.dev_f1`` at the chosen c2, shown where present);
* NER: ``ner_linear/{brownC,cwD,hlblD}_wiki.crfsuite.json``, written by ``crfsuite_ner.py --model
  ner_linear/NAME.crfsuite`` (dev and test F1; dev is the paper's validation set).

The baselines are ``crfsuite_chunker_baseline/model.crfsuite.json`` and ``ner_linear/base.crfsuite.json``.

A setting with no result yet is left out of the plot and shown as "—" in the table. The paper's own curves
are not reproduced here (their points are read off a figure); its text: Brown clusters help more as they
grow, up to the 3200 tried, and the embeddings' dimension matters less.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

CLUSTERS = (100, 320, 1000, 3200)
DIMS = (25, 50, 100, 200)
CHUNK_RESULTS = "model.crfsuite.json"  # what crfsuite_chunker.py writes beside --model
NER_RESULTS = ".crfsuite.json"  # what crfsuite_ner.py writes beside --model NAME.crfsuite
SETTINGS = [("brown", c) for c in CLUSTERS] + [(kind, d) for kind in ("cw", "hlbl") for d in DIMS]


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


def collect(runs: Path) -> list[dict[str, Any]]:
    """One row per (representation, size): chunking test (and dev where tuned), NER dev and test."""
    rows = []
    for kind, size in SETTINGS:
        name = f"{kind}{size}_wiki"
        chunk = _read(runs / f"crfsuite_chunker_{name}" / CHUNK_RESULTS)
        ner = _read(runs / "ner_linear" / f"{name}{NER_RESULTS}")
        rows.append({"representation": kind, "size": size,
                     "chunk_dev": _chunk_dev(chunk) if chunk else None,
                     "chunk_test": chunk["test_f1"] if chunk else None,
                     "ner_dev": ner["dev_f1"] if ner else None, "ner_test": ner["test_f1"] if ner else None})
    return rows


def table(rows: list[dict[str, Any]], baselines: dict[str, float | None]) -> str:
    def cell(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    lines = ["| representation | clusters / dim | chunking dev | chunking test | NER dev | NER test |",
             "|---|---|---|---|---|---|",
             f"| none (baseline) | | {cell(baselines['chunk_dev'])} | {cell(baselines['chunk_test'])} | "
             f"{cell(baselines['ner_dev'])} | {cell(baselines['ner_test'])} |"]
    names = {"brown": "Brown", "cw": "C&W", "hlbl": "HLBL"}
    for row in rows:
        lines.append(f"| {names[row['representation']]} | {row['size']} | {cell(row['chunk_dev'])} | "
                     f"{cell(row['chunk_test'])} | {cell(row['ner_dev'])} | {cell(row['ner_test'])} |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], baselines: dict[str, float | None], png: Path) -> None:
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
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = png.with_name(png.name + ".tmp.png")
    figure.savefig(tmp, dpi=120)
    tmp.replace(png)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=Path("runs"), help="where the results are (default runs)")
    p.add_argument("--png", type=Path, help="also write the plot here (needs matplotlib)")
    args = p.parse_args()
    chunk = _read(args.runs / "crfsuite_chunker_baseline" / CHUNK_RESULTS)
    ner = _read(args.runs / "ner_linear" / f"base{NER_RESULTS}")
    baselines = {"chunk_dev": _chunk_dev(chunk) if chunk else None, "chunk_test": chunk["test_f1"] if chunk else None,
                 "ner_dev": ner["dev_f1"] if ner else None, "ner_test": ner["test_f1"] if ner else None}
    rows = collect(args.runs)
    print(table(rows, baselines))
    if args.png:
        plot(rows, baselines, args.png)


if __name__ == "__main__":
    main()
