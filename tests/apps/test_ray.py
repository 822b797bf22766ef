"""Tagging on Ray (seqlab.apps.ray) on a local Ray instance with 2 CPUs: the rows seqlab tag --format jsonl writes."""
from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout

import pytest

from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.tagging.document import Document, Sentence, Span

TEXTS = ["EU rejects German call to boycott British lamb.", "", "Peter Blackburn said so. BRUSSELS 1996-08-22",
         "The European Commission said on Thursday it disagreed with German advice to consumers to shun "
         "British lamb until scientists determine whether mad cow disease can be transmitted to sheep.",
         "Angela Merkel met Emmanuel Macron in Berlin."] * 8


def test_without_ray_the_error_says_how_to_install_it(monkeypatch):
    from seqlab.apps.ray import tag_dataset

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as when it is not installed
    with pytest.raises(SeqlabError, match=r"pip install 'seqlab\[ray\]'"):
        tag_dataset([])


def test_columns_built_from_flat_buffers_hold_what_to_dict_gives():
    pytest.importorskip("pyarrow", reason="Ray Data's tables need pyarrow: pip install -e '.[ray]'")
    from seqlab.apps.ray import _schema, row_columns

    spans = [Span("EU", "ORG", 0, 2, 0.123456, 0, 1), Span("German", "MISC", 11, 17, 0.9, 2, 3)]
    docs = [Document("", []), Document("EU rejects German", [Sentence(["EU", "rejects", "German"],
                                                                      [(0, 2), (3, 10), (11, 17)],
                                                                      ["B-ORG", "O", "B-MISC"], spans)]),
            Document("a . b", [Sentence(["a", "."], [(0, 1), (1, 2)], ["O", "O"], []),
                               Sentence(["b"], [(4, 5)], ["O"], [Span("b", "PER", 4, 5, 1.0, 0, 1)])])]
    columns = row_columns(docs)
    assert (columns["spans"].type, columns["sentences"].type) == _schema()
    assert columns["spans"].to_pylist() == [doc.to_dict()["spans"] for doc in docs]
    assert columns["sentences"].to_pylist() == [doc.to_dict()["sentences"] for doc in docs]
    assert [len(column) for column in row_columns([]).values()] == [0, 0]


def test_two_actors_give_the_rows_of_seqlab_tag_jsonl(tmp_path):
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
        with pytest.raises(SeqlabError, match="not a seqlab model"):  # refused before any actor starts
            tag_dataset(dataset, tmp_path, text_column="body")
        rows = tag_dataset(dataset, text_column="body", actors=2, lines_per_call=7, batch_size=5,
                           scheme="bioes").take_all()
    finally:
        ray.shutdown()
    rows.sort(key=lambda row: row["id"])
    text = tmp_path / "in.txt"
    text.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["tag", "en-ner-conll03", str(text), "--format", "jsonl", "--scheme", "bioes"]) == 0
    expected = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["body"] for row in rows] == TEXTS
    assert sum(len(record["spans"]) for record in expected) > 20
    assert [{"line": row["id"] + 1, **sentence} for row in rows for sentence in row["sentences"]] == expected
    for row in rows:
        assert row["spans"] == [span for sentence in row["sentences"] for span in sentence["spans"]]
