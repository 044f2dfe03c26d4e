"""A full-size check (not a fixture: 1.8 GB): ImageReward's real architecture (BLIP_Pretrain(vit='large') with BLIP's
own med_config.json, MLP(768)) built with random weights by the original's classes, saved as ImageReward.pt, scored
by the original's ``score`` here and by ts2viz (run ``--ts2viz`` from the project's venv on the same folder).

    /work/side/rewards-ir/bin/python tools/reference/imagereward/check_full_size.py OUT_DIR
    PYTHONPATH=. python tools/reference/imagereward/check_full_size.py OUT_DIR --ts2viz

What it shows that the tiny fixture cannot: the key mapping and the head count (width / 64) on ViT-L/16 and
BERT-base with cross-attention at their released sizes. The tokenizer is the tiny WordPiece vocabulary padded to
bert-base-uncased's 30522 entries (the real one cannot be downloaded here), so the prompts' ids differ from
bert-base-uncased's; both sides use the same file.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

# BLIP's configs/med_config.json, the file THUDM/ImageReward holds
MED = {"architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
       "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
       "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
       "num_hidden_layers": 12, "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": 30524,
       "encoder_width": 768, "add_cross_attention": True}


def original(out: Path) -> None:
    import reward_support as rs

    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch

    sys.path.insert(0, str(HERE))
    from make_fixture import PUNCT, PIECES, WORDS, image_reward_modules

    tok = out / "bert-base-uncased"
    tok.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + PIECES + PUNCT
    vocab += [f"[unused{i}]" for i in range(30522 - len(vocab))]
    (tok / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (tok / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "model_max_length": 512}))
    rs.fake_hub_cache(cache, "bert-base-uncased", tok)
    model_dir = out / "ImageReward"
    model_dir.mkdir(exist_ok=True)
    (model_dir / "med_config.json").write_text(json.dumps(MED, indent=2))
    utils, ir, bp, vit = image_reward_modules()
    torch.manual_seed(0)
    model = ir.ImageReward(device="cpu", med_config=str(model_dir / "med_config.json")).eval()
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.add_(torch.randn_like(p) * (0.02 if p.dim() > 1 else 0.1))
    torch.save(model.state_dict(), model_dir / "ImageReward.pt")
    rows = rs.write_images(out)
    with torch.no_grad():
        for r in rows:
            r["score"] = float(model.score(r["prompt"], str(out / r["image"])))
    (out / "expected.json").write_text(json.dumps({"rows": rows}, indent=1))
    print("original:", [round(r["score"], 6) for r in rows])


def ts2viz_side(out: Path) -> None:
    import numpy as np

    from ts2viz.metrics import load

    rows = json.loads((out / "expected.json").read_text())["rows"]
    m = load(f"imagereward:{out / 'ImageReward'}?tokenizer={out / 'bert-base-uncased'}", device="cpu")
    got = m([str(out / r["image"]) for r in rows], [r["prompt"] for r in rows])
    want = np.array([r["score"] for r in rows])
    print("ts2viz:  ", [round(float(g), 6) for g in got])
    print("max relative difference:", float(np.max(np.abs(got - want) / np.abs(want))))


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    ts2viz_side(folder) if "--ts2viz" in sys.argv else original(folder)
