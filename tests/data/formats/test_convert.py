"""Converting between formats: spans round-trip between span JSONL, brat and CoNLL; CoNLL-U and HF read; label
maps and schemes applied; token labels refused where spans are written."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.brat import read_brat
from seqlab.data.formats.convert import WRITE_FORMATS, convert, read_any
from seqlab.data.formats.jsonl import read_span_jsonl
from seqlab.data.schemes import spans

FORMATS = Path(__file__).parents[2] / "fixtures" / "formats"
BRAT = FORMATS / "brat"


def spans_of(path: Path, fmt: str) -> list[tuple[str, str]]:
    """(label, covered tokens) of every span, in order: what every format must carry over."""
    return [(kind, " ".join(s["word"][a:b])) for s in read_any(path, fmt, AlignmentReport())
            for kind, a, b in spans(s["ner"])]


def test_brat_to_jsonl_to_brat_keeps_text_offsets_and_ids(tmp_path: Path) -> None:
    first = convert(BRAT, tmp_path / "a.jsonl", target_format="jsonl")
    assert (first.source, first.sentences, first.spans, first.written) == ("brat", 3, 5, 2)  # T4 read as its two fragments, one kept
    assert first.report.overlaps_dropped == 2  # the fixture's overlapping spans, reported
    convert(tmp_path / "a.jsonl", tmp_path / "brat", target_format="brat")
    assert (tmp_path / "brat" / "d1.txt").read_bytes() == (BRAT / "d1.txt").read_bytes()
    again = [(s.columns, s.extra["offsets"]) for s in read_brat(tmp_path / "brat")]
    assert again == [(s.columns, s.extra["offsets"]) for s in read_brat(BRAT)]


def test_spans_round_trip_through_conll(tmp_path: Path) -> None:
    expected = spans_of(BRAT, "brat")
    convert(BRAT, tmp_path / "a.conll", target_format="conll")
    assert spans_of(tmp_path / "a.conll", "conll") == expected
    assert (tmp_path / "a.conll").read_text().count("-DOCSTART-") == 2  # one line per document
    convert(tmp_path / "a.conll", tmp_path / "b.jsonl", target_format="jsonl")
    objects = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert len(objects) == 2  # the -DOCSTART- groups are documents again
    assert [(s["label"], s["text"]) for o in objects for s in o["spans"]] == expected
    assert all(o["text"][s["start"]:s["end"]] == s["text"] for o in objects for s in o["spans"])
    convert(tmp_path / "b.jsonl", tmp_path / "brat", target_format="brat")
    assert spans_of(tmp_path / "brat", "brat") == expected
    convert(tmp_path / "brat", tmp_path / "c.conll", target_format="conll")
    assert (tmp_path / "c.conll").read_text() == (tmp_path / "a.conll").read_text()


def test_conll_without_docstart_is_a_document_per_sentence(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("Paris\tB-LOC\nis\tO\n\nBob\tB-PER\n", encoding="utf-8")
    assert convert(tmp_path / "x.txt", tmp_path / "x.jsonl", target_format="jsonl").written == 2
    assert [json.loads(line)["text"] for line in (tmp_path / "x.jsonl").read_text().splitlines()] == ["Paris is", "Bob"]


def test_label_map_and_scheme(tmp_path: Path) -> None:
    result = convert(BRAT, tmp_path / "a.conll", target_format="conll", label_map={"Gene": None, "Disease": "Dis"},
                     scheme="bilou")
    assert result.spans == 4  # the discontinuous T4 gives its kept fragment too
    tags = [line.split(" ")[1] for line in (tmp_path / "a.conll").read_text().splitlines()
            if line and not line.startswith("-DOCSTART-")]
    assert set(tags) == {"O", "U-Dis", "B-Dis", "I-Dis", "L-Dis"}


def test_hf_round_trip(tmp_path: Path) -> None:
    convert(FORMATS / "hf_ints.jsonl", tmp_path / "a.conll", target_format="conll")
    convert(tmp_path / "a.conll", tmp_path / "b.jsonl", source_format="conll", target_format="hf")
    assert spans_of(tmp_path / "b.jsonl", "hf") == spans_of(FORMATS / "hf_ints.jsonl", "hf")


CONLLU = ("# sent_id = 1\n# text = Bob runs.\n1\tBob\t_\tPROPN\t_\t_\t_\t_\t_\tNER=B-PER\n"
          "2\truns\t_\tVERB\t_\t_\t_\t_\t_\tNER=O|SpaceAfter=No\n3\t.\t_\tPUNCT\t_\t_\t_\t_\t_\tNER=O\n\n")


def test_conllu_reads_ner_from_misc_else_upos(tmp_path: Path) -> None:
    (tmp_path / "a.conllu").write_text(CONLLU, encoding="utf-8")
    convert(tmp_path / "a.conllu", tmp_path / "a.jsonl", target_format="jsonl")
    (obj,) = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert obj["text"] == "Bob runs." and obj["spans"] == [{"start": 0, "end": 3, "label": "PER", "text": "Bob"}]
    convert(tmp_path / "a.conllu", tmp_path / "pos.txt", target_format="conll", tag_column="upos")
    assert (tmp_path / "pos.txt").read_text() == "Bob PROPN\nruns VERB\n. PUNCT\n\n"
    with pytest.raises(SeqlabError, match="not span tags") as err:
        convert(tmp_path / "a.conllu", tmp_path / "b", target_format="brat", tag_column="upos")
    assert "a.conllu:3" in str(err.value)


def test_odd_conll_tokens_stay_one_field(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("\tO\nNew York\tB-LOC\n", encoding="utf-8")
    convert(tmp_path / "x.txt", tmp_path / "y.txt", target_format="conll")
    assert (tmp_path / "y.txt").read_text() == "\tO\nNew York\tB-LOC\n\n"


def test_reading_with_a_report_leaves_logging_to_the_caller(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="seqlab"):
        list(read_span_jsonl(FORMATS / "spans.jsonl", report=AlignmentReport()))
        assert not caplog.records
        list(read_span_jsonl(FORMATS / "spans.jsonl"))
        assert caplog.records


#: Where each writer writes (brat: a folder).
SUFFIX = {"conll": "txt", "conllu": "conllu", "brat": "ann.d", "jsonl": "jsonl", "hf": "json"}
ROUND_TRIP = ("-DOCSTART- O\n\nEU B-ORG\nrejects O\nGerman B-MISC\ncall O\n. O\n\nPeter B-PER\nBlackburn I-PER\n\n"
              "-DOCSTART- O\n\nBRUSSELS B-LOC\n1996-08-22 O\n")


def sentences_of(path: Path) -> list[tuple[tuple[str, ...], list[tuple[str, int, int]]]]:
    """Each sentence's tokens and spans, read with the format detected."""
    return [(s["word"], spans(s["ner"])) for s in read_any(path, "auto" if path.suffix != ".txt" else "conll",
                                                            AlignmentReport())]


@pytest.mark.parametrize("first", WRITE_FORMATS)
@pytest.mark.parametrize("second", WRITE_FORMATS)
def test_every_pair_of_formats_keeps_tokens_sentences_and_spans(tmp_path: Path, first: str, second: str) -> None:
    source = tmp_path / "source.txt"
    source.write_text(ROUND_TRIP, encoding="utf-8")
    expected = sentences_of(source)
    assert len(expected) == 3
    a, b = tmp_path / f"a.{SUFFIX[first]}", tmp_path / f"b.{SUFFIX[second]}"
    convert(source, a, target_format=first)
    convert(a, b, target_format=second)
    convert(b, tmp_path / "back.txt", target_format="conll")
    assert sentences_of(a) == sentences_of(b) == sentences_of(tmp_path / "back.txt") == expected


def test_span_jsonl_named_as_such_keeps_the_sentences_it_carries(tmp_path: Path) -> None:
    source = tmp_path / "source.txt"
    source.write_text(ROUND_TRIP, encoding="utf-8")
    convert(source, tmp_path / "a.jsonl", target_format="jsonl")
    convert(tmp_path / "a.jsonl", tmp_path / "back.txt", source_format="jsonl", target_format="conll")
    assert sentences_of(tmp_path / "back.txt") == sentences_of(source)
    assert (tmp_path / "back.txt").read_text(encoding="utf-8") == ROUND_TRIP + "\n"


@pytest.mark.slow
def test_conll2003_dev_through_jsonl_and_back_keeps_every_sentence(shared_data: Path, tmp_path: Path) -> None:
    dev = shared_data / "conll2003" / "dev.txt"
    convert(dev, tmp_path / "dev.jsonl", target_format="jsonl")
    back = convert(tmp_path / "dev.jsonl", tmp_path / "dev.txt", target_format="conll")
    assert back.sentences == 3250 and sentences_of(tmp_path / "dev.txt") == sentences_of(dev)
