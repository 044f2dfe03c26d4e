"""Callbacks of the explorer's Questions tab: question-based metrics seen one question at a time.

Plain functions of data, like :mod:`ts2viz.ui.callbacks` (the :class:`~ts2viz.ui.state.app_state.AppView`
first, plain values after; tested without a browser). A *question metric* is a loaded metric whose
per-question details the app can read:

* a bundled ``TIFA-*``/``DSG-*`` column of the TS2 scores (all but GPT4V): the release's answers
  (:func:`ts2viz.qa.records.bundled_qa_records`), loaded once per process for every session; DSG
  questions count under the accumulation of the shared data's variant the session shows (``mean`` or
  ``gated``, the header's control);
* a metric this session scored live from the library (``tifa:``, ``dsg:``, ``gecko:``,
  ``fineeval:``, and the judges ``viescore:``, ``llmscore:`` whose "questions" are their ratings
  with the judge's reasoning): its details are read back from the score cache
  (:func:`ts2viz.engine.details.cached_details`), no model is loaded.

For an image: its questions as a table (:func:`~ts2viz.ui.callbacks.questions.image.image_questions`)
and, for T2I-FineEval, the image with its detections and a question's best crop
(:func:`~ts2viz.ui.callbacks.questions.image.boxes_html`). For a SEG: each question's accuracy in each
node (:func:`~ts2viz.ui.callbacks.questions.nodes.node_questions`). For the failure finder: SEGs ranked
by how many of their errors no question notices (:func:`~ts2viz.ui.callbacks.questions.finder.question_finder`).

One module each: :mod:`.sources` (the question metrics and their records), :mod:`.image` (one image),
:mod:`.nodes` (one SEG) and :mod:`.finder` (the failure finder).
"""
