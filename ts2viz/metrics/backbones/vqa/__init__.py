"""The visual-question-answering backend shared by VQAScore, TIFA, DSG, Gecko and T2I-FineEval.

A :class:`~.model.VQAModel` answers many ``(image, question)`` pairs in batches, three ways:

* :meth:`~.model.VQAModel.answer_score`: ``exp(-mean cross-entropy)`` of a given answer's tokens, teacher forced
  (t2v_metrics' VQAScore; for LLaVA-1.5 in t2v_metrics' own conversation format and image padding);
* :meth:`~.model.VQAModel.yes_probability`: P("yes") read from the logits of the first answer token (the
  probability mass of the vocabulary entries that decode to "yes" in any case);
* :meth:`~.model.VQAModel.answer`: a free-form answer, greedy or as a named decoding says (:mod:`ts2viz.metrics.common.decoding`: DSG's
  InstructBLIP beam search);
* :meth:`~.model.VQAModel.choice_logprobs` / :meth:`~.model.VQAModel.choice_probabilities`: the teacher-forced sequence
  likelihood of each of a pair's answer choices (Gecko's score normalisation).

Pairs may repeat an image (many questions per image) or use crops (:func:`~.model.crop`). GPU out-of-memory
halves the pair batch and retries. One module per concept; this package imports none of them:

- :mod:`.model`: the base class :class:`~.model.VQAModel` (batching, OOM halving, the yes-token set, answer
  choices' surface forms) and :func:`~.model.crop`;
- :mod:`.blip`: BLIP-VQA (``BlipForQuestionAnswering``), :class:`~.blip.BlipVQA`;
- :mod:`.generative`: generative VLMs through ``AutoModelForImageTextToText`` (LLaVA-1.5, InstructBLIP, BLIP-2,
  Qwen2-VL, PaliGemma, ...), :class:`~.generative.GenerativeVQA`, and their prompt templates;
- :mod:`.t2v`: t2v_metrics' model-specific inputs and scoring rules for those generative VLMs;
- :mod:`.clip_flant5`: CLIP-FlanT5, rebuilt from transformers parts;
- :mod:`.llava`: LLaVA-1.5 in LLaVA's own code layout (converted on load) and its prompt format;
- :mod:`.loader`: :func:`~.loader.load_vqa_model`, the right class for a checkpoint, by its config.
"""
