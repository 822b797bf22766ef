"""Raw text in any language as the words a tagger reads: tokenizer and sentence splitter chosen by the language
(:mod:`seqlab.text.tokenizers`), adapted to the tokenization of the model's training data and with its multiword
tokens expanded (:mod:`seqlab.text.learned`, :mod:`seqlab.text.mwt`), put together by
:class:`seqlab.text.pipeline.TextPipeline`."""
