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


def test_marginals_give_each_tokens_marginal_and_the_path_confidence(tagger) -> None:
    """``tag_many(..., marginals=True)``: per token the marginal of its label (the smallest over a span is the span's
    confidence), and the whole path's probability, at most any of them; without it, neither."""
    texts = [TEXT, "Berlin", "The weather was fine."]
    plain = list(tagger.tag_many(texts))
    docs = list(tagger.tag_many(texts, marginals=True, scheme=tagger.labelling.name))
    assert all(s.marginals is None and s.path_confidence is None for d in plain for s in d.sentences)
    for doc in docs:
        for sentence in doc.sentences:
            assert len(sentence.marginals) == len(sentence.tokens)
            assert 0.0 < sentence.path_confidence <= min(sentence.marginals) + 1e-6
            for span in sentence.spans:
                assert span.confidence == pytest.approx(min(sentence.marginals[span.token_start:span.token_end]))
    (word,) = docs[1].sentences
    assert word.path_confidence == pytest.approx(word.marginals[0])  # one token: its label is the whole path
    assert [s.spans for d in docs for s in d.sentences] == [s.spans for d in plain for s in d.sentences]
