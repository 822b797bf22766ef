"""benchmarks/ner_domains.py on tiny gold files: the type maps, reading a set through seqlab eval's label-map path,
and the PER/LOC/ORG-only scoring (a predicted MISC span does not count, nor does a gold span of a dropped type)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from benchmarks.ner_domains import DOMAINS, KEPT, domain_path, read_domain, run_domain, scores, type_map
from seqlab.data.config import DataConfig
from seqlab.data.metrics import score
from seqlab.data.schemes import spans

ROOT = Path(__file__).resolve().parents[2]
FEWNERD, WNUT17 = (next(d for d in DOMAINS if d.name == name) for name in ("fewnerd", "wnut17"))
# as the installed CoNLL-2003 models' data config: four columns, IOB1 files (the two-column files are fitted)
CONFIG = DataConfig(train="conll2003/train.txt", dev="conll2003/dev.txt", columns=("word", "pos", "chunk", "ner"))

WNUT_GOLD = """\
Ann\tB-person
Lee\tI-person
flew\tO
to\tO
Oslo\tB-location
on\tO
Delta\tB-corporation
.\tO

watch\tO
Star\tB-creative-work
Wars\tI-creative-work
with\tO
Metallica\tB-group
fans\tO
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_type_maps_send_coarse_types_to_conll_and_drop_the_rest():
    fewnerd = type_map(["person_artist/author", "location_GPE", "organization_sportsteam", "building_airport",
                        "art_film", "product_software", "event_disaster", "other_language"], FEWNERD.coarse)
    assert fewnerd == {"art_film": None, "building_airport": None, "event_disaster": None, "location_GPE": "LOC",
                       "organization_sportsteam": "ORG", "other_language": None, "person_artist/author": "PER",
                       "product_software": None}
    assert type_map(["person", "location", "corporation", "group", "product", "creative-work"], WNUT17.coarse) == {
        "corporation": "ORG", "creative-work": None, "group": "ORG", "location": "LOC", "person": "PER",
        "product": None}


def test_a_set_is_read_with_its_map_and_counted_by_file_type(tmp_path):
    split, info = read_domain(CONFIG, write(tmp_path, "emerging.test.annotated", WNUT_GOLD), WNUT17.coarse)
    assert split.tokens[1] == ["watch", "Star", "Wars", "with", "Metallica", "fans"]
    assert split.file_tags == [["B-PER", "I-PER", "O", "O", "B-LOC", "O", "B-ORG", "O"],
                               ["O", "O", "O", "O", "B-ORG", "O"]]
    assert info["gold_entities_by_file_type"] == {"corporation": 1, "creative-work": 1, "group": 1, "location": 1,
                                                  "person": 1}
    assert info["label_map"]["creative-work"] is None and info["label_map"]["group"] == "ORG"
    first, _ = read_domain(CONFIG, tmp_path / "emerging.test.annotated", WNUT17.coarse, limit=1)
    assert len(first.tokens) == 1


def test_adjacent_fine_types_of_one_coarse_type_stay_two_entities(tmp_path):
    gold = "Ann\tB-person_politician\nBo\tI-person_soldier\nsaid\tO\n"  # the conversion's missing B-
    split, _ = read_domain(CONFIG, write(tmp_path, "test.txt", gold), FEWNERD.coarse)
    assert spans(split.file_tags[0]) == [("PER", 0, 1), ("PER", 1, 2)]  # written in the file's scheme: I-PER B-PER


def test_only_per_loc_org_are_scored_on_a_mapped_set(tmp_path):
    split, _ = read_domain(CONFIG, write(tmp_path, "emerging.test.annotated", WNUT_GOLD), WNUT17.coarse)
    pred = [["B-PER", "I-PER", "O", "O", "B-LOC", "O", "B-MISC", "O"],  # Delta called MISC: a miss, not a false one
            ["O", "B-MISC", "I-MISC", "O", "B-ORG", "B-PER"]]  # MISC on the dropped creative work: ignored
    result = scores(score(split.file_tags, pred), KEPT)
    assert (result["gold_entities"], result["found"], result["correct"]) == (4, 4, 3)  # "fans" as PER is wrong
    assert (result["precision"], result["recall"], result["f1"]) == (75.0, 75.0, 75.0)
    assert result["per_type"]["ORG"] == {"f1": 66.67, "precision": 100.0, "recall": 50.0, "gold": 2, "found": 1,
                                         "correct": 1}
    assert result["per_type"]["PER"]["precision"] == 50.0 and result["per_type"]["LOC"]["f1"] == 100.0
    assert result["ignored_found"] == {"MISC": 2}
    every = scores(score(split.file_tags, pred))  # the usual figure, all types: the MISC spans count against it
    assert every["found"] == 6 and every["f1"] == round(2 * 3 / (4 + 6) * 100, 2)


def test_run_domain_scores_what_the_model_evaluates_and_times_it(tmp_path):
    split, _ = read_domain(CONFIG, write(tmp_path, "emerging.test.annotated", WNUT_GOLD), WNUT17.coarse)
    pred = [["B-PER", "I-PER", "O", "O", "B-LOC", "O", "B-ORG", "O"], ["O", "B-MISC", "I-MISC", "O", "O", "O"]]
    labelling = CONFIG.labelling
    model = SimpleNamespace(types=["LOC", "MISC", "ORG", "PER"], labelling=labelling,
                            evaluate=lambda data, **options: labelling.score(data.file_tags, pred))
    result = run_domain(model, split, KEPT)
    assert (result["sentences"], result["tokens"], result["gold_entities"]) == (2, 14, 4)
    assert (result["precision"], result["recall"], result["all_types_f1"]) == (100.0, 75.0, 75.0)
    assert result["tagging_wall_seconds"] >= 0 and result["tagging_cpu_seconds"] >= 0


def test_wnut17_is_skipped_with_a_reason_and_a_missing_data_file_is_one_line(tmp_path):
    assert domain_path(WNUT17, None)[0] is None and "--wnut17 DIR" in domain_path(WNUT17, None)[1]
    assert domain_path(WNUT17, str(tmp_path)) == (None, f"{tmp_path / 'emerging.test.annotated'}: no such file")
    env = dict(os.environ, SEQLAB_DATA=str(tmp_path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "benchmarks.ner_domains", "--model", "en-ner-conll03"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"ner_domains: {tmp_path / 'conll2003' / 'test.txt'}: no such file"
