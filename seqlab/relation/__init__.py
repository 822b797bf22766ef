"""Relation classification (SemEval-2010 Task 8, or relation JSON lines with their own labels): config, data
tensors, training, prediction, scoring, explanations.

The model itself is ``seqlab.models.relation.RelationClassifier`` built from ``seqlab.modules.attention``;
this package holds what runs it, along the same flow as the tagger's ``train.py`` / ``predict.py``.
"""
