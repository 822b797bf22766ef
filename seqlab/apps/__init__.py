"""The apps floor: what runs whole models of any task, above the tagging and relation packages.

The task table (:mod:`.tasks`: read any config, train it), loading any trained model (:mod:`.loader`), the
installed models (:mod:`.installed`), portable model files (:mod:`.package`), ONNX export and its runtime
(:mod:`.onnx_export`, :mod:`.onnx_runtime`), run summaries (:mod:`.summarize`), paired comparisons of output
files (:mod:`.compare`), bulk tagging (:mod:`.parallel`, :mod:`.ray`) and sweeps (:mod:`.sweep`). The CLI and
``seqlab.load``/``seqlab.train`` sit above it.
"""
