"""Helpers the tests share: the one trainer set up for a tagging or a relation config."""
from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from seqlab.core.trainer import Trainer


def tagger_trainer(config: Any, out_dir: str | Path, **options: Any) -> Trainer:
    """The trainer of a tagging config (its task, with data and vocabularies, is ``trainer.task``)."""
    from seqlab.tagging.task import prepare

    return Trainer(prepare, config, Path(out_dir), **options)


def relation_trainer(config: Any, out_dir: str | Path, **options: Any) -> Trainer:
    """The trainer of a relation config."""
    from seqlab.relation.task import prepare

    return Trainer(prepare, config, Path(out_dir), **options)


#: The tiny WordPiece vocabulary of :func:`tiny_bert`: specials, letters with their continuations, and a few words.
TINY_VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<", ">", "/", ".", ",", "1", "2", "##1", "##2"]
              + [chr(c) for c in range(ord("a"), ord("z") + 1)] + [f"##{chr(c)}" for c in range(ord("a"), ord("z") + 1)]
              + ["the", "was", "by", "a", "of", "in", "fire", "smoke", "caused", "from", "eu", "german", "##s"])


def tiny_bert(folder: str | Path, seed: int = 0) -> Path:
    """A randomly initialised BERT (2 layers of width 32) with a tiny uncased WordPiece vocabulary, saved as a
    Hugging Face model folder with safetensors weights: what the transformer embedder reads, built offline."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(TINY_VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(str(vocab), do_lower_case=True).save_pretrained(folder)
    config = BertConfig(vocab_size=len(TINY_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(folder, safe_serialization=True)
    return folder


@functools.lru_cache(maxsize=None)
def shared_tiny_bert() -> Path:
    """One :func:`tiny_bert` folder for the whole test process (removed at exit), for configs that name it."""
    folder = Path(tempfile.mkdtemp(prefix="seqlab_tiny_bert_"))
    atexit.register(shutil.rmtree, folder, True)
    return tiny_bert(folder / "model")
