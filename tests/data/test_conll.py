import pytest

from seqlab.data.conll import read_conll, write_conll
from seqlab.core.errors import DataFormatError, SeqlabError

COLUMNS = ["word", "pos", "chunk", "ner"]
TEXT = """-DOCSTART- -X- O O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German\tJJ\tI-NP\tI-MISC
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
-DOCSTART- -X- O O

BRUSSELS NNP I-NP I-LOC
"""


def test_reads_sentences_docstart_and_mixed_separators(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text(TEXT)
    sents = list(read_conll(path, COLUMNS))
    assert [list(s["word"]) for s in sents] == [["EU", "rejects", "German", "."], ["Peter", "Blackburn"], ["BRUSSELS"]]
    assert sents[0]["ner"] == ("I-ORG", "O", "I-MISC", "O")
    assert [s.doc_start for s in sents] == [True, False, True]
    assert [s.line for s in sents] == [3, 8, 12]


def test_a_line_opening_with_the_conlleval_boundary_ends_a_sentence_and_is_no_token(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("EU NNP I-NP I-ORG\n-X- -X- O O\nrejects VBZ I-VP O\n")  # as conlleval reads it
    assert [list(s["word"]) for s in read_conll(path, COLUMNS)] == [["EU"], ["rejects"]]


def test_reader_is_a_generator(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text(TEXT)
    stream = read_conll(path, COLUMNS)
    assert next(stream)["word"][0] == "EU"


@pytest.mark.parametrize(
    "content,message",
    [
        ("EU NNP I-NP I-ORG\nrejects VBZ O\n", r"a.txt:2: expected 4 columns"),
        (b"EU NNP I-NP I-ORG\nr\xe9jects VBZ I-VP O\n", r"a.txt:2: not valid UTF-8 \(byte 0xe9"),
    ],
)
def test_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "a.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(DataFormatError, match=message):
        list(read_conll(path, COLUMNS))


def test_missing_file(tmp_path):
    with pytest.raises(SeqlabError, match="no such file"):
        list(read_conll(tmp_path / "nope.txt", COLUMNS))


def test_write_then_read(tmp_path):
    path = tmp_path / "out" / "b.txt"
    rows = [[("EU", "B-ORG"), ("rejects", "O")], [("Peter", "B-PER")]]
    write_conll(path, rows)
    back = list(read_conll(path, ["word", "ner"]))
    assert [list(zip(s["word"], s["ner"])) for s in back] == rows
    assert [p.name for p in path.parent.iterdir()] == ["b.txt"]  # no temporary file left behind


@pytest.mark.parametrize("text", [TEXT, TEXT.split("\n\n", 1)[1]])  # with and without -DOCSTART- first
def test_a_utf8_byte_order_mark_is_not_read_as_text(tmp_path, text):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    plain = tmp_path / "plain.txt"
    plain.write_text(text)
    assert [s.columns for s in read_conll(path, COLUMNS)] == [s.columns for s in read_conll(plain, COLUMNS)]
    assert [s.doc_start for s in read_conll(path, COLUMNS)] == [s.doc_start for s in read_conll(plain, COLUMNS)]
