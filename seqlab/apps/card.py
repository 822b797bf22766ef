"""Model cards (Mitchell et al. 2019): what a ``.seqlab`` file says about the model it holds, as ``card.json``.

A card is written when a model is packaged (:func:`seqlab.apps.package.package`). Some of it is measured then:

* the labels, the training data's paths and the seed (from the run's config);
* scores on the dev and test sets, overall and per type (or per tag), from the packaged model itself when the
  data files are on this machine (``SEQLAB_DATA``), else the run's ``metrics.json``;
* the confidences' calibration: the temperature fitted on dev (``calibration.json``) and the expected calibration
  error on dev and test before and after it (:mod:`seqlab.tagging.calibration`).

The rest only a person can say, and comes from an *about* file (``seqlab package RUN --about ABOUT.yaml``): a
YAML mapping of the keys in :data:`ABOUT_KEYS`, each a string. Without one, the data's licence reads "not
stated" and the limitations say that scores drop on text unlike the training data.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.core.scores import recorded_scores
from seqlab.core.strict import read_mapping

#: What an about file may say, each a string: the model's name, what it is, the data's name and licence,
#: how the seed was chosen, its measured speed and memory, and its limitations.
ABOUT_KEYS = ("name", "description", "data", "licence", "selection", "speed", "memory", "limitations")
_NOT_STATED = "not stated; see the data set's own terms before using the model"


def read_about(path: str | Path) -> dict[str, str]:
    """An about file: a YAML mapping of :data:`ABOUT_KEYS` to strings; anything else is a one-line error."""
    tree = read_mapping(Path(path), "about file")
    for key, value in tree.items():
        if key not in ABOUT_KEYS:
            raise SeqlabError(f"{path}: unknown key {key!r}; an about file may give {', '.join(ABOUT_KEYS)}")
        if not isinstance(value, str) or not value.strip():
            raise SeqlabError(f"{path}: {key} must be a non-empty string, got {value!r}")
    return {key: " ".join(value.split()) for key, value in tree.items()}


def _split_path(data: dict[str, Any], split: str) -> Path | None:
    value = data.get(split)
    if not isinstance(value, str) or not value:
        return None
    try:
        return resolve_data_path(value, key=f"data.{split}")
    except SeqlabError:  # not on this machine: the card takes the run's recorded scores instead
        return None


def _scores(result: dict[str, Any], measure: str) -> dict[str, Any]:
    """A report's overall and per-type figures, rounded to two decimals (percent)."""
    keep = ("precision", "recall", "f1", "accuracy")
    overall = {k: round(float(result[k]), 2) for k in keep if isinstance(result.get(k), (int, float))}
    per_type = {name: {k: round(float(v[k]), 2) for k in ("precision", "recall", "f1") if k in v}
                | {"gold": v.get("gold")} for name, v in sorted((result.get("per_type") or {}).items())}
    return {"measure": measure, **overall, "per_type": per_type}


def tagger_card(model: Any, tree: dict[str, Any], metrics: dict[str, Any], about: dict[str, str], *,
                decoded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The card of a loaded tagger (:class:`seqlab.tagging.api.SequenceTagger`) packaged from a run whose config
    tree is ``tree``: scores measured on the dev and test files where they are here, calibration on both.
    ``decoded``: splits the model has decoded already (``{"dev": model.outcomes(...)}``), not decoded again."""
    data = tree.get("data") or {}
    scores, calibration = {}, {}
    measure = model.labelling.measure
    for split in ("dev", "test"):
        path = _split_path(data, split)
        if path is None:
            recorded = recorded_scores(metrics, "the run's metrics.json").get(split)
            if recorded is not None:
                scores[split] = _scores(recorded.report, measure) | {"from": "the training run's metrics.json"}
            continue
        outcomes = (decoded or {}).get(split)
        if outcomes is None:
            outcomes = model.outcomes(path)
        scores[split] = _scores(model.evaluate(outcomes).to_dict(), measure)  # the same decoding, not another
        before, after = outcomes.reliability(1.0), outcomes.reliability(model.temperature)
        calibration[split] = {"units": after.count, "ece_uncalibrated": round(before.ece, 4),
                              "ece": round(after.ece, 4), "ece_interval": [round(x, 4) for x in after.interval],
                              "accuracy": round(after.accuracy, 4),
                              "mean_confidence": round(after.confidence, 4)}
    card = _common(tree, about, model.types, scores)
    if isinstance(metrics.get("teacher"), dict):  # a distilled tagger: the teacher-labelled sentences it trained on
        card["data"]["teacher"] = metrics["teacher"]
    card["calibration"] = {"temperature": round(model.temperature, 4), "unit": model.labelling.unit,
                           "fitted_on": data.get("dev"), **calibration}
    return card


def relation_card(model: Any, tree: dict[str, Any], metrics: dict[str, Any], about: dict[str, str]) -> dict[str, Any]:
    """The card of a relation classifier: the run's recorded dev and test scores (its confidences are not
    calibrated)."""
    scores = {split: {"measure": score.measure, **{k: round(float(v), 2) for k, v in score.report.items()
                                                   if isinstance(v, (int, float))}}
              for split, score in recorded_scores(metrics, "the run's metrics.json").items()}
    return _common(tree, about, list(model.labels), scores)


def _common(tree: dict[str, Any], about: dict[str, str], labels: list[str],
            scores: dict[str, Any]) -> dict[str, Any]:
    data = tree.get("data") or {}
    train = data.get("train")
    return {
        "name": about.get("name"), "description": about.get("description"), "task": tree.get("task", "tagging"),
        "labels": labels, "language": data.get("language", "en"),
        "data": {"name": about.get("data"), "licence": about.get("licence", _NOT_STATED),
                 **{split: data.get(split) for split in ("train", "dev", "test") if data.get(split)}},
        "seed": (tree.get("train") or {}).get("seed"), "selection": about.get("selection"),
        "scores": scores, "speed": about.get("speed"), "memory": about.get("memory"),
        "limitations": about.get("limitations", f"Trained on {train}; expect lower scores on text unlike it "
                                                "(another domain, period, genre or language)."),
    }


def calibration_line(calibration: dict[str, Any] | None) -> str:
    """A card's calibration in one line: the temperature, where it was fitted, each split's ECE before and after."""
    if not calibration:
        return "not recorded"
    parts = [f"{split} ECE {c['ece_uncalibrated']} -> {c['ece']}" for split, c in calibration.items()
             if isinstance(c, dict)]
    return (f"temperature {calibration.get('temperature')} fitted on {calibration.get('fitted_on')} "
            f"({calibration.get('unit')} confidences); " + "; ".join(parts))


def teacher_line(teacher: dict[str, Any]) -> str:
    """A distilled tagger's teacher data in one line: the teacher, the pool and each epoch's draw."""
    return (f"{teacher.get('sentences')} sentences ({teacher.get('words')} words) labelled by {teacher.get('teacher')} "
            f"in {teacher.get('corpus')}, {teacher.get('sentences_per_epoch')} of them per epoch "
            f"(mix {teacher.get('mix')}, path confidence >= {teacher.get('threshold')}, {teacher.get('loss')} loss)")


def render(card: dict[str, Any]) -> str:
    """A card as the text ``seqlab inspect`` prints (and README shows)."""
    data = card.get("data") or {}
    lines = [f"{card.get('name') or 'model'}: {card.get('description') or card.get('task', '')}",
             f"  language:    {card.get('language') or 'en'}",
             f"  labels:      {' '.join(card.get('labels') or [])}",
             f"  data:        {data.get('name') or data.get('train')}; train {data.get('train')}, dev "
             f"{data.get('dev')}, test {data.get('test')}",
             f"  licence:     {data.get('licence')}",
             *([f"  teacher:     {teacher_line(data['teacher'])}"] if isinstance(data.get("teacher"), dict) else []),
             f"  seed:        {card.get('seed')}" + (f" ({card['selection']})" if card.get("selection") else "")]
    for split, score in (card.get("scores") or {}).items():
        measure = score.get("measure", "F1")
        value = score.get("f1", score.get("accuracy"))
        head = f"  {split + ':':<12} {measure} {value}" + (f" (P {score['precision']}, R {score['recall']})"
                                                           if "precision" in score and "recall" in score else "")
        types = score.get("per_type") or {}
        if types and len(types) <= 12:
            head += "; " + ", ".join(f"{name} {v.get('f1')}" for name, v in types.items())
        lines.append(head + (f" [{score['from']}]" if score.get("from") else ""))
    if card.get("calibration"):
        lines.append(f"  calibration: {calibration_line(card['calibration'])}")
    for key in ("speed", "memory"):
        if card.get(key):
            lines.append(f"  {key + ':':<12} {card[key]}")
    lines.append(f"  limitations: {card.get('limitations')}")
    return "\n".join(lines) + "\n"


def about_of(card: dict[str, Any] | None) -> dict[str, str]:
    """The person-written part of a card (what an about file gives), so that a card rewritten keeps it."""
    if not card:
        return {}
    data = card.get("data") or {}
    found = {"name": card.get("name"), "description": card.get("description"), "data": data.get("name"),
             "licence": data.get("licence"), "selection": card.get("selection"), "speed": card.get("speed"),
             "memory": card.get("memory"), "limitations": card.get("limitations")}
    return {key: value for key, value in found.items() if isinstance(value, str) and value and value != _NOT_STATED}


def describe(model: Any, tree: dict[str, Any], metrics: dict[str, Any], about: dict[str, str], *,
             calibration: dict[str, Any] | None, calibrate: bool) -> dict[str, dict[str, Any]]:
    """The JSON members a model file gets from packaging: ``card.json`` always, and for a tagger without a
    calibration yet (and ``calibrate``), ``calibration.json`` fitted on its dev file when that is here."""
    import seqlab.core.rundir as rundir

    added: dict[str, dict[str, Any]] = {}
    if model.task != "tagging":
        added[rundir.CARD] = relation_card(model, tree, metrics, about)
        return added
    dev = _split_path(tree.get("data") or {}, "dev")
    decoded = {}
    if calibration is None and calibrate and dev is not None:
        from seqlab.tagging.calibration import calibrate as fit

        decoded["dev"] = model.outcomes(dev)  # fitted on, then measured for the card: one decoding
        model, added[rundir.CALIBRATION] = fit(model, decoded["dev"])
    added[rundir.CARD] = tagger_card(model, tree, metrics, about, decoded=decoded)
    return added
