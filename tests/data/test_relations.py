"""Relation JSON lines (OpenNRE's layout): reading text and token lines, errors naming file and line, format
detection, classification input, and SemEval files converted to JSON lines and read back unchanged."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.relations import (
    FORMATS, READERS, check_labels, parse_input_lines, read_relations, read_relations_jsonl, relation_format,
    semeval_to_jsonl,
)
from seqlab.data.semeval import read_semeval

FIXTURES = Path(__file__).parents[1] / "fixtures"
TRAIN = FIXTURES / "relations" / "train.jsonl"
SEMEVAL = FIXTURES / "semeval"


def _fields(examples) -> list[tuple]:
    return [(e.id, e.tokens, e.e1, e.e2, e.label) for e in examples]


def test_reads_text_lines_with_character_offsets_and_token_lines_with_token_indices():
    examples = read_relations_jsonl(TRAIN)
    assert len(examples) == 24 and {e.label for e in examples} == {"works_for", "born_in", "none"}
    first = examples[0]  # "Alice Smith works for Acme Corp in Boston.", h [0, 11), t [22, 31)
    assert first.id == "1" and first.tokens[-2:] == ("Boston", ".")
    assert (first.e1_text, first.e2_text, first.label) == ("Alice Smith", "Acme Corp", "works_for")
    token_line = examples[3]  # {"token": ["David", "Brown", ...], "h": {"pos": [0, 2]}, "t": {"pos": [6, 7]}}
    assert token_line.e1 == (0, 1) and token_line.e2 == (6, 6) and token_line.e2_text == "Berlin"
    hired = examples[17]  # the head may come after the tail
    assert hired.e1_text == "Rosa Underwood" and hired.e2_text == "Acme Corp" and hired.e1[0] > hired.e2[0]


def test_entity_edges_are_token_boundaries_and_ids_are_read():
    path_text = '{"id": "s7", "text": "Smith-Jones worked at ACME.", "h": {"pos": [6, 11]}, "t": {"pos": [22, 26]}}'
    [example] = parse_input_lines([path_text])
    assert example.id == "s7" and example.e1_text == "Jones" and example.e2_text == "ACME"
    assert example.tokens == ("Smith-", "Jones", "worked", "at", "ACME", ".")  # the whole text: one "Smith-Jones"
    assert example.label is None


@pytest.mark.parametrize("line, message", [
    ('{"h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": "r"}', "expected exactly one of 'text'"),
    ('{"text": "a b", "token": ["a", "b"], "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}}', "got 'text' and 'token'"),
    ('{"text": "a b", "t": {"pos": [2, 3]}, "relation": "r"}', "missing key 'h' (the head entity"),
    ('{"text": "a b", "h": {"pos": [0, 1]}, "relation": "r"}', "missing key 't' (the tail entity"),
    ('{"text": "a b", "h": {"name": "a"}, "t": {"pos": [2, 3]}}', "'h': expected an object with 'pos'"),
    ('{"text": "a b", "h": {"pos": [0]}, "t": {"pos": [2, 3]}}', "h.pos: expected [start, end], two integers"),
    ('{"text": "a b", "h": {"pos": [true, 1]}, "t": {"pos": [2, 3]}}', "h.pos: expected [start, end], two integers"),
    ('{"text": "a b", "h": {"pos": [0, 1]}, "t": {"pos": [2, 4]}}',
     "t.pos [2, 4]: expected 0 <= start < end <= 3 (3 characters in 'text')"),
    ('{"token": ["a", "b"], "h": {"pos": [0, 1]}, "t": {"pos": [1, 3]}}',
     "t.pos [1, 3]: expected 0 <= start < end <= 2 (2 tokens in 'token')"),
    ('{"tokens": ["a", "b"], "h": {"pos": [1, 1]}, "t": {"pos": [0, 1]}}', "h.pos [1, 1]: expected 0 <= start < end"),
    ('{"text": "a b c", "h": {"pos": [0, 3]}, "t": {"pos": [2, 5]}}', "h.pos [0, 3] and t.pos [2, 5] overlap"),
    ('{"token": ["a", "b"], "h": {"pos": [0, 2]}, "t": {"pos": [1, 2]}}', "h.pos [0, 2] and t.pos [1, 2] overlap"),
    ('{"text": "a  b", "h": {"pos": [1, 2]}, "t": {"pos": [3, 4]}}', "h.pos [1, 2] covers no token, only ' '"),
    ('{"text": " ", "h": {"pos": [0, 1]}, "t": {"pos": [0, 1]}}', "'text': expected a non-empty string"),
    ('{"token": ["a", ""], "h": {"pos": [0, 1]}, "t": {"pos": [1, 2]}}', "'token': expected a non-empty list"),
    ('{"token": "a b", "h": {"pos": [0, 1]}, "t": {"pos": [1, 2]}}', "'token': expected a non-empty list"),
    ('{"text": "a b", "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": 3}', "'relation': expected a string"),
    ('{"text": "a b", "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": "x\\ty"}', "without tabs"),
    ('{"text": "a b", "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "id": 1.5}', "'id': expected a string or an integer"),
    ('[1, 2]', "expected a JSON object per line, got list"),
    ('{"text": "a b",', "not JSON"),
])
def test_errors_name_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    good = '{"text": "x y", "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": "r"}'
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=re.escape(message)) as err:
        read_relations_jsonl(path)
    assert str(err.value).startswith(f"{path}:3: ")


def test_ids_must_be_unique_and_a_file_must_hold_examples(tmp_path):
    line = '{"id": 4, "text": "x y", "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": "r"}\n'
    (tmp_path / "twice.jsonl").write_text(line + line)
    with pytest.raises(DataFormatError, match=r"twice.jsonl:2: id '4' already used on line 1"):
        read_relations_jsonl(tmp_path / "twice.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(SeqlabError, match="holds no relation examples"):
        read_relations_jsonl(tmp_path / "empty.jsonl")
    with pytest.raises(SeqlabError, match="no such file"):
        read_relations_jsonl(tmp_path / "absent.jsonl")


def test_the_format_is_chosen_by_extension_then_by_the_first_character(tmp_path):
    assert set(FORMATS) == {"auto", *READERS}
    opennre = tmp_path / "semeval_train.txt"  # OpenNRE names its JSON lines .txt
    opennre.write_text("\ufeff\n" + TRAIN.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert relation_format(opennre) == "jsonl" and len(read_relations(opennre)) == 1
    assert relation_format(SEMEVAL / "train.txt") == "semeval" and relation_format(TRAIN) == "jsonl"
    assert relation_format(tmp_path / "absent.txt") == "semeval"  # whose reader then says it is missing
    assert relation_format(TRAIN, "semeval") == "semeval"


def test_input_lines_mix_json_objects_and_marked_sentences():
    lines = ['{"text": "Ann works for Acme.", "h": {"pos": [0, 3]}, "t": {"pos": [14, 18]}}\n', "\n",
             '9\t"A <e2>cup</e2> of <e1>tea</e1>."\n', "The <e1>milk</e1> is in a <e2>bottle</e2>.\n"]
    examples = list(parse_input_lines(lines, "in.txt"))
    assert [e.id for e in examples] == ["1", "9", "4"]
    assert [(e.e1_text, e.e2_text) for e in examples] == [("Ann", "Acme"), ("tea", "cup"), ("milk", "bottle")]
    with pytest.raises(DataFormatError, match=r"^in.txt:2: not JSON"):
        list(parse_input_lines(["The <e1>a</e1> b <e2>c</e2>", "{oops"], "in.txt"))


def test_labels_outside_the_training_labels_are_named():
    examples = read_relations_jsonl(TRAIN)
    check_labels(examples, ["born_in", "none", "works_for"], "x")
    with pytest.raises(SeqlabError, match=r"^data.test: t.jsonl: example 1 is labelled 'works_for', which is not"):
        check_labels(examples, ["born_in", "none"], "data.test: t.jsonl")


@pytest.mark.parametrize("tokens", [False, True], ids=["text", "token"])
@pytest.mark.parametrize("name", ["train.txt", "test.txt", "test_sentences.txt"])
def test_semeval_converts_to_json_lines_that_read_back_as_the_same_examples(tmp_path, name, tokens):
    target = tmp_path / "converted.jsonl"
    written = semeval_to_jsonl(SEMEVAL / name, target, tokens=tokens)
    original = read_semeval(SEMEVAL / name)
    assert written == len(original)
    assert _fields(read_relations(target)) == _fields(original)  # ids, tokens, entity spans, labels
    first = json.loads(target.read_text(encoding="utf-8").splitlines()[0])
    assert first["id"] == original[0].id and first["h"]["name"] == original[0].e1_text
    assert ("token" in first) is tokens and ("relation" in first) is (original[0].label is not None)
    if not tokens:
        assert "<e1>" not in first["text"] and first["text"][slice(*first["t"]["pos"])] == original[0].e2_text


def test_seqlab_convert_writes_relation_json_lines_from_semeval(tmp_path, capsys):
    from seqlab.cli import main

    target = tmp_path / "train.jsonl"
    assert main(["convert", str(SEMEVAL / "train.txt"), str(target), "--from", "semeval", "--to", "relations"]) == 0
    assert capsys.readouterr().out == f"{SEMEVAL / 'train.txt'} -> {target}: 24 relation examples written\n"
    assert _fields(read_relations(target)) == _fields(read_semeval(SEMEVAL / "train.txt"))
    wrong = ["convert", str(SEMEVAL / "train.txt"), str(tmp_path / "x.txt"), "--from", "semeval", "--to", "conll"]
    assert main(wrong) == 2
    assert "relation data converts from semeval (SemEval-2010 Task 8 files) to relations" in capsys.readouterr().err
