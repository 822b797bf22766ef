"""Relation classification (SemEval-2010 Task 8): config, data tensors, training, prediction, explanations.

The model itself is ``seqlab.models.relation.RelationClassifier`` built from ``seqlab.modules.attention``;
this package holds what runs it, along the same flow as the tagger's ``train.py`` / ``predict.py``.
"""
