"""Adaptations learned from a treebank: merges, splits, multiword tokens, stored and applied."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.data.conllu import read_conllu
from seqlab.text.learned import FILE, learn, load, save
from seqlab.text.mwt import accuracy, with_case
from seqlab.text.pipeline import TextPipeline

pytest.importorskip("spacy", reason="the languages extra (spaCy) is not installed")


def _row(k: int | str, form: str, upos: str = "X", misc: str = "_") -> str:
    return "\t".join((str(k), form, "_", upos, "_", "_", "_", "_", "_", misc))


def _sentence(text: str, rows: list[str]) -> str:
    return f"# text = {text}\n" + "\n".join(rows) + "\n\n"


#: French-style training data: ``20 000`` one token, ``du`` always de+le, ``des`` de+les after a noun and the
#: article after a verb.
TRAIN = (
    _sentence("Il a 20 000 euros du jour.", [_row(1, "Il"), _row(2, "a"), _row(3, "20 000"), _row(4, "euros"),
              _row("5-6", "du"), _row(5, "de"), _row(6, "le"), _row(7, "jour", misc="SpaceAfter=No"), _row(8, ".")])
    + _sentence("Le livre des enfants.", [_row(1, "Le"), _row(2, "livre"), _row("3-4", "des"), _row(3, "de"),
                _row(4, "les"), _row(5, "enfants", misc="SpaceAfter=No"), _row(6, ".")])
    + _sentence("Le prix des enfants.", [_row(1, "Le"), _row(2, "prix"), _row("3-4", "des"), _row(3, "de"),
                _row(4, "les"), _row(5, "enfants", misc="SpaceAfter=No"), _row(6, ".")])
    + _sentence("Il a des amis.", [_row(1, "Il"), _row(2, "a"), _row(3, "des"), _row(4, "amis", misc="SpaceAfter=No"),
                _row(5, ".")])
    + _sentence("On voit des amis.", [_row(1, "On"), _row(2, "voit"), _row(3, "des"),
                _row(4, "amis", misc="SpaceAfter=No"), _row(5, ".")])
)


@pytest.fixture
def train(tmp_path: Path) -> Path:
    path = tmp_path / "train.conllu"
    path.write_text(TRAIN, encoding="utf-8")
    return path


def test_learns_merges_by_shape_and_multiwords(train: Path) -> None:
    learned = learn(train, "fr")
    assert learned.merges == {"00 000": 2}
    entries = learned.multiwords.entries
    assert (entries["du"].words, entries["du"].mwt, entries["du"].plain) == (["de", "le"], 1, 0)
    assert (entries["des"].mwt, entries["des"].plain) == (2, 2)


def test_raw_text_comes_out_tokenized_like_the_training_data(train: Path) -> None:
    pipeline = TextPipeline("fr", learn(train, "fr"))
    (sentence,) = pipeline.sentences("Du 13 819 au livre des enfants.")
    assert sentence.words == ["De", "le", "13 819", "au", "livre", "de", "les", "enfants", "."]
    assert sentence.starts[:2] == [0, 0] and sentence.ends[:2] == [2, 2]  # one surface token, two words


def test_the_context_rule_reads_an_ambiguous_form_both_ways(train: Path) -> None:
    pipeline = TextPipeline("fr", learn(train, "fr"))
    assert pipeline.sentences("Il a des amis.")[0].words == ["Il", "a", "des", "amis", "."]
    assert pipeline.sentences("Le livre des voisins.")[0].words == ["Le", "livre", "de", "les", "voisins", "."]
    assert accuracy(learn(train, "fr").multiwords, read_conllu(train))["accuracy"] == 1.0


def test_saved_and_loaded_alike(train: Path, tmp_path: Path) -> None:
    learned = learn(train, "fr")
    save(learned, tmp_path)
    assert load(tmp_path) == learned
    assert load(tmp_path / "nothing") is None


def test_a_damaged_file_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / FILE).write_text('{"language": "fr"}', encoding="utf-8")
    with pytest.raises(SeqlabError, match="not a seqlab text adaptations file"):
        load(tmp_path)


@pytest.mark.parametrize("surface, words, expected", [
    ("du", ["de", "le"], ["de", "le"]), ("Du", ["de", "le"], ["De", "le"]), ("DU", ["de", "le"], ["DE", "LE"]),
])
def test_words_take_the_surface_case(surface: str, words: list[str], expected: list[str]) -> None:
    assert with_case(surface, words) == expected


def test_a_piece_cut_off_more_often_than_not_becomes_a_suffix_rule(tmp_path: Path) -> None:
    # the treebank cuts the final hyphen off "part-" and "vient-" but keeps "dit-" whole: two cuts of three
    rows = lambda verb, cut: (  # noqa: E731
        [_row(1, "Il"), _row(2, verb, misc="SpaceAfter=No"), _row(3, "-"), _row(4, "vite", misc="SpaceAfter=No"),
         _row(5, ".")] if cut else
        [_row(1, "Il"), _row(2, verb + "-"), _row(3, "vite", misc="SpaceAfter=No"), _row(4, ".")])
    path = tmp_path / "train.conllu"
    path.write_text("".join(_sentence(f"Il {verb}- vite.", rows(verb, cut))
                            for verb, cut in (("part", True), ("vient", True), ("dit", False))), encoding="utf-8")
    learned = learn(path, "fr")
    assert "-" in learned.suffixes
    (sentence,) = TextPipeline("fr", learned).sentences("Il court- vite.")
    assert sentence.words[:3] == ["Il", "court", "-"]


def test_a_table_stored_before_the_regression_is_learned_again(train: Path, tmp_path: Path) -> None:
    learned = learn(train, "fr")
    save(learned, tmp_path)
    path = tmp_path / FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["multiwords"].values():  # the naive Bayes form: counts of neighbours, no weights
        entry.pop("weights")
        entry["context"] = {}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load(tmp_path) is None  # so for_run learns it again from the training file


@pytest.mark.parametrize("text, expected", [
    ("là-bas", "a-a"), ("Croix-Rouge", "a-a"), ("20 000", "0 0"), ("ab12cd", "a0a"), ("3,5 %", "0,0 %"),
    ("σε-το", "a-a"), ("", ""),
])
def test_a_pattern_reads_runs_of_letters_and_digits_as_one(text: str, expected: str) -> None:
    from seqlab.text.learned import char_classes, pattern

    assert pattern(text) == expected
    assert len(char_classes(text)) == len(text)  # per character: a run's classes are a slice of the text's


def test_a_merge_by_pattern_joins_runs_of_that_kind_only() -> None:
    from seqlab.text.learned import Adaptations
    from seqlab.text.pipeline import merge

    text = "à là - bas et 12 - 15"
    spans = [(0, 1), (2, 4), (5, 6), (7, 10), (11, 13), (14, 16), (17, 18), (19, 21)]
    joined = merge(text, spans, Adaptations("fr", patterns={"a - a": 3}))
    assert [text[s:e] for s, e in joined] == ["à", "là - bas", "et", "12", "-", "15"]


def test_a_run_trained_on_columns_has_nothing_to_learn_and_says_nothing(tmp_path: Path, caplog) -> None:
    """A Spanish run trained on two-column CoNLL has no text to learn a tokenization from: no text.json, and
    loading it neither relearns nor warns that its training file is missing (it only has nothing to teach)."""
    from seqlab.data.config import DataConfig
    from seqlab.text.learned import for_run, learns

    data = DataConfig(train="conll2002_es/esp.train", dev="conll2002_es/esp.testa", columns=("word", "ner"),
                      language="es")
    assert not learns(data)
    with caplog.at_level("INFO", logger="seqlab"):
        assert for_run(tmp_path, data) is None
    assert caplog.records == []
