"""Views of seqlab's results for people: self-contained HTML pages (:mod:`.html`) and the plots of a run's
report (:mod:`seqlab.apps.report`)."""
