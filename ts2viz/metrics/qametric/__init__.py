"""The question-answering metric TIFA and DSG share, on the VQA backbone (callers import the submodule).

* :mod:`.metric`: the base class :class:`~.metric.QAMetric` (a family's differences are its subclass's
  overrides, in the family's module) and :func:`~.metric.map_answers`;
* :mod:`.options`: the options' card rows (:func:`~.options.qa_options`) and value checks;
* :mod:`.build`: :func:`~.build.build_qa`, a family's subclass on a VQA model, and the options it takes
  (:data:`~.build.QA_OPTION_NAMES`).
"""
