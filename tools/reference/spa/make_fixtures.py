"""Soft pairwise accuracy fixtures from mt-metrics-eval's own ``pce.py`` (run in a side venv with numpy only).

    /work/side/mtme/bin/python tools/reference/spa/make_fixtures.py /work/side/src/google-research+mt-metrics-eval

Generated data (numpy seed 0): T2I-model x prompt scores for the humans (Likert means, many ties) and for
three metrics (continuous, discrete, one that reverses the humans), under the default and other
permutation counts and seeds. Writes tests/fixtures/reference/spa/pce_cases.json: the inputs, the p-value
matrices of ``pce.compute_pairwise_p_values`` and ``pce.compute_one_minus_pce`` for each metric.
"""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, sys.argv[1])
from mt_metrics_eval import pce  # noqa: E402

OUT = Path(__file__).resolve().parents[3] / "tests/fixtures/reference/spa/pce_cases.json"


def nan_to_none(a):
    return [[None if np.isnan(v) else float(v) for v in row] for row in np.asarray(a)]


def main():
    rng = np.random.default_rng(0)
    cases = []
    for n_sys, n_seg, n_perm, seed in [(5, 160, 1000, 4), (4, 40, 1000, 4), (6, 75, 500, 11), (3, 12, 2000, 0)]:
        quality = rng.normal(0, 0.3, size=(n_sys, 1))
        human = np.clip(np.round(3 + quality + rng.normal(0, 1, size=(n_sys, n_seg))), 1, 5) / 5
        metrics = {
            "continuous": human + rng.normal(0, 0.3, size=human.shape),
            "discrete": np.round(4 * (human + rng.normal(0, 0.4, size=human.shape))) / 4,
            "reversed": -human + rng.normal(0, 0.1, size=human.shape),
        }
        hp = pce.compute_pairwise_p_values(human, num_permutations=n_perm, seed=seed)
        case = {"n_permutations": n_perm, "seed": seed, "human": human.tolist(), "human_p": nan_to_none(hp),
                "metrics": {}}
        for name, m in metrics.items():
            mp = pce.compute_pairwise_p_values(m, num_permutations=n_perm, seed=seed)
            case["metrics"][name] = {"scores": m.tolist(), "p": nan_to_none(mp),
                                     "spa": float(pce.compute_one_minus_pce(hp, mp))}
        cases.append(case)
    meta = {"source": "google-research/mt-metrics-eval mt_metrics_eval/pce.py (Apache-2.0), commit 68a481a",
            "numpy": np.__version__, "made_by": "tools/reference/spa/make_fixtures.py"}
    OUT.write_text(json.dumps({"meta": meta, "cases": cases}) + "\n", encoding="utf-8")
    print(OUT, [round(c["metrics"]["continuous"]["spa"], 4) for c in cases])


if __name__ == "__main__":
    main()
