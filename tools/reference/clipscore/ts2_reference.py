"""TS2's own CLIPScore (and ALIGNScore's formula) on the tiny CLIP of ``make_fixtures.py``, by TS2's code.

    /work/side/fc-dsg/bin/python tools/reference/clipscore/ts2_reference.py T2ISCORESCORE_CHECKOUT

T2ISCORESCORE_CHECKOUT is a checkout of michaelsaxon/T2IScoreScore (commit 93ebf89). The scores behind
TS2's published ``clipscore`` column came from ``src/_old/correlation_scores/run_simscore.py``
(``CLIPScorer.calculate_score``: ``CLIPProcessor(text=prompt, images=image, padding=True)``, the model's
``logits_per_image`` = ``exp(logit_scale) * cos``, no prefix, no clamp, float32 on the CPU, model
``openai/clip-vit-base-patch16``), then min-max scaled over all 2,840 images and rounded to 2 decimals;
``src/T2IMetrics/correlation/clip.py`` is the same formula. That module imports scikit-learn and the
BLIP/ALIGN classes at its top, so the class is read from the file and run here with the tiny model in
place of the hub one (its ``__init__`` names the hub id; nothing else is changed).

This runs under transformers 4.31 (the side environment of DSG, ``/work/side/fc-dsg``): TS2 ran a
transformers 4.x whose CLIP image processor is PIL-based (transformers 5 calls that one
``CLIPImageProcessorPil``). Prompts longer than CLIP's 77 tokens make TS2's code fail (no truncation):
they get ``null``.
"""
from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = ROOT / "tests" / "fixtures" / "reference" / "clipscore"


def ts2_scorer_class(checkout: Path):
    """``CLIPScorer`` from TS2's ``run_simscore.py``, executed from its source (only that class and the
    abstract base it subclasses; the module's other imports are not needed for it)."""
    src = (checkout / "src" / "_old" / "correlation_scores" / "run_simscore.py").read_text()
    tree = ast.parse(src)
    keep = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CLIPScorer"]
    base_src = (checkout / "src" / "_old" / "correlation_scores" / "sim_score.py").read_text()
    ns: dict = {}
    exec(compile(base_src, "sim_score.py", "exec"), ns)
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    ns.update(Image=Image, CLIPModel=CLIPModel, CLIPProcessor=CLIPProcessor)
    exec(compile(ast.Module(body=keep, type_ignores=[]), "run_simscore.py", "exec"), ns)
    return ns["CLIPScorer"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ts2_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import torch
    import transformers
    from transformers import CLIPModel, CLIPProcessor

    torch.set_num_threads(1)
    expected = json.loads((args.out / "expected.json").read_text())
    folder = args.out / expected["model"]
    scorer = ts2_scorer_class(args.ts2_checkout).__new__(ts2_scorer_class(args.ts2_checkout))
    scorer.processor = CLIPProcessor.from_pretrained(folder)      # TS2: ...from_pretrained("openai/clip-vit-base-patch16")
    scorer.model = CLIPModel.from_pretrained(folder).eval()
    scores = []
    for name, prompt in zip(expected["images"], expected["prompts"]):
        n_tokens = len(scorer.processor.tokenizer(prompt)["input_ids"])
        if n_tokens > scorer.model.config.text_config.max_position_embeddings:
            scores.append(None)
            continue
        with torch.no_grad():
            scores.append(float(scorer.calculate_score(str(args.out / name), prompt)))
    expected["ts2"] = scores
    expected["source"]["ts2"] = (f"michaelsaxon/T2IScoreScore@93ebf89 src/_old/correlation_scores/run_simscore.py "
                                 f"CLIPScorer.calculate_score, transformers {transformers.__version__}, CPU float32 "
                                 "(before TS2's dataset-wide min-max scaling)")
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(scores)


if __name__ == "__main__":
    main()
