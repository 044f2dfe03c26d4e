"""Embedding metrics: CLIPScore (transformers or open_clip), ALIGNScore and SigLIP.

The score of an image comes from the cosine similarity of its embedding and its prompt's embedding, in
the form a named *variant* (the ``variant=`` option; a family passes the variants it offers, the first
two, :data:`~ts2viz.metrics.backbones.embedding.options.BASE_VARIANTS`, by default) says:

``ts2`` (the default of every family)
    TS2's own code (michaelsaxon/T2IScoreScore ``CLIPScorer`` / ``ALIGNScore`` / ``SiGLIPScore``): the
    model's ``logits_per_image`` for the prompt as is: ``exp(logit_scale) * cos`` for CLIP (100 * cos for
    OpenAI's checkpoints), ``cos / temperature`` for ALIGN, ``exp(logit_scale) * cos + logit_bias`` for
    SigLIP (its prompt unpadded, as TS2's ``padding=True`` on one prompt leaves it). No clamp. TS2's
    published CLIPScore / ALIGNScore columns are these numbers min-max scaled over the 2,840 images and
    rounded to 2 decimals (an affine map per dataset: no ordering changes).
``cosine``
    the raw cosine in [-1, 1] (ts2viz's score before the variants were named; SigLIP's prompt padded to
    its 64 training tokens).
``hessel`` (CLIPScore only)
    J. Hessel et al.'s CLIP-S (jmhessel/clipscore ``get_clip_score``): ``2.5 * max(cos, 0)`` for the text
    ``"A photo depicts " + prompt``, images resized (bicubic, shorter side) and centre-cropped by
    torchvision on the PIL image as their ``CLIPImageDataset`` does.
``torchmetrics`` (CLIPScore only)
    torchmetrics' ``clip_score``: ``100 * max(cos, 0)`` for the prompt as is; a prompt over the text
    encoder's length is cut to it without an end token, as torchmetrics cuts it.

``preprocess=original`` (default) prepares images as each variant's original did: transformers' PIL image
processor (what TS2 and torchmetrics ran on transformers 4.x; ``backend="pil"`` on transformers 5) or
Hessel's torchvision pipeline; ``preprocess=fast`` uses the processor's torchvision backend on tensors
(about 2x faster preprocessing, numbers that differ from the originals' in the 4th digit).

Prompts longer than the text encoder's context are truncated with a warning (TS2's code has no
truncation and fails on them). Prompt embeddings are computed once per distinct set of prompts in a batch
and memoised, since many images share one prompt (every SEG does).

The package's rooms: :mod:`~ts2viz.metrics.backbones.embedding.options` (the families' options and the
variants they offer), :mod:`~ts2viz.metrics.backbones.embedding.factory` (the builder and the families'
factories), :mod:`~ts2viz.metrics.backbones.embedding.score` (the scoring all backends share, the variants'
formulas), :mod:`~ts2viz.metrics.backbones.embedding.hf` (transformers),
:mod:`~ts2viz.metrics.backbones.embedding.openclip` (open_clip) and
:mod:`~ts2viz.metrics.backbones.embedding.preprocess` (Hessel's torchvision pipeline, the fast path).
"""
