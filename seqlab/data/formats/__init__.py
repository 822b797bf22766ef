"""The labelled-data formats seqlab reads and writes, one module per format, each defining its
:class:`~seqlab.data.formats.format.Format` record, all listed once in :data:`.registry.TABLE`.

Character-offset formats (:mod:`.brat` standoff, :mod:`.jsonl` spans as doccano, spaCy and Prodigy write
them, :mod:`.labelstudio` JSON exports) go through one alignment to tokens (:mod:`.align`); Hugging Face-style
token JSONL (:mod:`.hf`) and seqlab's own JSONL (:mod:`.seqlab_jsonl`) are read as they stand; CoNLL columns
(:mod:`.columns`) and CoNLL-U (:mod:`.conllu_writer`) through the parsers of :mod:`seqlab.data.conll` and
:mod:`seqlab.data.conllu`; :mod:`.inline` is only written. :mod:`.registry` names them for ``data.format``,
``seqlab convert`` and ``seqlab tag --format`` and tells them apart by extension and content.
"""
