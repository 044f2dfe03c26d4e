"""Parts every metric family shares.

The :class:`~.base.Metric` base class, devices and dtypes
(:mod:`.device`), model loading from the hub or a folder (:mod:`.hub`), spec parsing (:mod:`.spec`),
decoding presets (:mod:`.decoding`), the LLM reply cache (:mod:`.llmcache`), Gecko's normalised choice
score (:mod:`.choicescore`), and LLM question generation (:mod:`.question_gen`). The question-answering
metric TIFA and DSG share runs the backbones, so it is a room of its own: :mod:`ts2viz.metrics.qametric`.
"""
