"""Card contents of the four preference-reward families (converted to registry.Card once the house lands)."""

T = "tests/metrics/reference/"

PICKSCORE = dict(
    summary="PickScore: a CLIP-H (ViT-H/14) model fine-tuned on Pick-a-Pic's human preferences; the score of an "
            "image is the model's logit for its prompt, logit_scale.exp() * cosine (the authors' code).",
    paper="Kirstain et al., Pick-a-Pic: An Open Dataset of User Preferences for Text-to-Image Generation, NeurIPS 2023 "
          "(arXiv:2305.01569)",
    citation="""@inproceedings{kirstain2023pickapic,
  title     = {Pick-a-Pic: An Open Dataset of User Preferences for Text-to-Image Generation},
  author    = {Kirstain, Yuval and Polyak, Adam and Singer, Uriel and Matiana, Shahbuland and Penna, Joe and Levy, Omer},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2023}
}""",
    original="yuvalkirstain/PickScore (the model card's scoring snippet, yuvalkirstain/PickScore_v1); "
             "t2v_metrics 3.0 (pickscore-v1) for score=cosine",
    output_range="authors: about -100 to 100 (the learnt logit scale, ~100, times a cosine; real images give ~15-25); "
                 "cosine: -1 to 1",
    higher_is_better=True,
    model_names={"pickscore-v1": "yuvalkirstain/PickScore_v1"},
    options=[
        ("processor", "laion/CLIP-ViT-H-14-laion2B-s32B-b79K", "where the image processor and tokenizer come from "
         "(the authors take them from this repository: PickScore_v1 has none); a hub id or a local copy", None),
        ("score", "authors", "authors: logit_scale.exp() * cosine (the model card's snippet); cosine: the plain "
         "cosine (t2v_metrics 3.0's pickscore-v1). Same order of images either way", ("authors", "cosine")),
        ("batch_size", None, "images per model call (default: 16 on CPU, 128 on CUDA)", None),
        ("dtype", "float32", "weights' precision; float32 as the authors' snippet (which sets none)",
         ("float32", "float16", "bfloat16")),
    ],
    fidelity=[
        ("score", "logit_scale.exp() * cos(image, prompt), each embedding L2-normalised", "as the original",
         "score", T + "test_pickscore_reference.py::test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        ("t2v_metrics' score", "plain cosine with score=cosine", "documented difference", "score",
         T + "test_pickscore_reference.py::test_cosine_score_is_t2v_metrics_pickscore"),
        ("image preprocessing", "laion's CLIP processor, transformers' PIL backend (shorter side 224 bicubic, centre "
         "crop 224, OpenAI mean/std), as the authors' transformers 4 did", "as the original", "processor",
         T + "test_pickscore_reference.py::test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        ("prompt", "CLIP tokenizer, truncated to 77 tokens, each prompt encoded on its own", "as the original", None,
         T + "test_pickscore_reference.py::test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        ("batching", "images batched; a prompt's embedding memoised (the snippet scores one prompt's images at a "
         "time): the same numbers", "as the original", "batch_size",
         T + "test_pickscore_reference.py::test_prompt_order_and_batching_do_not_change_scores"),
        ("precision", "float32 by default", "as the original", "dtype", None),
    ],
    limitations=[
        "A preference score, not a faithfulness score: it mixes aesthetic preference (Pick-a-Pic users chose the "
        "image they liked) with prompt alignment.",
        "Prompts longer than 77 CLIP tokens are truncated.",
        "The authors compare images of one prompt (a softmax over them); scores of different prompts are not "
        "calibrated against each other.",
        "Trained on Stable Diffusion-era images and web users' prompts.",
    ],
)

HPSV2 = dict(
    summary="HPS v2 / v2.1 (Human Preference Score): open_clip ViT-H-14 fine-tuned on HPD v2; the score is the cosine "
            "of the image's and the prompt's embeddings, with HPSv2's own preprocessing (no crop: the image is "
            "padded to a square).",
    paper="Wu et al., Human Preference Score v2: A Solid Benchmark for Evaluating Human Preferences of Text-to-Image "
          "Synthesis, arXiv:2306.09341, 2023",
    citation="""@article{wu2023hpsv2,
  title   = {Human Preference Score v2: A Solid Benchmark for Evaluating Human Preferences of Text-to-Image Synthesis},
  author  = {Wu, Xiaoshi and Hao, Yiming and Sun, Keqiang and Chen, Yixiong and Zhu, Feng and Zhao, Rui and Li, Hongsheng},
  journal = {arXiv preprint arXiv:2306.09341},
  year    = {2023}
}""",
    original="tgxs002/HPSv2 (PyPI hpsv2 1.2.0: hpsv2.img_score.score); t2v_metrics 3.0's hpsv2 calls the same "
             "function with HPS v2.0",
    output_range="-1 to 1 (a cosine; real images give about 0.2-0.35)",
    higher_is_better=True,
    model_names={"hpsv2": "xswu/HPSv2 (HPS_v2_compressed.pt)", "hpsv2.0": "xswu/HPSv2 (HPS_v2_compressed.pt)",
                 "hpsv2.1": "xswu/HPSv2 (HPS_v2.1_compressed.pt)"},
    options=[
        ("checkpoint", None, "the checkpoint file's name in a folder or hub repository (a folder holding one of "
         "HPS_v2_compressed.pt / HPS_v2.1_compressed.pt needs none)", None),
        ("arch", "ViT-H-14", "the open_clip architecture of the checkpoint: a name, or an open_clip model-config "
         "JSON file", None),
        ("batch_size", None, "images per model call (default: 16 on CPU, 128 on CUDA)", None),
        ("dtype", "amp", "amp: float32 weights under float16 autocast on CUDA, float32 on the CPU (the original's "
         "precision='amp' and torch.cuda.amp.autocast()); or float32, float16, bfloat16 weights",
         ("amp", "float32", "float16", "bfloat16")),
    ],
    fidelity=[
        ("score", "image_features @ text_features, both L2-normalised; no logit scale", "as the original", None,
         T + "test_hpsv2_reference.py::test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        ("image preprocessing", "to a float tensor, longer side to the input size (bicubic on the tensor, "
         "torchvision's antialiasing), zero padding to a square, OpenAI mean/std", "as the original", None,
         T + "test_hpsv2_reference.py::test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        ("a non-square image whose longer side is already the input size", "padded to a square (the original "
         "resizes and pads only when the size changes, then fails on the non-square tensor)",
         "documented difference", None, None),
        ("prompt", "open_clip's CLIP tokenizer, 77 tokens (truncated, last token end-of-text)", "as the original",
         None, T + "test_hpsv2_reference.py::test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        ("checkpoint", "the released {'state_dict': ...} file loaded strictly into open_clip's model",
         "as the original", "checkpoint",
         T + "test_hpsv2_reference.py::test_a_folder_with_one_released_checkpoint_loads_it"),
        ("precision", "amp by default", "as the original", "dtype", None),
    ],
    limitations=[
        "Users report that HPSv2 favours over-saturated, high-contrast images (and generators tuned on it drift "
        "that way).",
        "Prompts longer than 77 CLIP tokens are truncated.",
        "A non-square image is seen whole with black borders (no crop): the borders are part of what is scored.",
        "HPS v2.0 (hpsv2, what t2v_metrics reports) and v2.1 (hpsv2.1) are different weights: name the one you mean.",
    ],
)

IMAGEREWARD = dict(
    summary="ImageReward: BLIP's image-grounded text encoder (ViT-L/16 + BERT with cross-attention) and an MLP head "
            "trained on 137k expert comparisons; the score is the head's output standardised with the authors' "
            "fixed mean and std.",
    paper="Xu et al., ImageReward: Learning and Evaluating Human Preferences for Text-to-Image Generation, NeurIPS 2023 "
          "(arXiv:2304.05977)",
    citation="""@inproceedings{xu2023imagereward,
  title     = {ImageReward: Learning and Evaluating Human Preferences for Text-to-Image Generation},
  author    = {Xu, Jiazheng and Liu, Xiao and Wu, Yuchen and Tong, Yuxuan and Li, Qinkai and Ding, Ming and Tang, Jie and Dong, Yuxiao},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2023}
}""",
    original="THUDM/ImageReward (PyPI image-reward 1.5: ImageReward.score / inference_rank)",
    output_range="unbounded; standardised, about N(0, 1) over the authors' generated images (real use: about -2 to 2)",
    higher_is_better=True,
    model_names={"imagereward-v1.0": "THUDM/ImageReward", "imagereward": "THUDM/ImageReward"},
    options=[
        ("tokenizer", "bert-base-uncased", "where the BERT tokenizer comes from (the authors load bert-base-uncased "
         "and add [DEC] and [ENC]); a hub id or a local copy", None),
        ("batch_size", None, "images per model call (default: 8 on CPU, 64 on CUDA)", None),
        ("dtype", "float32", "precision; float32 as the original", ("float32", "float16", "bfloat16")),
    ],
    fidelity=[
        ("score", "(MLP([CLS] state) - 0.16717362830052426) / 1.0333394966054072", "as the original", None,
         T + "test_imagereward_reference.py::test_score_is_image_rewards_normalised_mlp_reward"),
        ("prompt", "bert-base-uncased with [DEC] and [ENC], padded to 35 tokens, truncated", "as the original",
         "tokenizer", T + "test_imagereward_reference.py::test_score_is_image_rewards_normalised_mlp_reward"),
        ("image preprocessing", "shorter side 224 (PIL bicubic), centre crop 224, OpenAI mean/std", "as the original",
         None, T + "test_imagereward_reference.py::test_score_is_image_rewards_normalised_mlp_reward"),
        ("model", "the released ImageReward.pt loaded into transformers' BLIP vision and text models (the same "
         "layers under transformers' names) and the MLP", "as the original", None,
         T + "test_imagereward_reference.py::test_score_is_image_rewards_normalised_mlp_reward"),
        ("batching", "images batched (the original scores one image per call, or loops in inference_rank): the "
         "same numbers", "as the original", "batch_size",
         T + "test_imagereward_reference.py::test_batched_scores_are_inference_ranks_rewards"),
        ("precision", "float32 by default", "as the original", "dtype", None),
    ],
    limitations=[
        "Prompts are cut at 35 BERT tokens (about 30 words): the rest of a long prompt is not seen.",
        "Trained on DiffusionDB (Stable Diffusion) images and prompts; generators optimised against it (ReFL) "
        "learn to exploit it.",
        "The vision tower's number of attention heads is taken as width / 64 (ViT-L: 16), which holds for the "
        "released model; another BLIP variant would need its own.",
    ],
)

HPSV3 = dict(
    summary="HPSv3: a Qwen2-VL-7B reward model trained on HPDv3 with an uncertainty-aware ranking loss; the score is "
            "mu of the (mu, sigma) its head reads at the <|Reward|> token of HPSv3's instruction.",
    paper="Ma et al., HPSv3: Towards Wide-Spectrum Human Preference Score, ICCV 2025 (arXiv:2508.03789)",
    citation="""@inproceedings{ma2025hpsv3,
  title     = {HPSv3: Towards Wide-Spectrum Human Preference Score},
  author    = {Ma, Yuhang and Wu, Xiaoshi and Sun, Keqiang and Li, Hongsheng},
  booktitle = {Proceedings of the IEEE/CVF International Conference on Computer Vision},
  year      = {2025}
}""",
    original="MizzenAI/HPSv3 (PyPI hpsv3 1.0.0: HPSv3RewardInferencer.reward, transformers 4.45.2)",
    output_range="unbounded (mu of a Gaussian; real images give about 0-15)",
    higher_is_better=True,
    model_names={"hpsv3": "MizzenAI/HPSv3 (HPSv3.safetensors; base Qwen/Qwen2-VL-7B-Instruct)"},
    options=[
        ("base", "Qwen/Qwen2-VL-7B-Instruct", "where the configuration, tokenizer and image processor come from "
         "(HPSv3's checkpoint holds weights only); a hub id or a local copy", None),
        ("batch_size", None, "images per model call (default: 2 on CPU, 8 on CUDA)", None),
        ("dtype", None, "default: bfloat16 on GPU with the head in float32 (the original), float32 on the CPU (the "
         "original's bfloat16 cannot run there)", ("float32", "float16", "bfloat16")),
    ],
    fidelity=[
        ("score", "mu = head(last hidden state at <|Reward|>)[0]", "as the original", None,
         T + "test_hpsv3_reference.py::test_score_is_hpsv3s_mu_at_the_reward_token"),
        ("conversation", "Qwen2-VL's chat template, the image, HPSv3's instruction with the prompt, the reward suffix",
         "as the original", "base", T + "test_hpsv3_reference.py::test_score_is_hpsv3s_mu_at_the_reward_token"),
        ("image preprocessing", "smart_resize to 256*28*28 pixels (PIL bicubic), Qwen2-VL's processor (PIL backend)",
         "as the original", None, T + "test_hpsv3_reference.py::test_score_is_hpsv3s_mu_at_the_reward_token"),
        ("positions", "plain 0..n-1 (HPSv3 calls the decoder without Qwen2-VL's 3-D multimodal positions)",
         "as the original", None, T + "test_hpsv3_reference.py::test_score_is_hpsv3s_mu_at_the_reward_token"),
        ("batching", "right padding, as the original's batches; a batch of one gives the same", "as the original",
         "batch_size", T + "test_hpsv3_reference.py::test_an_image_alone_scores_as_in_a_batch"),
        ("precision", "bfloat16 on GPU, head float32; float32 on the CPU", "as the original", "dtype", None),
    ],
    limitations=[
        "A 7B model: about 16 GB of GPU memory in bfloat16; slow on the CPU.",
        "Every image is resized to about 448x448 pixels (256*28*28), whatever its size.",
        "The instruction asks for overall quality and alignment: a preference score, not a faithfulness score.",
        "Only mu is reported; sigma (the model's uncertainty) is not.",
    ],
)
