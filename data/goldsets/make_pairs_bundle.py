"""Rebuild data/goldsets/genaibench-pairwise from GenAI-Bench's release (run by hand; never at run or test time).

    python data/goldsets/make_pairs_bundle.py ../shared/reference/goldsets/genaibench-pairwise

Writes the side-by-side set in the ts2viz pair format (see ts2viz/gold/pairs.py):

* ``pairs.csv``         pair_id, prompt, image_a, image_b, model_a, model_b, human (A, B, tie-good, tie-bad)
* ``verdicts.parquet``  pair_id, order, judge, raw: every judge's full text (zstd), one row per pair and judge
* ``gold.json``         name, title, judges (in the order of the published table), sources, notes
* ``LICENSE``           the release's MIT licence, with the attribution at the top

Checks (asserts): every judge file has the same 1,735 pairs with the same prompt and human vote; the
release's own ``model_vote`` is what ``ts2viz.gold.pairs.extract_token`` (rule ``genaibench``) finds in the
text. ``emu2`` (72 of 1,735 pairs, not in the published table) and the empty ``gpt4o-mini`` are left out.
"""
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ts2viz.gold.pairs import extract_token  # noqa: E402

#: GenAI-Bench's vote names -> the ts2viz labels
HUMAN = {"leftvote": "A", "rightvote": "B", "tievote": "tie-good", "bothbad_vote": "tie-bad"}
#: the judges of genaibench_results.txt, in its order
JUDGES = ["random", "gpt4o", "gemini-1.5-pro", "llava", "idefics2", "llavanext", "minicpm-V-2.5", "blip2",
          "videollava", "cogvlm", "qwenVL", "instructblip", "idefics1", "ottervideo", "mantis-8b-idefics2",
          "otterimage", "mantis-8b-idefics2_8192", "kosmos2"]


def main(src: Path, root: Path) -> None:
    out = root / "genaibench-pairwise"
    out.mkdir(parents=True, exist_ok=True)
    pairs = None
    verdicts = []
    for judge in JUDGES:
        rows = [json.loads(line) for line in open(src / judge / "pairwise.jsonl", encoding="utf-8")]
        assert [r["idx"] for r in rows] == list(range(1735)), judge
        these = [(r["prompt"], HUMAN[r["human_vote"]]) for r in rows]
        if pairs is None:
            pairs = these
        assert these == pairs, judge
        for r in rows:
            assert extract_token(r["response"], "genaibench") == r["model_vote"], (judge, r["idx"])
            verdicts.append({"pair_id": str(r["idx"]), "order": "forward", "judge": judge, "raw": r["response"]})
    pd.DataFrame({"pair_id": [str(i) for i in range(len(pairs))], "prompt": [p for p, _ in pairs],
                  "image_a": "", "image_b": "", "model_a": "", "model_b": "",
                  "human": [h for _, h in pairs]}).to_csv(out / "pairs.csv", index=False, lineterminator="\n")
    pd.DataFrame(verdicts).to_parquet(out / "verdicts.parquet", index=False, compression="zstd",
                                      compression_level=19)
    meta = {
        "name": "genaibench-pairwise",
        "title": "GenAI-Bench image generation: 1,735 side-by-side human votes with 18 judges' verdicts",
        "judges": JUDGES,
        "human_labels": {"A": "leftvote", "B": "rightvote", "tie-good": "tievote", "tie-bad": "bothbad_vote"},
        "sources": ["https://github.com/TIGER-AI-Lab/GenAI-Bench (MIT), commit f0b0334: "
                    "results/image_generation/<judge>/pairwise.jsonl, genaibench_results.txt"],
        "notes": ["Images are not bundled (they are on the Hugging Face hub, TIGER-Lab/GenAI-Bench); image_a and "
                  "image_b are empty, and the release names no T2I models.",
                  "The verdict is parsed from the judge's text by ts2viz (rule genaibench: the release's "
                  "inference.py parse_response; or canonical).",
                  "emu2 (72 pairs, not in the published table) and gpt4o-mini (empty) are left out."],
    }
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    lic = (src / "LICENSE").read_text(encoding="utf-8")
    (out / "LICENSE").write_text(
        "GenAI-Bench side-by-side votes and judge outputs: from TIGER-AI-Lab/GenAI-Bench (Jiang et al., 2024, "
        "GenAI Arena: An Open Evaluation Platform for Generative Models), MIT (text below).\n"
        "Converted to the ts2viz pair format by data/goldsets/make_pairs_bundle.py.\n\n"
        + "-" * 72 + "\n\n" + lic, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).resolve().parent)
