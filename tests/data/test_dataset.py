"""Reading the real CoNLL-2003 files (skipped when the shared data is absent)."""
import pytest

from seqlab.tagging.config import DataConfig
from seqlab.data.dataset import read_split
from seqlab.data.schemes import convert, spans

CONLL03 = DataConfig(train="conll2003/train.txt", dev="conll2003/dev.txt", test="conll2003/test.txt")

# Published CoNLL-2003 statistics (Tjong Kim Sang & De Meulder 2003), -DOCSTART- lines excluded.
COUNTS = {"train": (14041, 203621, 23499), "dev": (3250, 51362, 5942), "test": (3453, 46435, 5648)}
# Quirk of the original release: two train tokens are B-MISC directly after O ("the Atlanta Games",
# "Urdu-speaking"), which canonical IOB1 writes as I-MISC. Spans are the same either way.
IMPROPER_B_AFTER_O = {"train": 2, "dev": 0, "test": 0}


@pytest.mark.parametrize("split", sorted(COUNTS))
def test_conll03_counts_and_lossless_bilou(shared_data, monkeypatch, split):
    monkeypatch.setenv("SEQLAB_DATA", str(shared_data))
    data = read_split(CONLL03, split)
    sentences, tokens, entities = COUNTS[split]
    assert len(data.tokens) == sentences and data.num_tokens == tokens
    assert sum(len(spans(t)) for t in data.file_tags) == entities
    rewritten = 0
    for file_tags, bilou in zip(data.file_tags, data.tags):  # the file's IOB1 comes back exactly
        assert spans(bilou) == spans(file_tags)
        back = convert(bilou, "iob1")
        for i, (a, b) in enumerate(zip(back, file_tags)):
            if a != b:
                assert b.startswith("B-") and (i == 0 or file_tags[i - 1] == "O") and a == "I" + b[1:]
                rewritten += 1
    assert rewritten == IMPROPER_B_AFTER_O[split]
