"""SemEval-2010 Task 8 reader, answer writer, dev split, and the release's known quirks."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from seqlab.data import semeval
from seqlab.data.semeval import (
    DEV_SIZE, GLUED_ENTITY_TAGS, LABELS, RARE_LABEL, RARE_LABEL_IDS, UNDIRECTED_TEST_KEY, RelationExample, dev_split,
    parse_marked, parse_raw_lines, read_semeval, with_markers, write_answers,
)
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.relation.score import read_answers

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semeval"


@pytest.fixture(scope="module")
def release(shared_data_root):
    folder = shared_data_root / "semeval2010_task8"
    return folder, {"train": read_semeval(folder / "TRAIN_FILE.TXT"), "test": read_semeval(folder / "TEST_FILE_FULL.TXT")}


@pytest.fixture(scope="module")
def shared_data_root():
    from seqlab.core.paths import data_root

    root = data_root()
    if root is None or not (root / "semeval2010_task8" / "TRAIN_FILE.TXT").is_file():
        pytest.skip("SemEval-2010 Task 8 data not found: set SEQLAB_DATA or place it at ../shared/data")
    return root


def test_reads_the_fixture_records():
    examples = read_semeval(FIXTURE / "train.txt")
    assert len(examples) == 24
    first = examples[0]
    assert first.id == "1" and first.label == "Cause-Effect(e2,e1)" and first.comment == ""
    assert first.tokens[:3] == ("The", "fire", "was") and first.e1_text == "fire" and first.e2_text == "spark"
    assert examples[1].comment == "classic cause."


def test_unlabelled_lines_and_ids():
    examples = list(parse_raw_lines(["The <e1>milk</e1> is in a <e2>glass bottle</e2>.\n", "\n",
                                     '7\t"A <e2>cup</e2> of <e1>tea</e1>."\n']))
    assert [e.id for e in examples] == ["1", "7"]
    assert examples[0].e2 == (5, 6) and examples[0].e2_text == "glass bottle" and examples[0].label is None
    assert examples[1].e1 == (3, 3) and examples[1].e2 == (1, 1)  # e2 may come first


def test_tags_are_token_boundaries_even_when_glued():
    tokens, e1, e2 = parse_marked("The<e1>staff</e1> in the shop of<e2>neurons</e2>.")
    assert tokens == ["The", "staff", "in", "the", "shop", "of", "neurons", "."]
    assert (e1, e2) == ((1, 1), (6, 6))


@pytest.mark.parametrize("text, message", [
    ('1\t"A <e1>cat</e1> sat."\r\nOther\r\n', "expected exactly one <e2> tag"),
    ('1\t"A <e1>cat</e1> <e1>sat</e1> on <e2>it</e2>."\r\n', "expected exactly one <e1> tag, but found 2"),
    ('1\t"A <e1>cat <e2>sat</e1> on</e2> it."\r\n', "must be <e1> … </e1> … <e2> … </e2> in that order"),
    ('1\t"A <e1></e1> on <e2>it</e2>."\r\n', "entity <e1> is empty"),
    ('1\t"A <e1>cat</e1> on <e2>it</e2>."\r\nCause-Effect\r\n', "expected a label (one of"),
    ('1\t"A <e1>cat</e1> on <e2>it</e2>."\r\nOther\r\nOther\r\n', "expected a comment line"),
    ('Other\r\n', "expected a sentence line"),
    ('1\t"A <e1>cat</e1> on <e2>it</e2>."\r\n\r\n1\t"A <e1>b</e1> <e2>c</e2>"\r\n', "sentence id 1 already used on line 1"),
])
def test_reader_errors_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(text.encode())
    with pytest.raises(DataFormatError, match=re.escape(message)) as err:
        read_semeval(path)
    assert str(err.value).startswith(f"{path}:")


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(SeqlabError, match="no such file"):
        read_semeval(tmp_path / "absent.txt")
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(SeqlabError, match="holds no SemEval"):
        read_semeval(tmp_path / "empty.txt")


@pytest.mark.parametrize("sentence, tokens, e1, e2", [
    ("The <e1>big crash</e1> caused an <e2>attack</e2> .",
     "The <e1> big crash </e1> caused an <e2> attack </e2> .", "big crash", "attack"),
    ("<e2>Tea</e2> from <e1>dried ginseng</e1>", "<e2> Tea </e2> from <e1> dried ginseng </e1>", "dried ginseng", "Tea"),
    ("doves<e2>moles</e2><e1>owls</e1>", "doves <e2> moles </e2> <e1> owls </e1>", "owls", "moles"),
])
def test_with_markers_keeps_the_tags_as_tokens_and_moves_the_spans(sentence, tokens, e1, e2):
    words, s1, s2 = parse_marked(sentence)
    marked = with_markers(RelationExample("7", tuple(words), s1, s2, "Other", "c"))
    assert " ".join(marked.tokens) == tokens
    assert (marked.e1_text, marked.e2_text) == (e1, e2)
    assert (marked.id, marked.label, marked.comment) == ("7", "Other", "c")
    assert marked.tokens[marked.e1[0] - 1] == "<e1>" and marked.tokens[marked.e1[1] + 1] == "</e1>"


def test_answer_file_round_trip(tmp_path):
    write_answers(tmp_path / "a.txt", ["2", "1"], ["Other", "Message-Topic(e2,e1)"])
    assert (tmp_path / "a.txt").read_text() == "2\tOther\n1\tMessage-Topic(e2,e1)\n"
    assert read_answers(tmp_path / "a.txt") == {"2": "Other", "1": "Message-Topic(e2,e1)"}
    with pytest.raises(ValueError, match="must match in length"):
        write_answers(tmp_path / "b.txt", ["1"], [])


def test_dev_split_is_fixed_by_its_seed_and_disjoint():
    examples = read_semeval(FIXTURE / "train.txt")
    train, dev = dev_split(examples, 5, seed=1)
    again_train, again_dev = dev_split(examples, 5, seed=1)
    assert [e.id for e in dev] == [e.id for e in again_dev] and len(dev) == 5 and len(train) == 19
    assert not {e.id for e in train} & {e.id for e in dev}
    assert [e.id for e in dev_split(examples, 5, seed=2)[1]] != [e.id for e in dev]
    with pytest.raises(SeqlabError, match="data.dev_size"):
        dev_split(examples, 24)


def test_label_inventory():
    assert len(LABELS) == 19 and LABELS[-1] == "Other" and len(semeval.RELATIONS) == 9


# ---------------------------------------------------------------- quirks of the real release, one test each


def test_quirk_glued_entity_tags(release):
    folder, splits = release
    raw = (folder / "TRAIN_FILE.TXT").read_text() + (folder / "TEST_FILE_FULL.TXT").read_text()
    glued = {line.split("\t")[0] for line in raw.splitlines()
             if re.match(r"\d+\t", line) and re.search(r"\w<e[12]>|</e[12]>\w", line)}
    assert glued == GLUED_ENTITY_TAGS
    by_id = {e.id: e for split in splits.values() for e in split}
    assert by_id["213"].tokens[by_id["213"].e2[0] - 1: by_id["213"].e2[1] + 1] == ("doves", "moles")
    assert by_id["2740"].tokens[:2] == ("The", "staff")


def test_quirk_rare_label(release):
    _, splits = release
    for name, examples in splits.items():
        assert tuple(e.id for e in examples if e.label == RARE_LABEL) == RARE_LABEL_IDS[name]


def test_quirk_undirected_official_test_key(release):
    folder, splits = release
    labels = {line.split("\t")[1] for line in (folder / UNDIRECTED_TEST_KEY).read_text().splitlines()}
    assert labels == set(semeval.RELATIONS) | {"Other"}  # no direction: score against TEST_FILE_KEY_DIRECTED.TXT
    directed = read_answers(folder / "TEST_FILE_KEY_DIRECTED.TXT")
    assert directed == {e.id: e.label for e in splits["test"]}


def test_quirk_crlf_line_endings(release):
    folder, _ = release
    head = (folder / "TRAIN_FILE.TXT").read_bytes()[:300]
    assert semeval.LINE_ENDING.encode() in head and head.count(b"\n") == head.count(b"\r\n")


def test_quirk_dev_size_and_counts(release):
    _, splits = release
    assert (len(splits["train"]), len(splits["test"])) == (8000, 2717)
    train, dev = dev_split(splits["train"], DEV_SIZE, seed=1)
    assert (len(train), len(dev)) == (7200, 800)
