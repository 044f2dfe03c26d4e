"""Rebuild data/ts2 from the TS2 reference release (run by hand; never at run or test time).

    python data/ts2/make_bundle.py ../shared/reference/ts2

Converts published_scores.csv (joined to metadata.csv by row order, as the release requires) to the
ts2viz scores format: a file_name key, readable metric names, the stray quotes of six llmscore_over
cells removed ('"3' means 3), and the two lower-is-better LLMScore columns declared in the header.
"""
import csv
import shutil
import sys
from pathlib import Path

VLMS = {"blip1": "BLIP1", "instruct_blip": "InstructBLIP", "llava": "LLaVA-1.5",
        "llava-alt": "LLaVA-1.5-alt", "mplug": "mPLUG", "fuyu": "Fuyu", "gpt4v": "GPT4V"}
NAMES = {"clipscore": "CLIPScore", "alignscore": "ALIGNScore"}
NAMES.update({f"{k}_tifa": f"TIFA-{v}" for k, v in VLMS.items()})
NAMES.update({f"{k}_dsg": f"DSG-{v}" for k, v in VLMS.items()})
NAMES.update({"llmscore_over": "LLMScore-Over", "llmscore_ec": "LLMScore-EC", "viescore": "VIEScore"})
LOWER = ["LLMScore-Over", "LLMScore-EC"]


def main(ref: Path, out: Path) -> None:
    meta = list(csv.DictReader(open(ref / "metadata.csv", newline="", encoding="utf-8")))
    pub = list(csv.DictReader(open(ref / "published_scores.csv", newline="", encoding="utf-8")))
    assert len(meta) == len(pub) == 2840
    order = list(NAMES)
    rows = []
    for m, p in zip(meta, pub):
        assert m["id"] == p["id"], (m, p)
        rows.append([m["file_name"]] + [p[c].strip().lstrip('"') for c in order])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "published_scores.csv", "w", newline="", encoding="utf-8") as f:
        f.write(f"# ts2viz-scores lower_is_better={','.join(LOWER)}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["file_name"] + [NAMES[c] for c in order])
        w.writerows(rows)
    for name in ("metadata.csv", "TS2_TIFA_Q.csv", "TS2_DSG_Q.csv", "TS2_DSG_Q_dependency.csv"):
        shutil.copyfile(ref / name, out / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).resolve().parent)
