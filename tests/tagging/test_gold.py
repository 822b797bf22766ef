"""Gold files for a trained tagger: any format, the model's label map and --label-map, types checked to meet."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.data.labelling import labelling
from seqlab.data.schemes import spans
from seqlab.tagging.config import DataConfig
from seqlab.tagging.gold import check_shared_types, nearest_types, read_gold

FIXTURES = Path(__file__).parents[1] / "fixtures"
BRAT = FIXTURES / "formats" / "brat"
CONLL03_LIKE = DataConfig(train="conll2003/train.txt", dev="conll2003/dev.txt")  # the installed model's layout


def types(split) -> set[str]:
    return {kind for tags in split.file_tags for kind, _, _ in spans(tags)}


def test_a_model_trained_on_brat_reads_a_conll_gold_file_as_conll(tmp_path: Path) -> None:
    model = DataConfig(train=str(BRAT), dev=str(BRAT), format="brat", label_map={"Gene": "Protein"})
    gold = tmp_path / "gold.tsv"
    gold.write_text("BRCA1\tB-Gene\nis\tO\n", encoding="utf-8")
    split = read_gold(model, gold)
    assert split.tokens == [["BRCA1", "is"]] and types(split) == {"Protein"}  # the model's own map applies


def test_a_brat_folder_with_the_model_map_and_one_on_top() -> None:
    model = DataConfig(train=str(BRAT), dev=str(BRAT), label_map={"Gene": "Protein"})
    split = read_gold(model, BRAT, label_map={"Disease": None})
    assert types(split) == {"Protein"}
    split = read_gold(model, BRAT, label_map={"Gene": "G"})  # --label-map wins over the model's entry
    assert types(split) == {"G", "Disease"}


def test_format_can_be_named(tmp_path: Path) -> None:
    gold = tmp_path / "gold.data"  # no telling extension
    gold.write_text('{"text": "Paris is big.", "spans": [[0, 5, "city"]]}\n', encoding="utf-8")
    split = read_gold(CONLL03_LIKE, gold, fmt="jsonl", label_map={"city": "LOC"})
    assert split.tokens == [["Paris", "is", "big", "."]] and split.file_tags == [["B-LOC", "O", "O", "O"]]


def test_a_missing_gold_path_is_one_line() -> None:
    with pytest.raises(SeqlabError, match="no such file or folder"):
        read_gold(CONLL03_LIKE, "nowhere/gold.txt")


def test_disjoint_types_name_the_label_map(tmp_path: Path) -> None:
    gold = tmp_path / "wnut.txt"
    gold.write_text("Obama\tB-person\nat\tO\nGoogle\tB-corporation\n", encoding="utf-8")
    split = read_gold(CONLL03_LIKE, gold)
    with pytest.raises(SeqlabError) as err:
        check_shared_types(split, ["LOC", "MISC", "ORG", "PER"], CONLL03_LIKE.labelling)
    message = str(err.value)
    assert "\n" not in message and "share none with the model's" in message
    assert "--label-map person=PER" in message and "'corporation'" in message
    mapped = read_gold(CONLL03_LIKE, gold, label_map={"person": "PER", "corporation": "ORG"})
    check_shared_types(mapped, ["LOC", "MISC", "ORG", "PER"], CONLL03_LIKE.labelling)  # no error once they meet
    check_shared_types(split, ["NOUN"], labelling("token"))  # token labels: nothing to check


def test_nearest_types_pair_abbreviations() -> None:
    assert nearest_types({"person", "location", "corporation"}, {"PER", "LOC", "ORG"}) == {
        "person": "PER", "location": "LOC"}
