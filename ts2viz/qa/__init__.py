"""Question answering: the concept TIFA, DSG, Gecko and T2I-FineEval share, in one place.

A question-based metric asks a VQA model questions about an image and turns the answers into a score.
Everything about that, except running the models, lives here; the metric families that run models
are in :mod:`ts2viz.metrics` (``qa``, ``gecko``, ``fineeval``, ...) and call these modules.

* :mod:`ts2viz.qa.questions`: question sets (the TS2 question-file format, bundled and generated sets);
* :mod:`ts2viz.qa.mapping`: a free-form answer -> one of the question's choices (the lexical mapper,
  the Sentence-BERT mapper's rules) and the yes rules;
* :mod:`ts2viz.qa.accumulation`: correct answers -> a per-image score (TIFA's mean, DSG's dependency
  gating under its named rules);
* :mod:`ts2viz.qa.records`: per-question records as a table (the TS2 release's answers, or a live
  metric's details), and per-image scores from them;
* :mod:`ts2viz.qa.details`: every family's per-image details as tables, records and pictures;
* :mod:`ts2viz.qa.views`: question-level views over records (question x node accuracy, edge drops,
  SEGs ranked by question failures, cached live records).

Nothing here runs a model or imports torch or gradio: the Sentence-BERT mapper is a backbone
(:mod:`ts2viz.metrics.backbones.sbert`).
"""
