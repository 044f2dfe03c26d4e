"""MMRB2 position-swap accuracy fixture from MMRB2's own ``compute_accuracy.py`` (standard library only).

    python3 tools/reference/mmrb2/make_fixtures.py /work/side/src/facebookresearch+MMRB2

MMRB2's data are CC BY-NC 4.0 and are never bundled: this script *generates* a benchmark JSON and two
predictions JSONs in MMRB2's layout (``pairs[].id/chosen/response_a/response_b``; ``{pair_id: {"forward":
[{"judgement", "evaluator", "metadata"}], "reverse": [...]}}``), with empty judgements, ties, one missing
pair, and a position-biased judge, and records ``compute_task_accuracy``'s counts and accuracy for each.
Writes tests/fixtures/reference/mmrb2/{t2i.json, judge_*.json, expected.json}.
"""
import dataclasses
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(sys.argv[1]) / "evaluate/compute_scores"))
import compute_accuracy  # noqa: E402

OUT = Path(__file__).resolve().parents[3] / "tests/fixtures/reference/mmrb2"


def main():
    rnd = random.Random(0)
    models = ["imagen4", "gpt-image-1", "sd3.5-large", "flux-dev"]
    pairs = []
    for i in range(60):
        ma, mb = rnd.sample(models, 2)
        pid = f"gen_{i:03d}_{ma}_{mb}"
        pairs.append({"id": pid, "response_a": {"model_name": ma, "response_content": [["image", f"{pid}_0.jpg"]]},
                      "response_b": {"model_name": mb, "response_content": [["image", f"{pid}_1.jpg"]]},
                      "chosen": rnd.choice("AB"), "human_annotations": [rnd.choice([1, 2]) for _ in range(3)],
                      "prompt_source": "generated", "prompt_metadata": {"id": str(i)}})
    bench = {"pairs": pairs}
    (OUT / "t2i.json").write_text(json.dumps(bench, indent=1) + "\n", encoding="utf-8")

    def judgement(p, order, kind):
        if kind == "biased":                       # prefers the first image shown, 85% of the time
            return "A" if rnd.random() < 0.85 else "B"
        truth = p["chosen"] if order == "forward" else {"A": "B", "B": "A"}[p["chosen"]]
        r = rnd.random()
        if r < 0.08:
            return ""                              # empty: MMRB2 does not count it
        if r < 0.14:
            return "tie"                           # counted, and wrong
        return truth if r < 0.75 else {"A": "B", "B": "A"}[truth]

    expected = {}
    for kind in ("noisy", "biased"):
        preds = {}
        for k, p in enumerate(pairs):
            if kind == "noisy" and k == 7:
                continue                           # a missing pair
            preds[p["id"]] = {o: [{"judgement": judgement(p, o, kind), "evaluator": f"judge-{kind}",
                                   "metadata": {"raw_response": f"... [[{o}]]"}}] for o in ("forward", "reverse")}
        (OUT / f"judge_{kind}.json").write_text(json.dumps(preds, indent=1) + "\n", encoding="utf-8")
        res = compute_accuracy.compute_task_accuracy(preds, bench, f"judge-{kind}")
        expected[f"judge-{kind}"] = dataclasses.asdict(res)
    meta = {"source": "facebookresearch/MMRB2 evaluate/compute_scores/compute_accuracy.py, commit 7ff0552 "
                      "(run, not copied)", "made_by": "tools/reference/mmrb2/make_fixtures.py"}
    (OUT / "expected.json").write_text(json.dumps({"meta": meta, "results": expected}, indent=1) + "\n",
                                       encoding="utf-8")
    print(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main()
