"""features.ls_distant: the gazetteer of typed mention strings, its filters, longest match and projection."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from features.ls_corpus import Mention, TypedSentence, read_typed
from features.ls_distant import DistantOptions, DistantStats, Gazetteer, project

LS = Path(__file__).parents[1] / "fixtures" / "ls"


def sentence(text: str) -> TypedSentence:
    """``Steven/PER Spielberg/PER directed it`` → tokens and mentions (same consecutive label = one mention)."""
    tokens, mentions, start, label = [], [], -1, None
    for i, item in enumerate(text.split() + ["</s>"]):
        word, _, tag = item.partition("/")
        if label and tag != label:
            mentions.append(Mention(start, i, label))
            label = None
        if tag and tag != label:
            start, label = i, tag
        tokens.append(word)
    return TypedSentence(tuple(tokens[:-1]), tuple(mentions))


def test_longest_match_wins_left_to_right():
    gaz = Gazetteer({("New", "York"): "GPE", ("New", "York", "Times"): "MEDIA", ("York",): "GPE", ("Times",): "X"})
    tokens = "the New York Times and New York and York".split()
    assert gaz.match(tokens) == [Mention(1, 4, "MEDIA"), Mention(5, 7, "GPE"), Mention(8, 9, "GPE")]
    assert gaz.match(["New"]) == [] and gaz.match([]) == []


def test_filters_drop_lowercase_ambiguous_and_rarely_linked_strings():
    sentences = [
        sentence("Paris/GPE is big"), sentence("Paris/GPE again"), sentence("Paris/PER Hilton/PER"),
        sentence("the/X hotel/HOTEL was fine"), sentence("May/PER said"), sentence("in May it rained"),
        sentence("in May it snowed"), sentence("Jordan/GPE or Jordan/PER"), sentence("1999/X came"),
        sentence("Ballarat/ORG Reform/ORG League/ORG met"),
    ]
    stats = DistantStats()
    gaz = Gazetteer.from_typed(sentences, DistantOptions(min_link_prob=0.5, min_type_share=0.6), stats)
    assert gaz.entries == {("Paris",): "GPE", ("Paris", "Hilton"): "PER", ("Ballarat", "Reform", "League"): "ORG"}
    # Paris: 2 mentions (both GPE) in 3 occurrences (the third is inside "Paris Hilton"); May: linked 1 of 3;
    # Jordan: GPE once, PER once (share 0.5); "the" and "hotel": lower-case; 1999: no letter
    assert stats.dropped == {"ambiguous_type": 1, "link_prob": 1, "lowercase": 2, "no_letter": 1}
    assert stats.strings_seen == 8 and stats.strings_kept == 3


def test_min_mentions_and_max_tokens():
    sentences = [sentence("A/X B/X C/X rest"), sentence("Solo/Y here"), sentence("Twice/Z and Twice/Z")]
    gaz = Gazetteer.from_typed(sentences, DistantOptions(min_mentions=2, max_tokens=2))
    assert gaz.entries == {("Twice",): "Z"}


def test_project_keeps_sentences_with_a_match_up_to_a_limit():
    gaz = Gazetteer({("Obama",): "person_politician", ("Paris",): "location_GPE"})
    corpus = [["Obama", "went", "to", "Paris", "today"], ["nothing", "to", "see", "here", "now"],
              ["Paris", "!"], ["and", "then", "Obama", "came", "back"], ["Obama", "again", "and", "again", "."]]
    stats = DistantStats()
    kept = list(project(gaz, corpus, DistantOptions(max_sentences=2, min_sentence_tokens=5), stats))
    assert [s.tokens[0] for s in kept] == ["Obama", "and"]
    assert kept[0].mentions == (Mention(0, 1, "person_politician"), Mention(3, 4, "location_GPE"))
    assert stats.sentences_scanned == 4 and stats.sentences_kept == 2 and stats.mentions_projected == 3
    assert stats.types == {"person_politician": 2, "location_GPE": 1}
    json.dumps(stats.to_dict())  # goes into the manifest


@pytest.mark.parametrize("options, message", [
    (dict(min_link_prob=1.5), r"min_link_prob must be in \[0, 1\], but got 1.5"),
    (dict(max_sentences=0), "max_sentences must be a positive integer, but got 0"),
])
def test_options_are_checked(options, message):
    with pytest.raises(ValueError, match=message):
        DistantOptions(**options)


def test_distant_build_adds_projected_sentences(tmp_path):
    pytest.importorskip("fasttext")
    from features.ls_build import LSOptions, build_ls

    vectors = build_ls([LS / "typed.txt"], tmp_path / "ls", unlabeled=[LS / "unlabeled.txt"],
                       distant=DistantOptions(min_sentence_tokens=3), progress=False,
                       options=LSOptions(dim=8, min_count=1, epochs=5, bucket=100_000))
    stats = vectors.manifest["distant"]["stats"]
    assert stats["sentences_kept"] == 3 and stats["sentences_scanned"] == 5  # 4 paragraphs, 5 sentences
    assert stats["types"]["organization_sportsteam"] == 2 and stats["training_tokens"] > 0
    typed = list(read_typed(LS / "typed.txt"))
    assert vectors.manifest["counts"]["sentences"] == len(typed)  # the typed corpus; projected ones in stats
    assert vectors.manifest["unlabeled"][0]["path"].endswith("unlabeled.txt")


def test_distant_sentences_can_be_added_as_plain_text(tmp_path):
    pytest.importorskip("fasttext")
    from features.ls_build import LSOptions, build_ls

    vectors = build_ls([LS / "typed.txt"], tmp_path / "ls", unlabeled=[LS / "unlabeled.txt"],
                       distant=DistantOptions(min_sentence_tokens=3, annotate=False), progress=False,
                       options=LSOptions(dim=8, min_count=1, epochs=5, bucket=100_000))
    stats = vectors.manifest["distant"]["stats"]
    assert stats["sentences_kept"] == 3 and stats["training_tokens"] == 7 + 12 + 13  # the words, once each
    assert vectors.manifest["distant"]["options"]["annotate"] is False
