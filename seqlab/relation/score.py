"""The official SemEval-2010 Task 8 measure, re-implemented (scorer v1.2 of Hendrickx et al. 2010).

Semantics and output layout follow the official Perl script ``semeval2010_task8_scorer-v1.2.pl``
(README_scorer.txt in the release), which scores three times:

(i)   (2*9+1)-way: the 19 directed labels as they are;
(ii)  (9+1)-way, directionality ignored: ``(e1,e2)``/``(e2,e1)`` stripped from both sides;
(iii) (9+1)-way, directionality taken into account -- the OFFICIAL score. A prediction of the right
      relation with the wrong direction goes to the ``xDIRx`` column: it is wrong, and it is added
      to the precision denominator of the gold relation (``P = correct / (proposed + xDIRx)``).

Per relation, P = correct/proposed, R = correct/gold, F1 = 2PR/(P+R) (0 when undefined). The
macro-F1 is the plain mean of the per-relation F1 over the relations present in the KEY, excluding
Other (so 9 on the real test set). Ids in the key but not in the proposed file are "skipped"; they
count against recall. ``Other`` is renamed ``_Other`` internally, as the script does, so that it
sorts last.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from seqlab.data.semeval import LABELS, OTHER
from seqlab.core.errors import DataFormatError, SeqlabError

INTERNAL_OTHER = "_Other"
WRONG_DIR = "WRONG_DIR"
_LINE = re.compile(r"^([0-9]+)\t([^\r\n]+)\r?\n?$")
_DIRECTION = re.compile(r"\(e[12],e[12]\)$")
_SHORT = re.compile(r"^(.)[^\-]+\-(.)")


@dataclass
class RelationScore:
    """Per-label counts and P/R/F1 (percent) of one evaluation."""

    correct: int
    proposed: int
    wrong_direction: int
    gold: int
    precision: float
    recall: float
    f1: float


@dataclass
class SemEvalResult:
    """The official figure (``official_f1``), the per-relation scores of (iii), and the full report."""

    official_f1: float
    macro_precision: float
    macro_recall: float
    accuracy: float
    relations: dict[str, RelationScore] = field(default_factory=dict)
    report: str = ""
    measure = "official macro-F1"

    @property
    def score(self) -> float:
        """The model-selection figure: the official macro-F1."""
        return self.official_f1

    def to_dict(self) -> dict[str, object]:
        return {"official_macro_f1": self.official_f1, "macro_precision": self.macro_precision,
                "macro_recall": self.macro_recall, "accuracy": self.accuracy,
                "relations": {k: vars(v) for k, v in self.relations.items()}}


def read_answers(path: str | Path) -> dict[str, str]:
    """Read an ``id<TAB>label`` file as the official scorer does; a bad line is an error naming it.

    Like the script: the label must be one of the 19 exactly, ids are digit strings compared as
    strings, repeated ids are refused, CRLF or LF. Unlike it, a last line without a newline is accepted.
    """
    path = Path(path)
    if not path.is_file():
        raise SeqlabError(f"{path}: no such file (expected an answer file of 'ID<TAB>LABEL' lines)")
    answers: dict[str, str] = {}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", errors="replace")
            match = _LINE.match(text)
            if not match or match.group(2) not in LABELS:
                raise DataFormatError(str(path), number, f"expected 'ID<TAB>LABEL' with LABEL one of the 19 "
                                      f"SemEval-2010 Task 8 labels, got {text.rstrip()!r}")
            sid = match.group(1)
            if sid in answers:
                raise DataFormatError(str(path), number, f"ID {sid} is already defined")
            answers[sid] = match.group(2)
    if not answers:
        raise SeqlabError(f"{path}: the answer file is empty")
    return answers


def score_answers(proposed: dict[str, str], key: dict[str, str], *, proposed_name: str = "proposed") -> SemEvalResult:
    """Score proposed labels against a key with the official script's three evaluations."""
    if not proposed:
        raise SeqlabError(f"{proposed_name}: no predictions to score")
    bad = [sid for sid in proposed if sid not in key]
    if bad:
        raise SeqlabError(f"{proposed_name} contains an ID that is not in the key: {bad[0]!r}")
    prop = {sid: _internal(label) for sid, label in proposed.items()}
    gold = {sid: _internal(label) for sid, label in key.items()}
    conf19, conf10, conf10dir = Counter(), Counter(), Counter()
    for sid, p in prop.items():
        g = gold[sid]
        p_nodir, g_nodir = undirected(p), undirected(g)
        conf19[p, g] += 1
        conf10[p_nodir, g_nodir] += 1
        conf10dir[(WRONG_DIR if p != g and p_nodir == g_nodir else p_nodir), g_nodir] += 1
    gold19 = Counter(gold.values())
    gold10 = Counter(undirected(g) for g in gold.values())
    lines: list[str] = []
    for label, n in sorted(_proposed_counts(conf19).items()):
        if label not in gold19:
            lines.append(f"!!!WARNING!!! The proposed file contains {n} label(s) of type '{label}', "
                         f"which is NOT present in the key file.\n\n")
    totals = (len(prop), len(gold))
    lines.append("<<< (2*9+1)-WAY EVALUATION (USING DIRECTIONALITY)>>>:\n\n")
    lines.append(_evaluate(conf19, gold19, *totals, wrong_dir=False)[0])
    lines.append("<<< (9+1)-WAY EVALUATION IGNORING DIRECTIONALITY >>>:\n\n")
    lines.append(_evaluate(conf10, gold10, *totals, wrong_dir=False)[0])
    lines.append("<<< (9+1)-WAY EVALUATION TAKING DIRECTIONALITY INTO ACCOUNT -- OFFICIAL >>>:\n\n")
    text, result = _evaluate(conf10dir, gold10, *totals, wrong_dir=True)
    lines.append(text)
    lines.append("<<< The official score is (9+1)-way evaluation with directionality taken into account: "
                 f"macro-averaged F1 = {result.official_f1:0.2f}% >>>\n")
    result.report = "".join(lines)
    return result


def score_files(proposed_path: str | Path, key_path: str | Path) -> SemEvalResult:
    """``seqlab score semeval PRED KEY``: the official script's output for two answer files."""
    return score_answers(read_answers(proposed_path), read_answers(key_path), proposed_name=f"File {proposed_path}")


def undirected(label: str) -> str:
    """The relation without its direction: ``Cause-Effect(e2,e1)`` -> ``Cause-Effect``."""
    return _DIRECTION.sub("", label)


def _internal(label: str) -> str:
    return INTERNAL_OTHER if label == OTHER else label


def _proposed_counts(conf: Counter) -> Counter:
    counts: Counter = Counter()
    for (p, _), n in conf.items():
        counts[p] += n
    return counts


def _short(label: str, gold: Counter) -> str:
    """The script's column name: ``C-E1`` for Cause-Effect(e1,...), ``*CE1`` if absent from the key, ``_O_``."""
    if label == INTERNAL_OTHER:
        return "_O_"
    match = _SHORT.match(label)
    if not match:
        raise SeqlabError(f"cannot abbreviate relation name {label!r}")
    name = f"{match.group(1)}-{match.group(2)}" if label in gold else f"*{match.group(1)}{match.group(2)}"
    direction = re.search(r"\(e([12])", label)
    return name + (direction.group(1) if direction else "")


def _evaluate(conf: Counter, gold: Counter, total_proposed: int, total_answer: int, *,
              wrong_dir: bool) -> tuple[str, SemEvalResult]:
    """One evaluation block of the script: confusion matrix, coverage, accuracy, P/R/F1, averages."""
    proposed = _proposed_counts(conf)
    columns = sorted(gold) + sorted(p for p in proposed if p not in gold and p != WRONG_DIR)
    out = [_matrix(conf, gold, proposed, columns, total_proposed, total_answer, wrong_dir)]
    correct = sum(conf[g, g] for g in gold)
    other_skipped = 0
    if INTERNAL_OTHER in gold:
        row = sum(conf[p, INTERNAL_OTHER] for p in columns) + (conf[WRONG_DIR, INTERNAL_OTHER] if wrong_dir else 0)
        other_skipped = gold[INTERNAL_OTHER] - row
    out.append(f"Coverage = {total_proposed}/{total_answer} = {100.0 * total_proposed / total_answer:5.2f}%\n")
    out.append(f"Accuracy (calculated for the above confusion matrix) = {correct}/{total_proposed} = "
               f"{100.0 * correct / total_proposed:5.2f}%\n")
    out.append(f"Accuracy (considering all skipped examples as Wrong) = {correct}/{total_answer} = "
               f"{100.0 * correct / total_answer:5.2f}%\n")
    out.append(f"Accuracy (considering all skipped examples as Other) = {correct + other_skipped}/{total_answer} = "
               f"{100.0 * (correct + other_skipped) / total_answer:5.2f}%\n")
    out.append("\nResults for the individual relations:\n")
    scores: dict[str, RelationScore] = {}
    for label in sorted(gold):
        s = _relation(conf, gold, proposed, label, wrong_dir)
        scores[label] = s
        shown = f"{s.correct:4d}/({s.proposed:4d} +{s.wrong_direction:4d})" if wrong_dir else \
            f"{s.correct:4d}/{s.proposed + s.wrong_direction:4d}"
        out.append(f"{label:>25s} :    P = {shown} = {s.precision:6.2f}%     R = {s.correct:4d}/{s.gold:4d} = "
                   f"{s.recall:6.2f}%     F1 = {s.f1:6.2f}%\n")
    relations = {k: v for k, v in scores.items() if k != INTERNAL_OTHER}
    if not relations:
        raise SeqlabError("the key holds no relation other than Other: the macro-average is undefined")
    m_correct = sum(s.correct for s in relations.values())
    m_proposed = sum(s.proposed + s.wrong_direction for s in relations.values())
    m_gold = sum(s.gold for s in relations.values())
    mp = 100.0 * m_correct / m_proposed if m_proposed else 0.0
    mr = 100.0 * m_correct / m_gold if m_gold else 0.0
    mf = 2.0 * mp * mr / (mp + mr) if mp + mr else 0.0
    out.append("\nMicro-averaged result (excluding Other):\n")
    out.append(f"P = {m_correct:4d}/{m_proposed:4d} = {mp:6.2f}%     R = {m_correct:4d}/{m_gold:4d} = {mr:6.2f}%"
               f"     F1 = {mf:6.2f}%\n")
    n = len(relations)
    macro_p = sum(s.precision for s in relations.values()) / n
    macro_r = sum(s.recall for s in relations.values()) / n
    macro_f = sum(s.f1 for s in relations.values()) / n
    out.append("\nMACRO-averaged result (excluding Other):\n")
    out.append(f"P = {macro_p:6.2f}%\tR = {macro_r:6.2f}%\tF1 = {macro_f:6.2f}%\n\n\n\n")
    result = SemEvalResult(macro_f, macro_p, macro_r, 100.0 * correct / total_proposed,
                           {(OTHER if k == INTERNAL_OTHER else k): v for k, v in scores.items()})
    return "".join(out), result


def _relation(conf: Counter, gold: Counter, proposed: Counter, label: str, wrong_dir: bool) -> RelationScore:
    correct = conf[label, label]
    wrong = conf[WRONG_DIR, label] if wrong_dir else 0
    p = 100.0 * correct / (proposed[label] + wrong) if proposed[label] else 0.0
    r = 100.0 * correct / gold[label] if gold[label] else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return RelationScore(correct, proposed[label], wrong, gold[label], p, r, f)


def _matrix(conf: Counter, gold: Counter, proposed: Counter, columns: list[str], total_proposed: int,
            total_answer: int, wrong_dir: bool) -> str:
    out = ["Confusion matrix:\n", "       "]
    out.extend(f" {_short(c, gold):>4s}" for c in columns)
    out.append(" <-- classified as\n")
    rule = "      +" + "-----" * len(columns)
    out.append(rule + ("+ -SUM- xDIRx skip  ACTUAL\n" if wrong_dir else "+ -SUM- skip ACTUAL\n"))
    for g in sorted(gold):
        out.append(f" {_short(g, gold):>4s} |")
        row = 0
        for c in columns:
            out.append(f"{conf[c, g]:4d} ")
            row += conf[c, g]
        if wrong_dir:
            wd = conf[WRONG_DIR, g]
            out.append(f"| {row:4d}  {wd:4d}  {gold[g] - row - wd:4d} {gold[g]:6d}\n")
        else:
            out.append(f"| {row:4d} {gold[g] - row:4d} {gold[g]:4d}\n")
    out.append(rule + "+\n")
    out.append(" -SUM- ")
    out.extend(f"{proposed[c]:4d} " for c in columns)
    if wrong_dir:
        wd = proposed[WRONG_DIR]
        out.append(f"  {total_proposed - wd:4d}  {wd:4d}  {total_answer - total_proposed:4d} {total_answer:6d}\n\n")
    else:
        out.append(f"  {total_proposed:4d} {total_answer - total_proposed:4d} {total_answer:4d}\n\n")
    return "".join(out)
