"""brat standoff: T lines aligned to tokens, discontinuous spans by policy, other lines counted, clear errors,
the writer round-trips, and the NCBI disease corpus reads with its published mention counts."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.brat import read_brat, write_brat
from tests.conftest import FIXTURES

BRAT = FIXTURES / "formats" / "brat"
NCBI = Path(__file__).parents[4] / "shared" / "data" / "ncbi_disease"


def _entities(sentences) -> list[tuple[str, str]]:
    found = []
    for s in sentences:
        words, tags = s["word"], s["ner"]
        for k, tag in enumerate(tags):
            if tag.startswith("B-"):
                end = next((j for j in range(k + 1, len(tags)) if not tags[j].startswith("I-")), len(tags))
                found.append((tag[2:], " ".join(words[k:end])))
    return found


def test_the_fixture_folder_reads_with_its_policies_counted() -> None:
    report = AlignmentReport()
    sentences = list(read_brat(BRAT, report=report))
    assert [s.extra["doc_id"] for s in sentences] == ["d1", "d1", "d2"]
    assert sentences[0].path.endswith("d1.txt") and sentences[1].line == 2  # the second line of d1.txt
    assert _entities(sentences) == [("Gene", "BRCA1"), ("Disease", "breast-cancer"), ("Disease", "ovarian"),
                                    ("Disease", "uterine tumours"), ("Disease", "onset Alzheimer disease")]
    assert sentences[1]["word"][:2] == ("Early-", "onset")  # split where T6 begins
    assert (report.spans_read, report.aligned, report.overlaps_dropped, report.unaligned) == (7, 5, 2, 0)
    assert (report.split_spans, report.split_tokens) == (1, 1)
    assert report.notes == {"discontinuous spans read as fragments": 1, "normalization lines (N) ignored": 1,
                            "relation lines (R) ignored": 1, "attribute lines (A) ignored": 1,
                            "note lines (#) ignored": 1, ".txt files without .ann (not read)": 1}
    assert all("d1.ann:" in p for p in report.problems) and len(report.problems) == 2


def test_a_discontinuous_span_can_be_read_as_its_first_fragment() -> None:
    report = AlignmentReport()
    sentences = list(read_brat(BRAT / "d1.ann", discontinuous="first", report=report))
    assert ("Disease", "ovarian") in _entities(sentences) and ("Disease", "uterine tumours") in _entities(sentences)
    assert report.overlaps_dropped == 1 and report.documents == 1


@pytest.mark.parametrize("policy, expected", [
    ("fragments", [("Disease", "tumours"), ("Disease", "ovarian")]),  # out of order in the .ann: text order
    ("first", [("Disease", "ovarian")]), ("refuse", [])])
def test_a_discontinuous_span_is_never_merged_into_the_range_covering_it(tmp_path: Path, policy: str,
                                                                       expected: list) -> None:
    folder = _folder(tmp_path, "T1\tDisease 18 25;0 7\tovarian tumours\n", "ovarian and other tumours.\n")
    report = AlignmentReport()
    found = _entities(read_brat(folder, discontinuous=policy, report=report))
    assert sorted(found) == sorted(expected) and ("Disease", "ovarian and other tumours") not in found
    assert report.spans_read == report.aligned + report.lost
    if policy == "refuse":
        assert report.unaligned == 1 and "x.ann:1: document x: span T1 Disease is discontinuous" in report.problems[0]
        with pytest.raises(DataFormatError, match=r"x.ann:1: .* discontinuous"):
            list(read_brat(folder, discontinuous=policy, strict=True))


def test_strict_refuses_the_fixture_at_its_first_dropped_span() -> None:
    with pytest.raises(DataFormatError, match=r"d1.ann:4: document d1: span T3 .* dropped"):
        list(read_brat(BRAT, strict=True))


def _folder(tmp_path: Path, ann: str, text: str = "Some disease text.\n") -> Path:
    (tmp_path / "x.txt").write_text(text, encoding="utf-8")
    (tmp_path / "x.ann").write_text(ann, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("ann, message", [
    ("T1\tDisease 5\tdisease\n", r"x.ann:1: expected 'T<n><TAB>TYPE START END"),
    ("T1\tDisease five 12\tdisease\n", r"x.ann:1: expected 'T<n><TAB>TYPE"),
    ("T1 Disease 5 12 disease\n", r"x.ann:1: expected 'T<n><TAB>TYPE"),
    ("\nQ1\tsomething\n", r"x.ann:2: expected a brat annotation"),
])
def test_malformed_ann_lines_name_the_file_and_line(tmp_path: Path, ann: str, message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        list(read_brat(_folder(tmp_path, ann)))


def test_a_text_that_differs_from_the_txt_is_read_by_offsets_and_reported(tmp_path: Path) -> None:
    report = AlignmentReport()
    [sentence] = read_brat(_folder(tmp_path, "T1\tDisease 5 12\tdiseases\n"), report=report)
    assert sentence["ner"][1] == "B-Disease" and report.notes["T lines whose text differs from the .txt"] == 1
    assert report.problems[0].startswith(f"{tmp_path / 'x.ann'}:1: document x: T1 reads 'diseases'")


def test_offsets_count_carriage_returns_as_brat_does(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"Title.\r\nA rare disease.\r\n")
    (tmp_path / "x.ann").write_text("T1\tDisease 15 22\tdisease\n", encoding="utf-8")
    report = AlignmentReport()
    sentences = list(read_brat(tmp_path, report=report))
    assert sentences[1]["ner"] == ("O", "O", "B-Disease", "O") and not report.problems


@pytest.mark.parametrize("setup, message", [
    (lambda p: None, r"no \.ann files"),
    (lambda p: (p / "x.ann").write_text(""), r"x.txt: no such file \(every \.ann needs its \.txt\)"),
    (lambda p: ((p / "x.ann").write_text(""), (p / "x.txt").write_bytes(b"ok\n\xff")), r"x.txt:2: not valid UTF-8"),
])
def test_missing_and_broken_files_are_one_line_errors(tmp_path: Path, setup, message: str) -> None:
    setup(tmp_path)
    with pytest.raises(SeqlabError, match=message):
        list(read_brat(tmp_path))


def test_write_brat_round_trips(tmp_path: Path) -> None:
    sentences = list(read_brat(BRAT))
    assert write_brat(tmp_path / "out", sentences) == 2
    assert (tmp_path / "out" / "d1.txt").read_bytes() == (BRAT / "d1.txt").read_bytes()
    again = list(read_brat(tmp_path / "out"))
    assert [(s.columns, s.extra["offsets"]) for s in again] == [(s.columns, s.extra["offsets"]) for s in sentences]
    assert (tmp_path / "out" / "d1.ann").read_text().splitlines()[1] == "T2\tDisease 22 35\tbreast-cancer"


@pytest.mark.skipif(not NCBI.is_dir(), reason="the NCBI disease corpus is not in ../shared/data/ncbi_disease")
@pytest.mark.parametrize("split, abstracts, mentions", [
    pytest.param("train", 593, 5145, marks=pytest.mark.slow), ("devel", 100, 787), ("test", 100, 960)])
def test_ncbi_disease_reads_with_the_mention_counts_of_its_paper(split: str, abstracts: int, mentions: int) -> None:
    report = AlignmentReport()
    sentences = list(read_brat(NCBI / "standoff" / split, report=report))
    assert (report.documents, report.spans_read, report.aligned, report.lost) == (abstracts, mentions, mentions, 0)
    assert sum(tag.startswith("B-") for s in sentences for tag in s["ner"]) == mentions
