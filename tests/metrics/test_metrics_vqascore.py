"""VQAScore against t2v_metrics' formula, computed here independently on tiny random-weight models.

The reference functions below were written from reading linzhiqiu/t2v_metrics (``clip_t5_model.py``,
``llava_model.py``, ``mm_utils.py``, ``clip_t5/model/language_model/clip_t5.py`` in its history before
v3.1): its tokenisation around ``<image>``, its right padding and splicing, its label masking and
``exp(-CrossEntropyLoss(reduction='mean'))``. They use plain transformers parts and none of ts2viz's code.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from tiny_models import tiny, write_image_dataset
from ts2viz import metrics
from ts2viz.errors import InputError

SYSTEM = ("A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
          "detailed, and polite answers to the user's questions.")
Q_T2V = 'Does this figure show "{}"? Please answer yes or no.'
PROMPTS = ["a red cat", "two blue dogs with a teddy bear on the tree", "dog"]


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(5)
    sizes = [(40, 48), (48, 30), (32, 32)]  # wide, tall, square: the padding matters
    return [Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)) for h, w in sizes]


# -- the original's formula, independently -------------------------------------------------------------

def ref_expand2square(img, color):
    from PIL import Image

    w, h = img.size
    if w == h:
        return img
    side = max(w, h)
    out = Image.new(img.mode, (side, side), color)
    out.paste(img, (0, (w - h) // 2) if w > h else ((h - w) // 2, 0))
    return out


def ref_pixels(images, processor):
    import torch

    color = tuple(int(x * 255) for x in processor.image_mean)
    return torch.stack([processor.preprocess(ref_expand2square(im, color), return_tensors="pt")["pixel_values"][0]
                        for im in images])


def pil_clip_processor(folder):
    import transformers

    cls = getattr(transformers, "CLIPImageProcessorPil", transformers.CLIPImageProcessor)
    return cls.from_pretrained(folder)


def ref_t5_tokenizer_image_token(prompt, tok):
    chunks = [tok(c).input_ids for c in prompt.split("<image>")]
    ids = []
    for k, c in enumerate(chunks):
        if k:
            ids.append(-200)
        ids.extend(c)
    return ids


def ref_clip_t5_scores(folder: Path, images, texts, q_tmpl=Q_T2V, a_tmpl="Yes"):
    """t2v_metrics' CLIPT5Model.forward on the checkpoint in ``folder``, rebuilt from its raw state dict."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, CLIPVisionModel, T5Config, T5ForConditionalGeneration

    cfg = json.loads((folder / "config.json").read_text())
    state = load_file(str(folder / "model.safetensors"))
    t5_keys = {k: v for k, v in state.items() if not k.startswith(("vision_tower.", "mm_projector.", "embed_tokens."))}
    t5cfg = T5Config(**{k: v for k, v in cfg.items() if not k.startswith("mm_") and k not in ("model_type",)})
    t5 = T5ForConditionalGeneration(t5cfg).eval()
    t5.load_state_dict(t5_keys, strict=True)
    clip = CLIPVisionModel.from_pretrained(cfg["mm_vision_tower"]).eval()
    tower = {k[len("vision_tower.vision_tower.vision_model."):]: v for k, v in state.items()
             if k.startswith("vision_tower.vision_tower.vision_model.")}
    if tower:
        clip.load_state_dict(tower, strict=True)
    proj = torch.nn.Sequential(torch.nn.Linear(cfg["mm_hidden_size"], cfg["d_model"]), torch.nn.GELU(),
                               torch.nn.Linear(cfg["d_model"], cfg["d_model"]))
    proj.load_state_dict({k[len("mm_projector."):]: v for k, v in state.items() if k.startswith("mm_projector.")})
    tok = AutoTokenizer.from_pretrained(folder)
    t5.resize_token_embeddings(len(tok))  # load_pretrained_model's resize (the checkpoint has 4 rows more)
    pad = tok.pad_token_id

    questions = [f"{SYSTEM} USER: <image>\n{q_tmpl.format(t)} ASSISTANT: " for t in texts]
    answers = [a_tmpl.format(t) for t in texts]
    input_ids = [torch.tensor(ref_t5_tokenizer_image_token(q, tok)) for q in questions]
    labels = [torch.tensor(ref_t5_tokenizer_image_token(a, tok)) for a in answers]
    input_ids = torch.nn.utils.rnn.pad_sequence(input_ids, batch_first=True, padding_value=pad)
    labels = torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=-100)
    attention_mask = input_ids.ne(pad)
    with torch.no_grad():
        hidden = clip(ref_pixels(images, pil_clip_processor(cfg["mm_vision_tower"])),
                      output_hidden_states=True).hidden_states[cfg["mm_vision_select_layer"]][:, 1:]
        feats = proj(hidden)
        embed = t5.get_input_embeddings()
        rows = []
        for i, ids in enumerate(input_ids):  # the pad tokens stay in, as in the original
            k = int(torch.where(ids == -200)[0][0])
            rows.append(torch.cat([embed(ids[:k]), feats[i], embed(ids[k + 1:])]))
        embeds = torch.stack(rows)  # one image each: equal lengths
        mask = torch.cat([torch.ones((len(rows), embeds.shape[1] - input_ids.shape[1]), dtype=torch.bool),
                          attention_mask], dim=1)
        logits = t5(inputs_embeds=embeds, attention_mask=mask, decoder_attention_mask=labels.ne(-100),
                    labels=labels).logits
        loss = torch.nn.CrossEntropyLoss(reduction="mean")
        return np.array([float((-loss(logits[k], labels[k])).exp()) for k in range(len(texts))])


def ref_llava_scores(folder: Path, images, texts, q_tmpl=Q_T2V, a_tmpl="Yes", vocab: int | None = None):
    """t2v_metrics' LLaVAModel.forward on a llava-hf checkpoint: the same ids and labels, the image
    placeholder expanded to the model's image tokens (llava-hf splices features at those tokens).
    ``vocab``: the original model's vocabulary size (its LM head's rows; llava-hf appends rows for
    ``<image>`` and padding, which the original's softmax does not have)."""
    import torch
    from transformers import AutoTokenizer, LlavaForConditionalGeneration

    model = LlavaForConditionalGeneration.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)

    def tokenizer_image_token(prompt):
        chunks = [tok(c).input_ids for c in prompt.split("<image>")]
        out, offset = [], 0
        if chunks and chunks[0] and chunks[0][0] == tok.bos_token_id:
            offset = 1
            out.append(chunks[0][0])
        seps = [x for c in chunks for x in (c, [-200] * (offset + 1))][:-1]
        for x in seps:
            out.extend(x[offset:])
        return out

    questions = [f"{SYSTEM} USER: <image>\n{q_tmpl.format(t)} ASSISTANT: " for t in texts]
    prompts = [q + a_tmpl.format(t) + "</s>" for q, t in zip(questions, texts)]
    pix = ref_pixels(images, pil_clip_processor(folder))
    vc = model.config.vision_config
    n_img = (vc.image_size // vc.patch_size) ** 2  # "default" strategy: the CLS feature dropped
    seqs, labs = [], []
    for p, q in zip(prompts, questions):
        ids = tokenizer_image_token(p)
        lab = list(ids)
        n = len(tokenizer_image_token(q)) - (1 if q[-1] == " " else 0)
        lab[:n] = [-100] * n
        k = ids.index(-200)
        seqs.append(ids[:k] + [model.config.image_token_id] * n_img + ids[k + 1:])
        labs.append(lab[:k] + [-100] * n_img + lab[k + 1:])
    ids = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True,
                                          padding_value=tok.pad_token_id)
    labels = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in labs], batch_first=True, padding_value=-100)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=ids.ne(tok.pad_token_id), pixel_values=pix).logits
    shift_logits, shift_labels = logits[:, :-1, :vocab], labels[:, 1:]
    loss = torch.nn.CrossEntropyLoss(reduction="mean")
    return np.array([float((-loss(shift_logits[k], shift_labels[k])).exp()) for k in range(len(texts))])


# -- differential tests ----------------------------------------------------------------------------------

def test_clip_flant5_without_the_tower_in_its_checkpoint_reads_the_tower_folder(images):
    """t2v_metrics' scores on the released layout are proved by tests/metrics/reference; here a checkpoint saved
    without the tower's weights (the tower from mm_vision_tower's folder, as the original builds it) against
    the formula recomputed from plain transformers parts."""
    folder = tiny("clip_t5_no_tower")
    m = metrics.load(f"vqascore:{folder}", device="cpu")
    got = m(images=images, prompts=PROMPTS)
    want = ref_clip_t5_scores(folder, images, PROMPTS)
    assert want.min() > 1e-4 and np.ptp(want) > 1e-4  # informative numbers, not all ~0 or all equal
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert m.config["vqa_class"] == "ClipT5VQA" and m.config["question_template"] == Q_T2V
    assert m.config["answer_template"] == "Yes" and m.config["recipe"] == "clip-flant5" and m.higher_is_better


def test_clip_flant5_templates_and_caption_likelihood(images):
    folder = tiny("clip_t5")
    q = 'Is this figure showing "{}"? Please answer yes or no.'
    spec = f"vqascore:{folder}?question_template={quote(q)}&answer_template=No"
    got = metrics.load(spec, device="cpu")(images=images, prompts=PROMPTS)
    np.testing.assert_allclose(got, ref_clip_t5_scores(folder, images, PROMPTS, q, "No"), rtol=1e-6, atol=1e-9)
    # P(prompt | image): t2v_metrics' question_template="" and answer_template="{}"
    want = ref_clip_t5_scores(folder, images, PROMPTS, "", "{}")
    for m in (metrics.load(f"vqascore:{folder}?caption_likelihood=true", device="cpu"),
              metrics.load(f"vqascore:{folder}", device="cpu", question_template="", answer_template="{}")):
        np.testing.assert_allclose(m(images=images, prompts=PROMPTS), want, rtol=1e-6, atol=1e-9)


def test_llava_custom_templates_follow_the_t2v_metrics_formula(images):
    """(The default templates are proved by tests/metrics/reference.) Other templates go through the same
    format: checked against the formula recomputed from plain transformers parts."""
    folder = tiny("llava")
    custom = metrics.load(f"vqascore:{folder}", device="cpu", question_template="Is it {}?", answer_template="No")
    np.testing.assert_allclose(custom(images=images, prompts=PROMPTS),
                               ref_llava_scores(folder, images, PROMPTS, "Is it {}?", "No"), rtol=1e-6, atol=1e-9)


def test_blip_scores_the_answer_through_its_answer_decoder(images):
    """BLIP-VQA (not a t2v_metrics model): exp(-mean CE) of ``[DEC] Yes [SEP]``'s tokens after [DEC]."""
    import torch
    from transformers import AutoProcessor, BlipForQuestionAnswering

    folder = tiny("blip")
    got = metrics.load(f"vqascore:{folder}", device="cpu")(images=images, prompts=PROMPTS)
    model = BlipForQuestionAnswering.from_pretrained(folder).eval()
    proc = AutoProcessor.from_pretrained(folder)
    tok = proc.tokenizer
    want = []
    for im, p in zip(images, PROMPTS):
        enc = proc(images=im, text=Q_T2V.format(p), return_tensors="pt")
        ans = [model.decoder_start_token_id, *tok.encode("Yes", add_special_tokens=False), tok.sep_token_id]
        with torch.no_grad():
            img = model.vision_model(pixel_values=enc["pixel_values"])[0]
            q = model.text_encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                   encoder_hidden_states=img)[0]
            logits = model.text_decoder(input_ids=torch.tensor([ans]), encoder_hidden_states=q).logits[0]
        ce = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ans[1:]))
        want.append(float(torch.exp(-ce)))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_answer_scores_do_not_depend_on_batching(images):
    for spec in (f"vqascore:{tiny('clip_t5')}", f"vqascore:{tiny('llava')}", f"vqascore:{tiny('blip')}",
                 f"vqascore:{tiny('llava')}?llava_format=chat", f"vqascore:{tiny('paligemma')}"):
        vqa = metrics.load(spec, device="cpu").vqa
        qs = [Q_T2V.format(p) for p in PROMPTS]
        together = vqa.answer_score(images, qs, ["Yes"] * 3)
        vqa.batch_size = 1
        alone = vqa.answer_score(images, qs, ["Yes"] * 3)
        np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-12)
        assert ((together > 0) & (together <= 1)).all()


def test_clip_flant5_answers_questions_for_tifa_and_dsg(images):
    vqa = metrics.load(f"vqascore:{tiny('clip_t5')}", device="cpu").vqa
    answers = vqa.answer(images, ["what color is the cat?"] * 3, max_new_tokens=3)
    assert len(answers) == 3 and all(isinstance(a, str) for a in answers)
    probs = vqa.choice_probabilities(images, ["is there a cat?"] * 3, [["yes", "no"]] * 3)
    assert all(p.shape == (2,) and ((p > 0) & (p < 1)).all() for p in probs)
    yes = vqa.yes_probability(images, ["is there a cat?"] * 3)
    assert ((yes > 0) & (yes < 1)).all()


def test_first_token_yes_is_an_explicit_option(images):
    import torch
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    folder = tiny("llava")
    m = metrics.load(f"vqascore:{folder}?answer=first_token_yes", device="cpu")
    got = m(images=images, prompts=PROMPTS)
    model = LlavaForConditionalGeneration.from_pretrained(folder).eval()
    proc = AutoProcessor.from_pretrained(folder)
    yes = [proc.tokenizer.convert_tokens_to_ids(t) for t in ("yes", "Yes")]
    want = []
    for im, p in zip(images, PROMPTS):
        text = proc.apply_chat_template([{"role": "user", "content": [{"type": "image"},
                                                                      {"type": "text", "text": Q_T2V.format(p)}]}],
                                        add_generation_prompt=True, tokenize=False)
        with torch.no_grad():
            logits = model(**proc(images=[im], text=[text], return_tensors="pt")).logits[0, -1]
        want.append(torch.softmax(logits, -1)[yes].sum().item())
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert "first answer token" in m.config["answer"]


def test_spec_options_stay_text_and_bad_options_fail():
    from ts2viz.metrics.common.spec import parse_spec

    sp = parse_spec(f"vqascore:x/y?answer_template=Yes&question_template={quote(Q_T2V)}&batch_size=4")
    assert sp.options == {"answer_template": "Yes", "question_template": Q_T2V, "batch_size": 4}
    folder = tiny("clip_t5")
    with pytest.raises(InputError, match="answer must be one of"):
        metrics.load(f"vqascore:{folder}?answer=sum", device="cpu")
    with pytest.raises(InputError, match="template"):
        metrics.load(f"vqascore:{folder}", device="cpu", question_template="Does it show {0} {1}?")
    with pytest.raises(InputError, match="CLIP-FlanT5 checkpoints and LLaVA checkpoints in LLaVA's own layout only"):
        metrics.load(f"vqascore:{tiny('blip')}?vision_tower=/nowhere", device="cpu")


def test_llava_in_its_own_code_layout_is_converted(images, tmp_path):
    """liuhaotian/llava-v1.5-* (t2v_metrics' LLaVA) in LLaVA's own layout: converted on load, the same
    VQAScore as the same weights in transformers' layout, and as t2v_metrics' formula (to 1e-6)."""
    import shutil

    from tiny_models import LLAVA_TOWER, build_llava_original, word_tokenizer

    orig, twin = build_llava_original(tmp_path)
    got = metrics.load(f"vqascore:{orig}", device="cpu")(images=images, prompts=PROMPTS)
    hf = metrics.load(f"vqascore:{twin}", device="cpu")(images=images, prompts=PROMPTS)
    vocab = len(word_tokenizer())               # the original's LM head rows (no <image> row)
    want = ref_llava_scores(twin, images, PROMPTS, vocab=vocab)
    assert np.ptp(want) > 1e-6
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hf, want, rtol=1e-6, atol=1e-9)
    # the twin's random <image> row would change every score if the softmax took it in
    assert np.abs(ref_llava_scores(twin, images, PROMPTS) / want - 1).max() > 1e-4
    # the tower as an option, from anywhere; without it (offline, not beside the checkpoint) a one-line error
    moved = tmp_path / "elsewhere" / "tower"
    shutil.move(str(tmp_path / LLAVA_TOWER.split("/")[-1]), str(moved))
    with pytest.raises(InputError, match=r"needs its vision tower 'openai/clip-vit-large-patch14-336'.*"
                                         r"\?vision_tower=") as e:
        metrics.load(f"vqascore:{orig}", device="cpu")
    assert "\n" not in str(e.value)
    again = metrics.load(f"vqascore:{orig}?vision_tower={moved}", device="cpu")(images=images, prompts=PROMPTS)
    np.testing.assert_allclose(again, want, rtol=1e-6, atol=1e-9)


def test_cli_score_llava_original_layout_then_leaderboard(tmp_path, capsys):
    from tiny_models import build_llava_original
    from ts2viz.cli import main
    from ts2viz.scores import read_scores

    orig, twin = build_llava_original(tmp_path / "models")
    ds = write_image_dataset(tmp_path / "ds", n_segs=3)
    out = {}
    for name, folder in (("orig", orig), ("twin", twin)):
        out[name] = tmp_path / f"{name}.csv"
        assert main(["score", "--metric", f"vqascore:{folder}", "--dataset", str(ds), "--out", str(out[name]),
                     "--device", "cpu", "--cache", str(tmp_path / "c"), "--quiet"]) == 0
    a, b = read_scores(out["orig"]), read_scores(out["twin"])
    assert a.file_names == b.file_names and len(a.file_names) == 15
    np.testing.assert_allclose(a.values, b.values, rtol=1e-6, atol=1e-9)
    capsys.readouterr()
    assert main(["leaderboard", "--dataset", str(ds), "--scores", str(out["orig"])]) == 0
    assert "vqascore:" in capsys.readouterr().out


def test_llava_original_layout_refuses_what_it_cannot_convert(tmp_path):
    """LLaVA-1.6 (anyres config) is converted as t2v_metrics runs it (tests/metrics/reference proves the scores);
    what cannot be converted fails in one line: another projector, or a tower that is nowhere."""
    folder = tmp_path / "llava-v1.6"
    folder.mkdir()
    cfg = {"model_type": "llava_llama", "architectures": ["LlavaLlamaForCausalLM"],
           "mm_vision_tower": "openai/clip-vit-large-patch14-336", "mm_projector_type": "linear",
           "image_aspect_ratio": "anyres", "mm_patch_merge_type": "spatial_unpad"}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError, match="mlp2x_gelu"):
        metrics.load(f"vqascore:{folder}", device="cpu")
    (folder / "config.json").write_text(json.dumps({**cfg, "mm_projector_type": "mlp2x_gelu"}))
    with pytest.raises(InputError, match="needs its vision tower") as e:
        metrics.load(f"vqascore:{folder}", device="cpu")
    assert "\n" not in str(e.value)


def test_clip_flant5_folder_without_its_vision_tower_fails_clearly(tmp_path):
    import shutil

    src = tiny("clip_t5")
    dst = tmp_path / "ckpt"
    shutil.copytree(src, dst)
    cfg = json.loads((dst / "config.json").read_text())
    cfg["mm_vision_tower"] = str(tmp_path / "missing_tower")
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError, match="CLIP vision tower"):
        metrics.load(f"vqascore:{dst}", device="cpu")
    # ... and loads with the tower named as an option
    m = metrics.load(f"vqascore:{dst}?vision_tower={src.parent / (src.name + '_clip_tower')}", device="cpu")
    assert m.config["vision_tower"].endswith("_clip_tower")
    # a checkpoint saved without its tokenizer (as training saved them) names the Flan-T5 to use
    for f in dst.iterdir():
        if "token" in f.name or f.name == "special_tokens_map.json":
            f.unlink()
    with pytest.raises(InputError, match="tokenizer=google/flan-t5-xl"):
        metrics.load(f"vqascore:{dst}?vision_tower={src.parent / (src.name + '_clip_tower')}", device="cpu")
    m = metrics.load(f"vqascore:{dst}?vision_tower={src.parent / (src.name + '_clip_tower')}&tokenizer={src}",
                     device="cpu")
    assert m.config["tokenizer"] == str(src)


# -- end to end: ts2viz score -> ts2viz leaderboard -----------------------------------------------------

def test_cli_score_clip_flant5_then_leaderboard(tmp_path, capsys):
    from ts2viz.cli import main
    from ts2viz.scores import read_scores

    ds = write_image_dataset(tmp_path / "ds", n_segs=3)
    spec = f"vqascore:{tiny('clip_t5')}"
    out = tmp_path / "s.csv"
    assert main(["score", "--metric", spec, "--dataset", str(ds), "--out", str(out), "--device", "cpu",
                 "--cache", str(tmp_path / "c"), "--quiet"]) == 0
    sc = read_scores(out)
    assert sc.metrics == [spec] and len(sc.file_names) == 15
    assert np.isfinite(sc.values).all() and ((sc.values > 0) & (sc.values <= 1)).all()
    # the CLI's scores are the original's formula on the same images and prompts
    import pandas as pd
    from PIL import Image

    meta = pd.read_csv(ds / "metadata.csv")
    by_file = dict(zip(sc.file_names, sc.values[:, 0]))
    ims = [Image.open(ds / f).convert("RGB") for f in meta.file_name[:5]]
    want = ref_clip_t5_scores(tiny("clip_t5"), ims, list(meta.target_prompt[:5]))
    np.testing.assert_allclose([by_file[f] for f in meta.file_name[:5]], want, rtol=1e-6, atol=1e-9)
    capsys.readouterr()
    assert main(["leaderboard", "--dataset", str(ds), "--scores", str(out)]) == 0
    assert "vqascore:" in capsys.readouterr().out


def test_tower_runs_only_the_layers_its_feature_layer_needs():
    """LLaVA-1.5 and CLIP-FlanT5 read the tower's hidden_states[-2]: layers_up_to gives the same tensor from the
    layers before it only, and puts the encoder's layers back (after an error too)."""
    import torch
    from transformers import CLIPVisionConfig, CLIPVisionModel

    from ts2viz.metrics.backbones.vqa.llava import layers_up_to

    torch.manual_seed(0)
    clip = CLIPVisionModel(CLIPVisionConfig(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
                                            num_hidden_layers=4, num_attention_heads=4)).eval()
    enc = clip.vision_model.encoder if hasattr(clip, "vision_model") else clip.encoder
    layers = list(enc.layers)
    ran: list[int] = []
    for i, layer in enumerate(layers):
        layer.register_forward_hook(lambda mod, args, out, i=i: ran.append(i))
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        full = clip(x, output_hidden_states=True).hidden_states
        for at in (-2, -1, 0, 3, -5):
            ran.clear()
            with layers_up_to(clip, at) as kept:
                got = clip(x).last_hidden_state
            assert torch.equal(got, full[at]) and ran == list(range(kept))
    assert kept == 0 and list(enc.layers) == layers
    with pytest.raises(RuntimeError), layers_up_to(clip, -2):
        raise RuntimeError("inside")
    assert list(enc.layers) == layers
    with pytest.raises(InputError, match="outside"), layers_up_to(clip, -6):
        pass
