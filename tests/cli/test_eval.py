"""``seqlab eval`` (seqlab/cli/tag.py) with the installed English NER model: gold files in other formats and with
other type names (--format, --label-map), empty and odd tokens written back exactly as read."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.data.conll import split_fields

WNUT = "Obama\tB-person\nvisited\tO\nGoogle\tB-corporation\n.\tO\n\nParis\tB-location\nis\tO\nnice\tO\n"


@pytest.fixture
def wnut(tmp_path: Path) -> Path:
    path = tmp_path / "wnut.txt"
    path.write_text(WNUT, encoding="utf-8")
    return path


def test_types_that_share_none_with_the_model_are_one_line_naming_label_map(wnut, tmp_path, capsys) -> None:
    assert main(["eval", "en-ner-conll03", str(wnut), "--output", str(tmp_path / "out.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "share none with the model's ['LOC', 'MISC', 'ORG', 'PER']" in err and "--label-map" in err
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("how", ["pairs", "file"])
def test_label_map_pairs_or_a_file(wnut, tmp_path, capsys, how) -> None:
    pairs = "person=PER,location=LOC,corporation=ORG"
    if how == "file":
        (tmp_path / "map.yaml").write_text("person: PER\nlocation: LOC\ncorporation: ORG\n", encoding="utf-8")
        pairs = str(tmp_path / "map.yaml")
    assert main(["eval", "en-ner-conll03", str(wnut), "--label-map", pairs, "--output", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "processed 7 tokens with 3 phrases" in out
    gold = [split_fields(line)[1] for line in (tmp_path / "o").read_text().splitlines() if line]
    assert gold == ["B-PER", "O", "B-ORG", "O", "B-LOC", "O", "O"]  # the gold file's IOB2 kept


def test_a_brat_folder_by_detection_and_jsonl_by_name(tmp_path, capsys) -> None:
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_text("Angela Merkel visited Paris.\n", encoding="utf-8")
    (folder / "a.ann").write_text("T1\tPER 0 13\tAngela Merkel\nT2\tLOC 22 27\tParis\n", encoding="utf-8")
    assert main(["eval", "en-ner-conll03", str(folder), "--output", str(tmp_path / "o")]) == 0
    assert "processed 5 tokens with 2 phrases" in capsys.readouterr().out
    spans = tmp_path / "gold.data"
    spans.write_text('{"text": "Angela Merkel visited Paris.", "spans": [[0, 13, "PER"]]}\n', encoding="utf-8")
    assert main(["eval", "en-ner-conll03", str(spans), "--format", "jsonl", "--output", str(tmp_path / "o")]) == 0
    assert "with 1 phrases" in capsys.readouterr().out


def test_format_and_label_map_refused_for_a_missing_file(tmp_path, capsys) -> None:
    assert main(["eval", "en-ner-conll03", str(tmp_path / "none.txt"), "--label-map", "a=B"]) == 2
    assert "none.txt" in capsys.readouterr().err


ODD = ("EU\tB-ORG\n\tO\nrejects\tO\n \tO\nGerman \tB-MISC\n\u00a0\tO\ncall\ue000\tO\n\n"
       "Peter\tB-PER\nBlackburn\tI-PER\n")


def test_empty_and_odd_tokens_are_read_and_written_back_exactly(tmp_path, capsys) -> None:
    """An empty token (a line opening with TAB), a space, a token with a trailing space, a no-break space and a
    private-use character: eval reads them, and its output's tokens are the input's, TAB-separated, which
    ``seqlab score conll`` reads to the same report."""
    gold = tmp_path / "odd.txt"
    gold.write_text(ODD, encoding="utf-8")
    out = tmp_path / "odd.pred"
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(out)]) == 0
    report = capsys.readouterr().out
    assert "processed 9 tokens with 3 phrases" in report
    lines = out.read_text(encoding="utf-8").split("\n")
    assert [line.split("\t")[0] for line in lines if line] == [
        line.split("\t")[0] for line in ODD.split("\n") if line]
    assert [line.split("\t")[1] for line in lines if line] == [line.split("\t")[1] for line in ODD.split("\n") if line]
    assert main(["score", "conll", str(out)]) == 0
    assert capsys.readouterr().out == report.rsplit("predictions written to", 1)[0]


def test_plain_tokens_are_still_written_space_separated(tmp_path, capsys) -> None:
    gold = tmp_path / "plain.txt"
    gold.write_text("Paris\tB-LOC\nis\tO\n", encoding="utf-8")
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o").read_text(encoding="utf-8").splitlines()[0].split(" ")[:2] == ["Paris", "B-LOC"]


def test_a_conllu_gold_file_for_a_conll_model_is_read_by_its_ner_misc(tmp_path, capsys) -> None:
    """The CoNLL-U that ``seqlab tag --format conllu`` writes is scored as it stands (NER= in MISC), and after
    ``seqlab convert`` to CoNLL."""
    text = tmp_path / "news.txt"
    text.write_text("Angela Merkel visited Paris.\n", encoding="utf-8")
    assert main(["tag", str(text), "--format", "conllu"]) == 0
    (tmp_path / "news.conllu").write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["eval", "en-ner-conll03", str(tmp_path / "news.conllu"), "--output", str(tmp_path / "u")]) == 0
    assert "with 2 phrases; found: 2 phrases; correct: 2." in capsys.readouterr().out
    assert main(["convert", str(tmp_path / "news.conllu"), str(tmp_path / "news.conll"), "--to", "conll"]) == 0
    capsys.readouterr()
    assert main(["eval", "en-ner-conll03", str(tmp_path / "news.conll"), "--output", str(tmp_path / "o")]) == 0
    assert "with 2 phrases; found: 2 phrases; correct: 2." in capsys.readouterr().out


def test_calibration_decodes_the_gold_file_once(tmp_path, capsys, monkeypatch) -> None:
    """``seqlab eval --calibration`` scores and measures the confidences from one run of the encoder, and its
    report is the one plain eval prints."""
    from seqlab.tagging.predict import TorchEmissions

    gold = tmp_path / "gold.txt"
    gold.write_text("Angela\tB-PER\nMerkel\tI-PER\nvisited\tO\nParis\tB-LOC\n.\tO\n", encoding="utf-8")
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(tmp_path / "plain.txt")]) == 0
    plain = capsys.readouterr().out
    runs: list[int] = []
    scorer = TorchEmissions.scorer
    monkeypatch.setattr(TorchEmissions, "scorer", lambda self, data: runs.append(len(data)) or scorer(self, data))
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(tmp_path / "cal.txt"), "--calibration"]) == 0
    out = capsys.readouterr().out
    assert runs == [1] and out.startswith(plain.rsplit("predictions written to", 1)[0]) and "ECE" in out
    assert (tmp_path / "cal.txt").read_text() == (tmp_path / "plain.txt").read_text()
