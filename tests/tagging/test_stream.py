"""Pooled tagging of a stream of texts: documents in input order, sentences decoded a pool at a time."""
from __future__ import annotations

from features.tokenize import SentenceTokens, sentence_tokens
from seqlab.tagging.document import Sentence
from seqlab.tagging.stream import cap_length, pooled


def _texts(texts: list[str]):
    return [(text, sentence_tokens(text) if text.strip() else []) for text in texts]


def _upper(calls: list[int]):
    def tag_pool(items: list[tuple[str, SentenceTokens]]) -> list[Sentence]:
        calls.append(len(items))
        return [Sentence(list(tokens.words), list(zip(tokens.starts, tokens.ends)),
                         [w.upper() for w in tokens.words], []) for _, tokens in items]
    return tag_pool


def test_documents_come_out_in_input_order_whatever_the_pool() -> None:
    texts = ["Paris is nice. So is Rome.", "", "EU rejects German call."] * 5
    for pool in (1, 2, 32):
        calls: list[int] = []
        docs = list(pooled(_texts(texts), _upper(calls), batch_size=2, pool=pool, most=32))
        assert [d.text for d in docs] == texts
        assert [s.labels for s in docs[0].sentences] == [["PARIS", "IS", "NICE", "."], ["SO", "IS", "ROME", "."]]
        assert docs[1].sentences == [] and max(calls) <= 2 * 32 and sum(calls) == 15


def test_a_bigger_pool_decodes_in_fewer_larger_calls() -> None:
    texts = ["Paris is nice."] * 40
    one, many = [], []
    list(pooled(_texts(texts), _upper(one), batch_size=2, pool=1, most=32))
    list(pooled(_texts(texts), _upper(many), batch_size=2, pool=8, most=32))
    assert max(many) > max(one) and len(many) < len(one) and sum(one) == sum(many) == 40


def test_a_long_sentence_is_cut_into_pieces() -> None:
    [sentence] = sentence_tokens(" ".join(["word"] * 10))
    pieces = cap_length([sentence], 4, "text 1")
    assert [len(p.words) for p in pieces] == [4, 4, 2] and pieces[1].starts[0] == sentence.starts[4]
