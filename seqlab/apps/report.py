"""A run's training report, ``report.html`` in its run directory: one self-contained page (plots embedded as PNG
``data:`` URIs, :mod:`seqlab.render.plots`) that shows how training went and where the model errs.

* every run: dev score per epoch with the best epoch marked, and the training loss (``metrics.json``'s history);
* span taggers (NER, chunking): precision, recall and F1 per type on dev and test, the confusion matrix of types
  over spans with the gold boundaries, the span errors split into wrong type, wrong boundary, missed and spurious
  (from the dev predictions the run wrote, ``dev.predictions.txt``), and the reliability diagram of the span
  confidences on dev (the run's model decodes its dev file, when that is on this machine);
* token-label taggers (POS): accuracy per tag and the tag confusion matrix;
* relation classifiers: precision, recall and F1 per relation, and the official scorer's confusion matrix.

Several runs (``seqlab report A B --output FILE``, as ``seqlab compare`` takes two) get their reports side by side.

Without matplotlib the page has the tables, and a note where the plots would be.
"""
from __future__ import annotations

import html
import itertools
import logging
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.render import plots
from seqlab.render.html import page

log = logging.getLogger("seqlab")
REPORT = "report.html"
#: The row and column of the confusion matrix that stand for no span.
NONE = "(none)"
#: The kinds of span error, in the order the report lists them.
ERROR_KINDS = ("correct", "wrong type", "wrong boundary", "missed", "spurious")
PRF = ("precision", "recall", "f1")


@dataclass
class SpanErrors:
    """Gold against predicted spans: ``matrix[(gold type, predicted type)]`` over spans whose boundaries agree,
    with :data:`NONE` for a missed span (gold row) or a spurious one (predicted column), and each gold type's
    count of each of :data:`ERROR_KINDS` (spurious spans under their predicted type)."""

    matrix: Counter = field(default_factory=Counter)
    kinds: dict[str, Counter] = field(default_factory=dict)

    def count(self, kind: str, label: str) -> None:
        self.kinds.setdefault(label, Counter())[kind] += 1


def span_errors(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> SpanErrors:
    """:class:`SpanErrors` of predicted tag sentences against gold ones (any scheme, conlleval's chunk rules)."""
    from seqlab.data.schemes import spans

    errors = SpanErrors()
    for gold_tags, pred_tags in zip(gold, pred):
        golds, preds = spans(gold_tags), spans(pred_tags)
        by_bounds = {(start, end): label for label, start, end in preds}
        for label, start, end in golds:
            if (start, end) in by_bounds:
                errors.matrix[label, by_bounds[start, end]] += 1
                errors.count("correct" if by_bounds[start, end] == label else "wrong type", label)
            elif any(s < end and start < e for _, s, e in preds):
                errors.count("wrong boundary", label)
            else:
                errors.matrix[label, NONE] += 1
                errors.count("missed", label)
        for label, start, end in preds:
            if not any(s < end and start < e for _, s, e in golds):
                errors.matrix[NONE, label] += 1
                errors.count("spurious", label)
    return errors


def tag_confusion(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> Counter:
    """``(gold tag, predicted tag)`` → how many tokens, for token-label taggers."""
    return Counter((g, p) for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))


def _matrix_rows(counts: Mapping[tuple[str, str], int]) -> tuple[list[str], list[list[int]]]:
    """The labels of a confusion matrix (sorted, :data:`NONE` last) and its rows of counts."""
    labels = sorted({label for pair in counts for label in pair} - {NONE})
    if any(NONE in pair for pair in counts):
        labels.append(NONE)
    return labels, [[counts.get((g, p), 0) for p in labels] for g in labels]


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        return f"{value:.2f}" if isinstance(value, float) else html.escape(str(value))

    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _figure(uri: str | None, alt: str) -> str:
    if uri is None:
        return f"<p><em>{html.escape(alt)}: no plot, matplotlib is not installed ({plots.INSTALL_HINT}).</em></p>"
    return f'<p><img alt="{html.escape(alt)}" src="{uri}"></p>'


def _plot(make: Any, *args: Any) -> str | None:
    return make(*args) if plots.have_matplotlib() else None


def _scores_section(metrics: Mapping[str, Any], key: str, what: str) -> str:
    """Per-type (``key``: per_type, per_label or relations) precision, recall and F1 on dev and test."""
    parts = []
    for split in ("dev", "test"):
        rows = (metrics.get(split) or {}).get(key) or {}
        if not rows:
            continue
        table = _table([what, *PRF, "gold"], [[name, *(float(r.get(k, 0.0)) for k in PRF), r.get("gold", "")]
                                              for name, r in rows.items()])
        parts.append(f"<h3>{split}</h3>{table}" + _figure(_plot(plots.bars_plot, rows, PRF, f"{split}: per {what}"),
                                                         f"{split} precision, recall and F1 per {what}"))
    note = "<p>A tag's recall is its accuracy: the share of its tokens tagged right.</p>" if what == "tag" else ""
    return f"<h2>Scores per {html.escape(what)}</h2>{note}" + "".join(parts) if parts else ""


def _history_section(metrics: Mapping[str, Any]) -> str:
    history, best = metrics.get("history") or [], metrics.get("best_epoch")
    measure = metrics.get("measure", "score")
    def number(value: Any) -> float | str:
        return float(value) if isinstance(value, (int, float)) else ""

    rows = [[e.get("epoch"), number(e.get("loss")), number(e.get("dev_score")),
             "best" if e.get("epoch") == best else ""] for e in history]
    figure = _figure(_plot(plots.history_plot, history, best, measure), "dev score per epoch") if history else ""
    return (f"<h2>Training</h2><p>{len(history)} epochs; best epoch {html.escape(str(best))} on dev "
            f"{html.escape(measure)}.</p>" + figure + _table(["epoch", "loss", f"dev {measure}", ""], rows))


def _span_error_section(run_dir: Path) -> str:
    from seqlab.data.metrics import read_prediction_file

    path = run_dir / "dev.predictions.txt"
    if not path.is_file():
        return "<p><em>No dev.predictions.txt in the run: no confusion matrix.</em></p>"
    gold, pred, _ = read_prediction_file(path)
    errors = span_errors(gold, pred)
    labels, counts = _matrix_rows(errors.matrix)
    kinds = _table(["type", *ERROR_KINDS], [[label, *(c[k] for k in ERROR_KINDS)]
                                            for label, c in sorted(errors.kinds.items())])
    return ("<h2>Span errors on dev</h2><p>Gold types (rows) against predicted types (columns) over spans whose "
            f"boundaries agree; {NONE}: missed (gold) or spurious (predicted) spans. Spans that overlap a gold span "
            "with other boundaries are counted as wrong boundary.</p>"
            + _figure(_plot(plots.matrix_plot, counts, labels, labels, "dev: span types") if labels else None,
                      "confusion matrix of types") + kinds)


def read_token_predictions(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """The gold and predicted labels of a token-label run's ``token gold pred`` file (any labels, unlike
    conlleval's tags), one list per sentence; a line of fewer than three columns is an error naming it."""
    from seqlab.data.conll import numbered_lines, split_fields

    gold: list[list[str]] = [[]]
    pred: list[list[str]] = [[]]
    for number, line in numbered_lines(path):
        fields = split_fields(line)
        if not fields:
            if gold[-1]:
                gold.append([])
                pred.append([])
            continue
        if len(fields) < 3:
            raise DataFormatError(str(path), number, f"expected 3 columns (token, gold, predicted), got {len(fields)}")
        gold[-1].append(fields[-2])
        pred[-1].append(fields[-1])
    return [s for s in gold if s], [s for s in pred if s]


def _tag_confusion_section(run_dir: Path) -> str:
    path = run_dir / "dev.predictions.txt"
    if not path.is_file():
        return ""
    gold, pred = read_token_predictions(path)
    labels, counts = _matrix_rows(tag_confusion(gold, pred))
    return ("<h2>Tag confusion on dev</h2>"
            + _figure(_plot(plots.matrix_plot, counts, labels, labels, "dev: tags"), "tag confusion matrix")
            + _table(["gold \\ predicted", *labels], [[label, *row] for label, row in zip(labels, counts)]))


def _reliability_section(run_dir: Path, device: str) -> str:
    """The reliability diagram of the run's confidences on its dev file, decoded by the run's model on
    ``device``."""
    from seqlab.core.paths import resolve_data_path

    if not plots.have_matplotlib():
        return _figure(None, "reliability diagram")
    from seqlab.apps.loader import load
    from seqlab.tagging.calibration import plot

    try:
        tagger = load(run_dir, device)
        if not tagger.config.data.dev:
            raise SeqlabError("the run has no dev split")
        dev = resolve_data_path(str(tagger.config.data.dev), key="data.dev")
        outcomes = tagger.outcomes(dev, batch_size=tagger.config.train.eval_batch_size)
    except SeqlabError as err:
        return f"<h2>Calibration</h2><p><em>No reliability diagram: {html.escape(str(err))}</em></p>"
    shown = [outcomes.reliability(1.0)]
    if tagger.temperature != 1.0:
        shown.append(outcomes.reliability(tagger.temperature))
    with tempfile.TemporaryDirectory() as folder:
        plot(shown, str(Path(folder) / "reliability.png"), title="dev: reliability")
        uri = plots.png_uri((Path(folder) / "reliability.png").read_bytes())
    return ("<h2>Calibration</h2>" + _figure(uri, "reliability diagram")
            + "".join(f"<pre>{html.escape(rel.table())}</pre>" for rel in shown))


def _relation_confusion(run_dir: Path) -> str:
    """The official scorer's first confusion matrix (directed relations) from the run's dev report."""
    path = run_dir / "dev.report.txt"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    start = text.find("Confusion matrix:")
    end = text.find("Coverage", start)
    if start < 0 or end < 0:
        return ""
    return f"<h2>Confusion matrix on dev (official scorer)</h2><pre>{html.escape(text[start:end].rstrip())}</pre>"


def report_sections(run_dir: str | Path, device: str = "cpu") -> list[str]:
    """The sections of a finished run's report (one with ``metrics.json``), as HTML, in the order shown; the
    run's model decodes dev on ``device`` for the reliability diagram."""
    run_dir = Path(run_dir)
    metrics = rundir.load_json(run_dir, "metrics.json")
    if metrics is None:
        raise SeqlabError(f"{run_dir}: no metrics.json; a report needs a finished training run")
    dev = metrics.get("dev") or {}
    sections = [_history_section(metrics)]
    if "relations" in dev:
        sections += [_scores_section(metrics, "relations", "relation"), _relation_confusion(run_dir)]
    elif "per_label" in dev:
        sections += [_scores_section(metrics, "per_label", "tag"), _tag_confusion_section(run_dir)]
    else:
        sections += [_scores_section(metrics, "per_type", "type"), _span_error_section(run_dir),
                     _reliability_section(run_dir, device)]
    return [section for section in sections if section]


#: The report's language: every word of it is seqlab's (headings, notes, label names and figures), none the
#: model's text, so it is an English page whatever data.language the run was trained on.
REPORT_LANGUAGE = "en"


def report_html(run_dir: str | Path, device: str = "cpu") -> str:
    """The report page of a finished run."""
    return page("\n".join(report_sections(run_dir, device)), title=f"seqlab report: {Path(run_dir).name}",
                language=REPORT_LANGUAGE)


def compare_html(run_dirs: Sequence[str | Path], device: str = "cpu") -> str:
    """The reports of several runs side by side: one column per run, their sections row by row."""
    columns = [report_sections(run, device) for run in run_dirs]
    head = "".join(f"<th>{html.escape(str(run))}</th>" for run in run_dirs)
    rows = "".join("<tr>" + "".join(f'<td class="side">{section}</td>' for section in row) + "</tr>"
                   for row in itertools.zip_longest(*columns, fillvalue=""))
    names = " / ".join(Path(run).name for run in run_dirs)
    return page(f'<table class="side"><tr>{head}</tr>{rows}</table>', title=f"seqlab report: {names}",
                language=REPORT_LANGUAGE)


def write_report(run_dir: str | Path, *others: str | Path, output: str | Path | None = None,
                 device: str = "cpu") -> Path:
    """Write ``report.html`` into the run directory, or (``others``: more runs) the runs' reports side by side
    at ``output``, atomically; returns the path written. ``device``: where the models decode dev."""
    if others and output is None:
        raise SeqlabError("the reports of several runs side by side are one page: say where with --output FILE.html")
    path = Path(output) if output is not None else Path(run_dir) / REPORT
    text = compare_html([run_dir, *others], device) if others else report_html(run_dir, device)
    with atomic_open(path) as out:
        out.write(text)
    return path


def report_after_training(run_dir: Path, device: Any = "cpu") -> None:
    """Write the report of a run that has just finished (its model decoding dev on the training ``device``); a
    failure is logged as a warning (the run itself is whole), with the command that tries again."""
    try:
        path = write_report(run_dir, device=str(device))
    except Exception as err:  # noqa: BLE001 - the trained model and its metrics are written already
        log.warning("%s not written (%s: %s); seqlab report %s tries again", REPORT, type(err).__name__, err, run_dir)
        return
    log.info("training report: %s", path)
