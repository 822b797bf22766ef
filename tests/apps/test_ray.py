"""Tagging on Ray (seqlab.apps.ray) on a local Ray instance with 2 CPUs: the spans tag_many gives."""
from __future__ import annotations

import sys

import pytest

import seqlab
from seqlab.core.errors import SeqlabError

TEXTS = ["EU rejects German call to boycott British lamb.", "", "Peter Blackburn said so. BRUSSELS 1996-08-22",
         "The European Commission said on Thursday it disagreed with German advice to consumers to shun "
         "British lamb until scientists determine whether mad cow disease can be transmitted to sheep.",
         "Angela Merkel met Emmanuel Macron in Berlin."] * 8


def test_without_ray_the_error_says_how_to_install_it(monkeypatch):
    from seqlab.apps.ray import tag_dataset

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as when it is not installed
    with pytest.raises(SeqlabError, match=r"pip install 'seqlab\[ray\]'"):
        tag_dataset([])


def test_two_actors_give_the_spans_of_tag_many(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")
    pytest.importorskip("ray.data", reason="Ray Data is an optional extra: pip install -e '.[ray]'")
    from seqlab.apps.ray import tag_dataset

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        dataset = ray.data.from_items([{"id": i, "body": text} for i, text in enumerate(TEXTS)])
        with pytest.raises(SeqlabError, match="no column 'text'"):
            tag_dataset(dataset)
        with pytest.raises(SeqlabError, match="actors must be a positive number"):
            tag_dataset(dataset, text_column="body", actors=0)
        rows = tag_dataset(dataset, text_column="body", actors=2, lines_per_call=7, batch_size=5,
                           scheme="bioes").take_all()
    finally:
        ray.shutdown()
    rows.sort(key=lambda row: row["id"])
    expected = list(seqlab.load(None, "cpu").tag_many(TEXTS, scheme="bioes"))
    assert [row["body"] for row in rows] == TEXTS
    assert sum(len(doc.spans) for doc in expected) > 20
    for row, doc in zip(rows, expected):
        assert row["spans"] == doc.to_dict()["spans"]
        assert row["sentences"] == doc.to_dict()["sentences"]
        assert [s["labels"] for s in row["sentences"]] == [s.labels for s in doc.sentences]
        assert [[tuple(o) for o in s["offsets"]] for s in row["sentences"]] == [s.offsets for s in doc.sentences]
