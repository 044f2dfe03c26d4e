"""BLIP-2's image–text retrieval heads (Q-Former): matching (ITM) and contrastive (ITC) scores.

The matching (ITM) and contrastive (ITC) scores of an image and a text, as t2v_metrics 3.0 computes them (``itmscore_models/blip2_itm_model.py``,
``clipscore_models/blip2_itc_model.py``, LAVIS' ``Blip2Qformer``) on transformers'
``Blip2ForImageTextRetrieval`` checkpoints (``Salesforce/blip2-itm-vit-g``, the same weights as LAVIS'
``blip2`` / ``pretrain``).

* image: resized to the model's square input size (224; 364 for the COCO model) with PIL bicubic, /255,
  normalised with OpenAI CLIP's mean and std (t2v_metrics' torchvision transform, no crop);
* text: BERT word pieces (the Q-Former tokenizer, ``[DEC]`` added), padded to and truncated at 35 tokens
  (t2v_metrics' ``max_length=35``);
* ITM: the Q-Former reads the 32 query tokens and the text together, cross-attending to the image; the ITM
  head's two logits are averaged over the query positions; the score is the softmax's "match" entry, in [0, 1];
* ITC: the queries alone (cross-attending to the image) and the text alone ([CLS]) are projected and
  L2-normalised; the score is the largest cosine over the queries, in [-1, 1].
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.device import autocast
from ..common.pretrained import hf_load, model_identity
from ..common.spec import Spec

#: t2v_metrics' text length (``padding='max_length', truncation=True, max_length=35``)
TEXT_LENGTH = 35
#: t2v_metrics' normalisation (OpenAI CLIP's mean and std)
MEAN = (0.48145466, 0.4578275, 0.40821073)
STD = (0.26862954, 0.26130258, 0.27577711)


class Blip2Retrieval:
    """A BLIP-2 ``Blip2ForImageTextRetrieval`` checkpoint with t2v_metrics' preprocessing (module docstring).

    Built by :func:`load_blip2_retrieval`; a model and tokenizer already in memory may be passed instead
    (tests).

    Parameters
    ----------
    model_id : str
        The hub id or local folder of the checkpoint.
    spec : Spec
        The metric's parsed spec (for error messages and hub access).
    device : str
        The torch device.
    dtype : torch.dtype
        The compute dtype (used under autocast on a GPU).
    revision : str or None, optional
        The hub revision.
    model : transformers.Blip2ForImageTextRetrieval, optional
        A loaded model; when given, nothing is loaded and ``tokenizer`` must be given too.
    tokenizer : transformers.PreTrainedTokenizer, optional
        The Q-Former's tokenizer, with ``model``.

    Raises
    ------
    InputError
        If ``model_id`` is not a BLIP-2 image-text retrieval checkpoint or cannot be loaded.
    """

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, revision: str | None = None, model=None,
                 tokenizer=None):
        import torch
        from transformers import AutoConfig, AutoTokenizer, Blip2ForImageTextRetrieval

        kw = {"revision": revision} if revision else {}
        if model is None:
            cfg = hf_load("config", AutoConfig.from_pretrained, model_id, spec, **kw)
            archs = " ".join(getattr(cfg, "architectures", None) or [])
            if cfg.model_type != "blip-2" or (archs and "ImageTextRetrieval" not in archs):
                raise InputError(f"metric {spec.raw!r}: {model_id!r} is not a BLIP-2 image-text retrieval checkpoint "
                                 f"(Blip2ForImageTextRetrieval, e.g. Salesforce/blip2-itm-vit-g); it is "
                                 f"{archs or cfg.model_type}")
            model = hf_load("BLIP-2 retrieval model", Blip2ForImageTextRetrieval.from_pretrained, model_id, spec,
                            dtype=dtype, **kw)
            tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, model_id, spec, **kw)
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device, self.dtype = device, dtype
        self.size = int(self.model.config.vision_config.image_size)
        self.identity = model_identity(model_id, revision, self.model.config)
        self._torch = torch

    @property
    def config(self) -> dict:
        """The settings that change the scores: the checkpoint's identity, the image and text preprocessing.

        Returns
        -------
        dict
            The model identity (id, revision, fingerprint) plus ``image`` and ``text`` descriptions.
        """
        return {**self.identity, "image": f"resize {self.size}x{self.size} bicubic, CLIP mean/std",
                "text": f"BERT word pieces, {TEXT_LENGTH} tokens"}

    def pixels(self, image) -> np.ndarray:
        """One image as t2v_metrics prepares it: float32 ``(3, s, s)`` (CPU; thread-safe).

        Converted to RGB, resized to the model's square size with PIL bicubic (unless it has that size
        already), scaled to [0, 1] and normalised with OpenAI CLIP's mean and std (:data:`MEAN`, :data:`STD`).

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.

        Returns
        -------
        numpy.ndarray
            float32 ``(3, s, s)``, ``s`` the model's image size.
        """
        from PIL import Image

        s = self.size
        im = image.convert("RGB")
        if im.size != (s, s):
            im = im.resize((s, s), Image.BICUBIC)
        arr = np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
        return (arr - np.asarray(MEAN, np.float32).reshape(3, 1, 1)) / np.asarray(STD, np.float32).reshape(3, 1, 1)

    def _text(self, texts: Sequence[str]):
        enc = self.tokenizer(list(texts), padding="max_length", truncation=True, max_length=TEXT_LENGTH,
                             return_tensors="pt")
        return enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)

    def _image_embeds(self, pixels: Sequence[np.ndarray]):
        torch = self._torch
        px = torch.from_numpy(np.stack(pixels)).to(self.device, self.model.dtype)
        return self.model.vision_model(pixel_values=px, return_dict=True).last_hidden_state

    def _image_queries(self, pixels: Sequence[np.ndarray]):
        # the images' ViT states, their attention mask and the Q-Former's query tokens, one set per image
        torch = self._torch
        img = self._image_embeds(pixels)
        img_mask = torch.ones(img.shape[:-1], dtype=torch.long, device=img.device)
        return img, img_mask, self.model.query_tokens.expand(img.shape[0], -1, -1)

    def itm(self, pixels: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        """P(match) of each (image, text) pair: the ITM head's softmax, averaged logits over the queries.

        The Q-Former reads the 32 query tokens and the text together, cross-attending to the image; the ITM
        head's logits over the query positions are averaged and the softmax's "match" entry is the score (as
        LAVIS' ``Blip2Qformer`` with ``match_head="itm"``, which t2v_metrics calls).

        Parameters
        ----------
        pixels : sequence of numpy.ndarray
            Images prepared by :meth:`pixels`.
        texts : sequence of str
            One text per image.

        Returns
        -------
        numpy.ndarray
            float64 probabilities in [0, 1], one per pair.
        """
        torch = self._torch
        m = self.model
        ids, mask = self._text(texts)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            img, img_mask, q = self._image_queries(pixels)
            att = torch.cat([torch.ones(q.shape[:-1], dtype=torch.long, device=q.device), mask], dim=1)
            emb = m.embeddings(input_ids=ids, query_embeds=q)
            out = m.qformer(query_embeds=emb, query_length=q.shape[1], attention_mask=att,
                            encoder_hidden_states=img, encoder_attention_mask=img_mask, return_dict=True)
            logits = m.itm_head(out.last_hidden_state[:, :q.shape[1], :]).mean(dim=1)
        return torch.softmax(logits.float(), dim=-1)[:, 1].double().cpu().numpy()

    def itc(self, pixels: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        """BLIP-2's contrastive score of each image with its own text.

        The largest cosine, over the 32 query outputs, between the image's projected queries and its text's
        projected [CLS] output (the pair's own text only, no softmax over a batch of texts).

        Parameters
        ----------
        pixels : sequence of numpy.ndarray
            Images prepared by :meth:`pixels`.
        texts : sequence of str
            One text per image.

        Returns
        -------
        numpy.ndarray
            float64 cosines in [-1, 1], one per pair.
        """
        torch = self._torch
        m = self.model
        ids, mask = self._text(texts)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            img, img_mask, q = self._image_queries(pixels)
            qo = m.qformer(query_embeds=q, encoder_hidden_states=img, encoder_attention_mask=img_mask,
                           return_dict=True).last_hidden_state
            image_feat = torch.nn.functional.normalize(m.vision_projection(qo).float(), dim=-1)
            te = m.embeddings(input_ids=ids)
            to = m.qformer(query_embeds=te, query_length=0, attention_mask=mask, return_dict=True).last_hidden_state
            text_feat = torch.nn.functional.normalize(m.text_projection(to[:, 0, :]).float(), dim=-1)
        sims = (image_feat * text_feat.unsqueeze(1)).sum(-1)
        return sims.max(dim=1).values.double().cpu().numpy()


def load_blip2_retrieval(spec: Spec, device: str | None = None, *, dtype: str | None = None) -> Blip2Retrieval:
    """The BLIP-2 retrieval model of ``spec.model`` (hub id or folder) on ``device``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is a hub id or a local folder of a ``Blip2ForImageTextRetrieval``
        checkpoint, its revision (if any) is used.
    device : str or None, optional
        The torch device; None picks one.
    dtype : str or None, optional
        ``float32``, ``float16`` or ``bfloat16``; None: float32 on CPU, the family's precision on a GPU
        (:func:`ts2viz.metrics.common.device.resolve_dtype`).

    Returns
    -------
    Blip2Retrieval
        The loaded model.

    Raises
    ------
    InputError
        If the spec names an open_clip model, the model id is not accepted, or the checkpoint is not a BLIP-2
        retrieval checkpoint or cannot be loaded.
    """
    from ..common.device import resolve_device, resolve_dtype
    from ..common.pretrained import check_model_id

    if spec.is_openclip:
        raise InputError(f"metric {spec.raw!r}: a BLIP-2 image-text retrieval checkpoint is needed, not open_clip")
    dev = resolve_device(device)
    return Blip2Retrieval(check_model_id(spec), spec, dev, resolve_dtype(dev, dtype), spec.revision)
