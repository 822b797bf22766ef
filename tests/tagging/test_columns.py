"""data.columns names a training file's columns as seqlab eval --columns names an evaluated file's: one reader,
the same names, ``_`` for a column to skip."""
from __future__ import annotations

import pytest

import seqlab
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.data.conll import read_conll
from seqlab.tagging.config import load_config
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"


def _iob2(tags: list[str]) -> list[str]:
    return [f"B-{t[2:]}" if t != "O" and (i == 0 or tags[i - 1][2:] != t[2:]) else t for i, t in enumerate(tags)]


def relayout(source, target, columns: tuple[int, ...], sep: str) -> None:
    """Write ``source`` (word pos chunk ner, IOB1) with ``columns`` of it, in IOB2, separated by ``sep``."""
    blocks = []
    for sentence in read_conll(source, ["word", "pos", "chunk", "ner"]):
        rows = list(zip(*sentence.columns.values()))
        tags = _iob2([row[3] for row in rows])
        blocks.append("".join(sep.join((*(row[c] for c in columns if c != 3), tag)) + "\n"
                              for row, tag in zip(rows, tags)))
    target.write_text("\n".join(blocks))


@pytest.mark.parametrize("columns, kept, yaml_columns", [
    ((0, 3), 2, "[word, ner]"),  # token TAB tag, the common layout of public NER files
    ((0, 1, 2, 3), 4, "[word, _, _, ner]"),  # POS and chunk columns read past
])
def test_a_file_named_by_data_columns_trains_and_predicts_in_its_scheme(tmp_path, monkeypatch, columns, kept,
                                                                       yaml_columns):
    for name in ("train", "dev"):
        relayout(NER / f"{name}.txt", tmp_path / f"{name}.tsv", columns, "\t")
    assert len((tmp_path / "train.tsv").read_text().splitlines()[0].split("\t")) == kept
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    (tmp_path / "vectors.txt").write_text((NER / "vectors.txt").read_text())
    config = tmp_path / "c.yaml"
    config.write_text((NER / "tiny.yaml").read_text().replace("train.txt", "train.tsv").replace("dev.txt", "dev.tsv")
                      .replace("[word, pos, chunk, ner]", yaml_columns).replace("file_scheme: iob1", "file_scheme: iob2"))
    with forget_new_log_handlers():
        metrics = seqlab.train(config, tmp_path / "run", overrides=("train.epochs=1", "train.threads=1"),
                               progress=False)
    assert metrics["dev"]["f1"] >= 0
    predicted = [line.split(" ") for line in (tmp_path / "run" / "dev.predictions.txt").read_text().splitlines()
                 if line]
    gold = [line.split("\t") for line in (tmp_path / "dev.tsv").read_text().splitlines() if line]
    assert [row[0] for row in predicted] == [row[0] for row in gold]
    assert [row[1] for row in predicted] == [row[-1] for row in gold]  # gold as in the file: IOB2
    assert {row[2][0] for row in predicted} <= {"B", "I", "O"}


@pytest.mark.parametrize("columns, message", [
    ("[word, word, ner]", r"data.columns: expected one name per column \(unique; _ skips a column\)"),
    ("[word, _, pos]", "data.tag_column: 'ner' is not one of data.columns"),
    ("[_, pos, ner]", "data.word_column: 'word' is not one of data.columns"),
])
def test_data_columns_are_checked_like_eval_columns(tmp_path, columns, message):
    path = tmp_path / "c.yaml"
    path.write_text(f"data: {{train: a.txt, dev: b.txt, columns: {columns}}}\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_the_reader_skips_columns_named_underscore(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("EU NNP I-NP B-ORG\nrejects VBZ I-VP O\n")
    (sentence,) = read_conll(path, ["word", "_", "_", "ner"])
    assert sentence.columns == {"word": ("EU", "rejects"), "ner": ("B-ORG", "O")}
    with pytest.raises(SeqlabError, match="expected one name per column"):
        list(read_conll(path, ["word", "ner", "ner", "_"]))
