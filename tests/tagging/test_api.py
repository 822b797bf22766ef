"""The loaded tagger's temperature and decoder are fixed when it is made: another is another tagger."""
from __future__ import annotations

import pytest

import seqlab
from seqlab.core.errors import SeqlabError

TEXT = "Angela Merkel met Emmanuel Macron in Berlin."


@pytest.fixture(scope="module")
def tagger():
    return seqlab.load("en-ner-conll03", "cpu")


def test_with_temperature_gives_a_new_tagger_and_leaves_this_one(tagger) -> None:
    before, temperature = tagger.tag(TEXT), tagger.temperature
    hotter = tagger.with_temperature(temperature * 2)
    assert hotter is not tagger and hotter.temperature == pytest.approx(temperature * 2)
    assert tagger.temperature == temperature and tagger.tag(TEXT) == before
    after = hotter.tag(TEXT)
    assert [(s.start, s.end, s.label) for s in after.spans] == [(s.start, s.end, s.label) for s in before.spans]
    assert [s.confidence for s in after.spans] != [s.confidence for s in before.spans]
    assert hotter.model is tagger.model  # the weights are shared, not copied


def test_a_bad_temperature_is_one_line(tagger) -> None:
    with pytest.raises(SeqlabError, match="temperature: temperature must be a number from"):
        tagger.with_temperature(0.0)


def test_with_decoder_swaps_the_decoding_only_in_the_new_tagger(tagger) -> None:
    from seqlab.modules.decoders import SoftmaxDecoder

    crf = tagger.predictor.decoder
    with pytest.raises(SeqlabError, match="post-Viterbi decoding applies to softmax taggers"):
        tagger.with_post_viterbi()
    other = tagger.with_decoder(SoftmaxDecoder(len(tagger.vocabs["tags"])))
    assert other.predictor.decoder is not crf and tagger.predictor.decoder is crf and tagger.model.decoder is crf
    assert [s.label for s in other.tag(TEXT).spans] and tagger.with_decoder(crf).tag(TEXT) == tagger.tag(TEXT)
