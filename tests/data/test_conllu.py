"""The CoNLL-U reader: syntactic words, multiword tokens, empty nodes, offsets into # text, and clear errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError
from seqlab.data.conllu import CONLLU_FIELDS, read_conllu
from tests.conftest import FIXTURES

UD = Path(__file__).parents[3] / "shared" / "data" / "ud_english_ewt"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.conllu"
    path.write_text(text, encoding="utf-8")
    return path


def _line(ident: str, form: str, upos: str = "X") -> str:
    return "\t".join([ident, form, form.lower(), upos, "_", "_", "0", "dep", "_", "_"]) + "\n"


def test_multiword_tokens_are_read_as_their_words_and_empty_nodes_skipped() -> None:
    sentences = list(read_conllu(FIXTURES / "pos" / "train.conllu"))
    assert len(sentences) == 10
    first, third = sentences[0], sentences[2]
    assert first["form"] == ("The", "cat", "sat", "on", "the", "mat", ".")  # the empty node 3.1 is not a word
    assert third["form"] == ("I", "do", "n't", "like", "rain", ".") and third["upos"][1:3] == ("AUX", "PART")
    assert third.extra["text"] == "I don't like rain." and third.extra["sent_id"] == "s3"
    offsets = third.extra["offsets"]
    assert offsets[1] == offsets[2] == (2, 7)  # both words of "don't" carry the token's offsets
    assert [third.extra["text"][a:b] for a, b in offsets] == ["I", "don't", "don't", "like", "rain", "."]
    assert set(first.columns) == set(CONLLU_FIELDS)


@pytest.mark.parametrize("body, message", [
    (_line("1", "a") + "2\tb\tb\n", r"x.conllu:2: expected 10 TAB-separated CoNLL-U fields"),
    (_line("1", "a") + _line("3", "b"), r"x.conllu:2: word ID 3: expected 2"),
    (_line("x", "a"), r"x.conllu:1: ID 'x': expected a word number"),
    (_line("1", "a") + _line("3-4", "ab"), r"x.conllu:2: multiword token '3-4': expected the range 2-N"),
    (_line("1", ""), r"x.conllu:1: empty FORM"),
    (_line("1", "a") + _line("2-3", "bc") + _line("2", "b") + "\n" + _line("1", "d"),
     r"x.conllu:2: multiword token ends at word 3, but the sentence has 2 words"),
    (_line("1", "a") + _line("2-3", "bc") + _line("2", "b"), r"x.conllu:2: multiword token ends at word 3"),
])
def test_malformed_lines_name_the_file_and_line(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, body + "\n")
    with pytest.raises(DataFormatError, match=message):
        list(read_conllu(path))


def test_no_offsets_where_the_words_do_not_spell_the_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "# text = something else\n" + _line("1", "a") + "\n")
    [sentence] = read_conllu(path)
    assert sentence.extra["offsets"] is None and sentence["form"] == ("a",)


@pytest.mark.skipif(not UD.is_dir(), reason="UD English EWT is not in ../shared/data/ud_english_ewt")
def test_ud_english_ewt_counts_as_its_provenance_says() -> None:
    sentences = list(read_conllu(UD / "en_ewt-ud-train.conllu"))
    assert (len(sentences), sum(len(s) for s in sentences)) == (12544, 204577)
    assert all(s.extra["offsets"] is not None for s in sentences)
