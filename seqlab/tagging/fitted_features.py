"""Token features fitted on the training split: orthographic, POS one-hot, label frequencies.

The input features of Turian, Bergstra & Bengio (2009, section 4), made by ``features/``:
:class:`features.orthographic.OrthographicFeatures` (first-character type, word length,
compressed word type, capitalization), :class:`features.orthographic.POSOneHot` (of a data
column, so a "type" is a word with its POS tag) and :class:`features.labels.LabelFrequencies`
(how often each label was given to the word). Each is fitted on the TRAINING split only,
which excludes a held-out ``data.dev_sample``, so label frequencies never see validation or
test labels. The fitted state is JSON, saved in the run directory (``features.json``) and
read back when the model is loaded, so tagging needs no training data. Like every feature in
the tagger's slot, they are computed once per type of a data set, not per token.
"""
from __future__ import annotations

from typing import Any, Mapping

from seqlab.core.errors import SeqlabError
from seqlab.tagging.features import FeatureEntry, TokenFeatures


def add_fitted(config: FeatureEntry, index: int, features: TokenFeatures, *, train: Any = None,
               state: Mapping[str, Any] | None = None) -> None:
    """Fit feature ``index`` on ``train`` (a Split), or rebuild it from ``state``; add it to ``features``."""
    key = str(index)
    saved = (state or {}).get(key)
    if saved is not None and saved.get("type") != config.type:
        raise SeqlabError(f"model.features[{index}]: the saved features.json holds a {saved.get('type')!r} "
                          f"feature here, but the config says {config.type!r}")
    if saved is None and train is None:
        raise SeqlabError(f"model.features[{index}]: type {config.type!r} is fitted on the training split, but "
                          "neither the training data nor the run's features.json was given")
    builder = {"orthographic": _orthographic, "pos": _pos, "label_freq": _label_freq}[config.type]
    try:
        features.state[key] = {"type": config.type, **builder(config, features, train, saved)}
    except (ValueError, TypeError, KeyError) as err:  # features/ raises plain errors; say which config entry
        raise SeqlabError(f"model.features[{index}] ({config.type}): {err}") from None


def _orthographic(config: FeatureEntry, features: TokenFeatures, train: Any, saved: Any) -> dict[str, Any]:
    from features.orthographic import OrthographicFeatures

    if saved is not None:
        extractor = OrthographicFeatures(first_types=saved["first_types"], word_types=saved["word_types"])
    else:
        extractor = OrthographicFeatures().fit(train.tokens, min_count=config.min_count)
    features.dense.append((extractor, extractor.dim))
    return {"first_types": list(extractor.first_types or ()), "word_types": list(extractor.word_types or ())}


def _pos(config: FeatureEntry, features: TokenFeatures, train: Any, saved: Any) -> dict[str, Any]:
    from features.orthographic import POSOneHot

    if saved is not None:
        extractor = POSOneHot(saved["tags"])
    else:
        if config.column not in train.columns:
            raise KeyError(f"data column {config.column!r} is not among data.columns {sorted(train.columns)}")
        extractor = POSOneHot().fit(train.columns[config.column])
    features.column_dense.append((config.column, lambda values: extractor(values, values), extractor.dim))
    return {"column": config.column, "tags": list(extractor.tags or ())}


def _label_freq(config: FeatureEntry, features: TokenFeatures, train: Any, saved: Any) -> dict[str, Any]:
    from features.labels import LabelFrequencies

    if saved is not None:
        extractor = LabelFrequencies(labels=saved["labels"], counts=saved["counts"], source=saved["source"],
                                     lowercase=saved["lowercase"])
    else:  # the training split only: with data.dev_sample it no longer holds the validation sentences
        extractor = LabelFrequencies(lowercase=config.lowercase).fit(
            train.tokens, train.tags, source=f"{train.name} split of {train.path} ({len(train.tokens)} sentences)")
    features.dense.append((extractor, extractor.dim))
    return {"labels": list(extractor.labels or ()), "counts": extractor.counts, "source": extractor.source,
            "lowercase": extractor.lowercase}
