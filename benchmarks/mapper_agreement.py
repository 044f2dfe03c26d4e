"""How often an answer -> choice mapper agrees with the TS2 release's own mapping (not pass/fail).

For each bundled QA metric (6 VQA models x TIFA/DSG) it maps the released free-form answers with the
given mapper and prints, per metric: the share of questions mapped to the same choice as the
release's ``mc_answer``, and the share whose correct/incorrect decision equals the release's
``correct``; overall and on the questions that are not yes/no.

    python benchmarks/mapper_agreement.py [--mapper lexical|sbert:MODEL] [--device cpu]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mapper", default="lexical")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()

    import numpy as np

    from ts2viz.metrics.mapping import is_correct, is_yes_no, load_mapper
    from ts2viz.qa_records import bundled_qa_records

    mapper = load_mapper(args.mapper, device=args.device)
    recs = bundled_qa_records()
    recs = recs.assign(answer=recs["answer"].astype(str), choices=recs["choices"].astype(str),
                       expected=recs["expected"].astype(str), mapped=recs["mapped"].astype(str))
    pairs = recs[["answer", "choices"]].drop_duplicates()
    table = dict(zip(zip(pairs["answer"], pairs["choices"]),
                     mapper.map(list(pairs["answer"]), [c.split("|") for c in pairs["choices"]])))
    mine = np.array([table[(a, c)] for a, c in zip(recs["answer"], recs["choices"])])
    same_choice = mine == recs["mapped"].to_numpy()
    same_decision = np.array([is_correct(m, e) for m, e in zip(mine, recs["expected"])]) == recs["correct"].to_numpy()
    open_q = ~np.array([is_yes_no(c.split("|")) for c in recs["choices"]])
    print(f"mapper: {args.mapper}  ({len(recs)} question answers, {len(pairs)} distinct answer/choices pairs)")
    print(f"{'metric':<20} {'questions':>9} {'same choice':>12} {'same correct':>13} {'open qs':>8} "
          f"{'open: same choice':>18}")
    for metric in recs["metric"].cat.categories:
        at = (recs["metric"] == metric).to_numpy()
        o = at & open_q
        print(f"{metric:<20} {at.sum():>9} {100 * same_choice[at].mean():>11.1f}% {100 * same_decision[at].mean():>12.1f}% "
              f"{o.sum():>8} {100 * same_choice[o].mean() if o.any() else float('nan'):>17.1f}%")
    print(f"{'all':<20} {len(recs):>9} {100 * same_choice.mean():>11.1f}% {100 * same_decision.mean():>12.1f}% "
          f"{open_q.sum():>8} {100 * same_choice[open_q].mean():>17.1f}%")


if __name__ == "__main__":
    main()
