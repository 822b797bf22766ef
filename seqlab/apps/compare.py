"""Is system A better than system B? Paired tests (:mod:`seqlab.core.significance`) over two output files.

CoNLL prediction files (``token ... gold pred``) are compared on conlleval's span F1, SemEval-2010 Task 8
answer files on the official macro-F1: each file is reduced to per-sentence counts, which the tests
resample. ``seqlab compare`` calls :func:`compare_conll_files` and :func:`compare_semeval_files`.
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from seqlab.core.errors import SeqlabError
from seqlab.core.significance import Comparison, compare, official_macro_f1, span_f1
from seqlab.data.metrics import read_prediction_file, score
from seqlab.data.semeval import OTHER
from seqlab.relation.score import read_answers, undirected


def span_counts(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-sentence [correct, found, gold] span counts (N, 3), by conlleval's rules (seqlab.data.metrics)."""
    rows = []
    for g, p in zip(gold, pred):
        report = score([g], [p])  # chunks never cross a sentence boundary, so the rows sum to the whole
        rows.append((report.correct, report.phrases_found, report.phrases_gold))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def relation_counts(proposed: dict[str, str], key: dict[str, str]) -> np.ndarray:
    """Per-sentence official counts (N, R, 4) over the key's relations (Other left out), in key order."""
    relations = sorted({undirected(label) for label in key.values()} - {OTHER})
    index = {name: i for i, name in enumerate(relations)}
    counts = np.zeros((len(key), len(relations), 4), dtype=np.int64)
    for row, (sid, gold) in enumerate(key.items()):
        guess = proposed[sid]
        g, p = undirected(gold), undirected(guess)
        if g in index:
            counts[row, index[g], 3] = 1  # gold
        if p not in index:
            continue
        if p == g and guess != gold:
            counts[row, index[p], 2] = 1  # right relation, wrong direction: costs precision and recall
        else:
            counts[row, index[p], 1] = 1  # proposed
            counts[row, index[p], 0] = int(guess == gold)
    return counts


def compare_conll_files(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str], **options: int) -> Comparison:
    """Compare two ``token ... gold pred`` files of the same sentences (same gold tags) on span F1."""
    a, b = read_prediction_file(path_a), read_prediction_file(path_b)
    for path, file in ((path_a, a), (path_b, b)):
        if not file.gold:
            raise SeqlabError(f"{path}: no sentences to compare (the file holds no 'token ... gold pred' lines)")
    if len(a.gold) != len(b.gold):
        raise SeqlabError(f"{path_a} has {len(a.gold)} sentences but {path_b} has {len(b.gold)}: "
                          "compare predictions for the same test file")
    for i, (gold_a, gold_b) in enumerate(zip(a.gold, b.gold), start=1):
        if gold_a != gold_b:
            raise SeqlabError(f"sentence {i} has different gold tags in {path_a} and {path_b}: "
                              "compare predictions for the same test file")
    return compare(span_counts(a.gold, a.pred), span_counts(b.gold, b.pred), span_f1, **options)


def compare_semeval_files(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str],
                          key_path: str | os.PathLike[str], **options: int) -> Comparison:
    """Compare two SemEval-2010 Task 8 answer files on the official macro-F1; both must answer every key id."""
    key = read_answers(key_path)
    answers = []
    for path in (path_a, path_b):
        proposed = read_answers(path)
        missing = [sid for sid in key if sid not in proposed]
        extra = [sid for sid in proposed if sid not in key]
        if missing or extra:
            what = f"no answer for id {missing[0]}" if missing else f"id {extra[0]} is not in the key {key_path}"
            raise SeqlabError(f"{path}: {what} (a paired test needs an answer for every key id, and no other)")
        answers.append(relation_counts(proposed, key))
    return compare(answers[0], answers[1], official_macro_f1, **options)
