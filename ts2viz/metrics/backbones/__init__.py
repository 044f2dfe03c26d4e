"""The models several metric families share.

VQA models (:mod:`.vqa`: one module per model family, with CLIP-FlanT5 in :mod:`.vqa.clip_flant5`
and LLaVA's own layout and prompt format in :mod:`.vqa.llava`), CLIP/ALIGN/SigLIP dual encoders
(:mod:`.embedding`), LLMs (:mod:`.llm`), judges (:mod:`.judge`), NLI (:mod:`.nli`) and detectors (:mod:`.detect`).
"""
