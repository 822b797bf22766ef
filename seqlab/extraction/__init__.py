"""Relation extraction from raw text: a tagger finds the entities, a relation classifier labels every ordered
pair of them in a sentence; one model, one call, one output (``seqlab.load(run).tag(text)``)."""
