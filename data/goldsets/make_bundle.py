"""Rebuild data/goldsets from the public releases (run by hand; never at run or test time).

    python data/goldsets/make_bundle.py ../shared/reference/goldsets

Writes one folder per rated set in the ts2viz rated-set format (see ts2viz/gold/folder.py and the
README section "Human gold standards"):

* ``images.csv``   image_id, prompt_id, t2i_model
* ``prompts.csv``  prompt_id, prompt
* ``ratings.csv``  image_id, rating_set, rater, rating   (long: one row per rating)
* ``scores.csv``   image_id, then one column per released metric (optional)
* ``qa_answers.parquet`` (TIFA160 only): every released VQA answer to the DSG, TIFA and VQ2A questions
* ``gold.json``    name, description, default rating set, scales, sources, notes
* ``tags.csv``     (TIFA160) prompt_id, family, tag: the prompt's DSG-1K question categories
* ``LICENSE``      the release's licence text, with the attribution at the top

Conversions (each checked here with an assert):
- TIFA160: image key ``{text_id}_{model}`` of the TIFA release; the DSG release's ``item_id``
  tifa160_N / ``t2i_model`` are mapped to it through ``source_id`` and the model names below.
- ImagenHub: image ``{model}/{uid}``; raters' ``[SC, PQ]`` pairs split into rating sets ``sc`` and
  ``pq``; VIEScore SC per judge = min(sub-scores) / 10 (VIEScore's definition), NaN where unscored.
  The release has no prompt texts beside the ratings: prompts are the ``uid`` only.
- GenAI-Bench: image ``{id}_{model}``; the two corrupt ratings (41 and 33, outside 1..5) become
  missing. The teaser subset takes its ratings from the 527-prompt file and keeps the released
  human mean as a rating set ``released_mean``.
- TIFA160 tags: a prompt is in slice C of family ``dsg-category`` when at least one of its DSG-1K
  questions (``dsg-1k-anns.csv``, item ``tifa160_N`` mapped through ``source_id``) has category C; broad
  categories as DSG writes them (``entity``, ``attribute``, ...), detailed ones as ``broad/detailed``
  (``attribute/color``); DSG's ``-`` (no detailed category, ``global``) gives the broad tag only.

Also ``gecko2k/``, not a rated set (the release has prompts only): ``prompts.csv`` (prompt_id, prompt),
``tags.csv`` (prompt_id, family, tag: ``gecko-prompt-set`` Gecko(S)/Gecko(R), ``gecko-category`` the part
of ``dataset_id`` before the ``/`` (Gecko(S)), ``gecko-skill`` before the ``:``, ``gecko-subskill`` the whole
``dataset_id``, ``gecko-source`` a Gecko(R) prompt's source dataset), ``reliability.csv`` (prompt_id and the
released ``max_disagreement_less_X`` flags as they are), LICENSE and gold.json.
"""
import csv
import json
import math
import shutil
import sys
from pathlib import Path

import pandas as pd

DSG_T2I = {"mini-dalle": "mini_dalle", "vq-diffusion": "vq_diffusion", "sd1dot1": "stable_diffusion_v1_1",
           "sd1dot5": "stable_diffusion_v1_5", "sd2dot1": "stable_diffusion_v2_1"}
DSG_VQA = {"mplug": "mPLUG-large", "instructblip": "InstructBLIP", "pali17b": "PaLI-17B"}
TIFA_METRICS = ["clipscore_vitb32", "bleu", "rouge", "meteor", "spice", "tifa_vilt", "tifa_git-large",
                "tifa_ofa-large", "tifa_blip2-flant5xl", "tifa_mplug-large"]


def write(out: Path, name: str, df: pd.DataFrame) -> None:
    df.to_csv(out / name, index=False, lineterminator="\n")


def licence(src: Path, out: Path, attribution: str) -> None:
    text = Path(src).read_text(encoding="utf-8")
    (out / "LICENSE").write_text(attribution.strip() + "\n\n" + "-" * 72 + "\n\n" + text, encoding="utf-8")


def tifa160(ref: Path, root: Path) -> None:
    out = root / "tifa160"
    out.mkdir(parents=True, exist_ok=True)
    tifa = json.load(open(ref / "tifa160/human_annotations_with_scores.json", encoding="utf-8"))
    assert len(tifa) == 800
    images, prompts, ratings, scores = [], {}, [], []
    models = {}
    for key, d in tifa.items():
        model = d["image_path"][len(d["text_id"]) + 1:].rsplit(".", 1)[0]
        assert key == f"{d['text_id']}_{model}", key
        models[model] = True
        images.append({"image_id": key, "prompt_id": d["text_id"], "t2i_model": model})
        prompts[d["text_id"]] = d["text"]
        for r, v in enumerate(d["human_scores"], 1):
            ratings.append({"image_id": key, "rating_set": "tifa", "rater": f"tifa-{r}", "rating": v})
        assert math.isclose(sum(d["human_scores"]) / len(d["human_scores"]), d["human_avg"])
        scores.append({"image_id": key, **{m: d[m] for m in TIFA_METRICS}})
    assert set(DSG_T2I.values()) == set(models)
    dsg = pd.read_csv(ref / "dsg/tifa160-likert-anns.csv")
    item2text = dict(zip(dsg.item_id, dsg.source_id))
    assert len(item2text) == 160 and set(item2text.values()) == set(prompts)
    for row in dsg.itertuples():
        key = f"{row.source_id}_{DSG_T2I[row.t2i_model]}"
        assert key in tifa, key
        ratings.append({"image_id": key, "rating_set": "dsg", "rater": str(row.worker_id), "rating": int(row.answer)})
    write(out, "images.csv", pd.DataFrame(images))
    write(out, "prompts.csv", pd.DataFrame({"prompt_id": list(prompts), "prompt": list(prompts.values())}))
    write(out, "ratings.csv", pd.DataFrame(ratings))
    write(out, "scores.csv", pd.DataFrame(scores))

    # The released VQA answers, one row per (VQA model, question set, image, question).
    deps = pd.read_csv(ref / "dsg/dsg-1k-anns.csv")
    deps = deps[deps.item_id.str.startswith("tifa160_")]
    parents = {(r.item_id, int(r.proposition_id)): str(r.dependency) for r in deps.itertuples()}
    frames = []
    for vqa_file, vqa_name in DSG_VQA.items():
        for qg in ("dsg", "tifa", "vq2a"):
            df = pd.read_csv(ref / f"dsg/vqa_answers_release/{vqa_file}_{qg}.csv", keep_default_na=False)
            # the files also cover DSG-1k prompts and other T2I models
            df = df[df.item_id.str.startswith("tifa160_") & df.t2i_model.isin(list(DSG_T2I))].copy()
            df["image_id"] = [f"{item2text[i]}_{DSG_T2I[t]}" for i, t in zip(df.item_id, df.t2i_model)]
            if qg == "dsg":
                qid = df.question_id.astype(int)
                par = [parents[(i, q)] for i, q in zip(df.item_id, qid)]
                # the answer file's own dependency column agrees with dsg-1k-anns.csv
                assert all(str(a).replace(" ", "") == p.replace(" ", "") for a, p in zip(df.dependency_id, par))
            else:
                qid = df.groupby(["item_id", "t2i_model"]).cumcount() + 1     # DSG's code: row order
                par = ["0"] * len(df)
            frames.append(pd.DataFrame({"vqa_model": vqa_name, "question_set": qg, "image_id": df.image_id,
                                        "question_id": qid.astype("int32"), "parents": par,
                                        "question": df.question, "answer": df.answer}))
    qa = pd.concat(frames, ignore_index=True)
    qa.to_parquet(out / "qa_answers.parquet", index=False, compression="zstd")
    meta = {
        "name": "tifa160",
        "title": "TIFA160 (TIFA v1.0 human annotations, rated again by the DSG authors)",
        "default_rating_set": "dsg",
        "rating_sets": {"dsg": "Likert 1-5, about 5 raters per image (DSG release, tifa160-likert-anns.csv)",
                        "tifa": "Likert 1-5, 2 ratings per image (TIFA release, human_annotations.json)"},
        "scale": [1, 5],
        "sources": ["https://github.com/Yushi-Hu/tifa (Apache-2.0): human_annotations/",
                    "https://github.com/j-min/DSG (Apache-2.0): dsg/data/, vqa_answers_release/"],
        "notes": ["TIFA rater ids are positions (tifa-1, tifa-2), not persons.",
                  "clipscore_vitb32 is 100 x cosine; bleu/rouge/meteor/spice compare BLIP-2 captions with the prompt.",
                  "qa_answers.parquet: question_id of TIFA and VQ2A questions is the row order per image "
                  "(as DSG's scoring code numbers them); parents are DSG's dependencies (0 = none)."],
    }
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    tifa_lic = (ref / "tifa160/LICENSE").read_text(encoding="utf-8")
    lic = ("TIFA160 ratings and metric scores: from Yushi-Hu/tifa (Hu et al., 2023, TIFA: Accurate and "
           "Interpretable Text-to-Image Faithfulness Evaluation with Question Answering), Apache-2.0.\n"
           "DSG Likert ratings, DSG questions and VQA answers: from j-min/DSG (Cho et al., 2024, Davidsonian "
           "Scene Graph), Apache-2.0.\nConverted to the ts2viz format by data/goldsets/make_bundle.py. "
           "Both releases are under the Apache License 2.0; its text (from the TIFA release) follows.")
    (out / "LICENSE").write_text(lic + "\n\n" + "-" * 72 + "\n\n" + tifa_lic, encoding="utf-8")
    print("tifa160:", len(images), "images,", len(ratings), "ratings,", len(qa), "answers")


def imagenhub(ref: Path, root: Path) -> None:
    out = root / "imagenhub-t2i"
    out.mkdir(parents=True, exist_ok=True)
    ratings, images = [], {}
    for r in (1, 2, 3):
        df = pd.read_csv(ref / f"imagenhub_t2i/human/Text-To-Image_rater{r}.tsv", sep="\t")
        for row in df.itertuples(index=False):
            uid = row[0]
            for model, cell in zip(df.columns[1:], row[1:]):
                sc, pq = json.loads(cell)
                key = f"{model}/{uid}"
                images[key] = {"image_id": key, "prompt_id": uid.rsplit(".", 1)[0], "t2i_model": model}
                ratings.append({"image_id": key, "rating_set": "sc", "rater": f"rater{r}", "rating": sc})
                ratings.append({"image_id": key, "rating_set": "pq", "rater": f"rater{r}", "rating": pq})
    assert len(images) == 985, len(images)
    auto = pd.read_csv(ref / "imagenhub_t2i/automatic_scores.csv")
    auto["image_id"] = auto.t2i_model + "/" + auto.uid
    assert set(auto.image_id) <= set(images)
    cols = {}
    clip = auto[auto.aspect == "CLIP_Score"]
    cols["clipscore"] = dict(zip(clip.image_id, clip.scores.astype(float)))
    sc = auto[auto.aspect == "SC"]
    for judge, g in sc.groupby("judge", sort=True):
        vals = {}
        for k, s in zip(g.image_id, g.scores):
            lst = json.loads(s)
            lst = lst if isinstance(lst, list) else [lst]        # a few cells hold a bare number
            vals[k] = min(lst) / 10.0 if lst else float("nan")
        cols[f"viescore_sc:{judge}"] = vals
    keys = list(images)
    scores = pd.DataFrame({"image_id": keys, **{c: [v.get(k, float("nan")) for k in keys] for c, v in cols.items()}})
    prompts = sorted({v["prompt_id"] for v in images.values()}, key=lambda s: int(s.split("_")[1]))
    write(out, "images.csv", pd.DataFrame(list(images.values())))
    write(out, "prompts.csv", pd.DataFrame({"prompt_id": prompts, "prompt": [""] * len(prompts)}))
    write(out, "ratings.csv", pd.DataFrame(ratings))
    write(out, "scores.csv", scores)
    meta = {
        "name": "imagenhub-t2i",
        "title": "ImagenHub text-to-image human ratings (VIEScore paper implementation)",
        "default_rating_set": "sc",
        "rating_sets": {"sc": "semantic consistency (prompt faithfulness) in {0, 0.5, 1}, 3 raters",
                        "pq": "perceptual quality in {0, 0.5, 1}, 3 raters (not faithfulness)"},
        "scale": [0, 1],
        "not_faithfulness": ["pq"],
        "sources": ["https://github.com/TIGER-AI-Lab/VIEScore (MIT): paper_implementation/"],
        "notes": ["The release holds no prompt texts beside the ratings: prompts are named by uid only.",
                  "viescore_sc:JUDGE = min of the judge's SC sub-scores / 10 (VIEScore's SC); NaN where the "
                  "judge left the image unscored. clipscore is the release's autometrics CLIP_Score."],
    }
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    licence(ref / "imagenhub_t2i/LICENSE", out,
            "ImagenHub text-to-image ratings and VIEScore / CLIPScore per image: from TIGER-AI-Lab/VIEScore "
            "(Ku et al., 2024, VIEScore: Towards Explainable Metrics for Conditional Image Synthesis Evaluation; "
            "ratings of ImagenHub, Ku et al., 2024), MIT licence (text below).\nConverted to the ts2viz "
            "format by data/goldsets/make_bundle.py.")
    print("imagenhub-t2i:", len(images), "images,", len(ratings), "ratings,", scores.shape[1] - 1, "metrics")


def genaibench(ref: Path, root: Path) -> None:
    full = json.load(open(ref / "genaibench/genai_image_527.json", encoding="utf-8"))
    teaser = json.load(open(ref / "genaibench/genai_image_teaser.json", encoding="utf-8"))
    assert len(full) == 527
    images, prompts, ratings = [], {}, []
    bad = []
    for d in full.values():
        prompts[d["id"]] = d["prompt"]
        for model, vals in d["models"].items():
            key = f"{d['id']}_{model}"
            images.append({"image_id": key, "prompt_id": d["id"], "t2i_model": model})
            for r, v in enumerate(vals, 1):
                if not 1 <= v <= 5:
                    bad.append((key, v))
                    continue        # corrupt (41, 33): left out, see gold.json
                ratings.append({"image_id": key, "rating_set": "likert", "rater": f"rater{r}", "rating": v})
    assert sorted(v for _, v in bad) == [33, 41], bad
    lic = ("GenAI-Bench image ratings: from linzhiqiu/t2v_metrics (Lin et al., 2024, GenAI-Bench: Evaluating and "
           "Improving Compositional Text-to-Visual Generation; Evaluating Text-to-Visual Generation with "
           "Image-to-Text Generation), Apache-2.0 (text below).\nConverted to the ts2viz format by "
           "data/goldsets/make_bundle.py.")
    rating_doc = {"likert": "Likert 1-5 (prompt alignment), 3 raters per image"}
    sources = ["https://github.com/linzhiqiu/t2v_metrics (Apache-2.0): genai_image.json (earlier commit), "
               "genai_image_teaser.json"]
    out = root / "genaibench"
    out.mkdir(parents=True, exist_ok=True)
    write(out, "images.csv", pd.DataFrame(images))
    write(out, "prompts.csv", pd.DataFrame({"prompt_id": list(prompts), "prompt": list(prompts.values())}))
    write(out, "ratings.csv", pd.DataFrame(ratings))
    meta = {"name": "genaibench", "title": "GenAI-Bench image ratings (527 prompts x 6 models)",
            "default_rating_set": "likert", "rating_sets": rating_doc, "scale": [1, 5], "sources": sources,
            "notes": [f"Two corrupt ratings are left out: {bad[0][0]} ({bad[0][1]}), {bad[1][0]} ({bad[1][1]}).",
                      "Rater ids are positions (rater1..3), not persons. No metric scores are released for "
                      "this set: add your own with --scores."]}
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    licence(ref / "genaibench/LICENSE", out, lic)
    print("genaibench:", len(images), "images,", len(ratings), "ratings")

    out = root / "genaibench-teaser"
    out.mkdir(parents=True, exist_ok=True)
    t_images, t_ratings, t_scores, t_prompts = [], [], [], {}
    by_key = {}
    for r in ratings:
        by_key.setdefault(r["image_id"], []).append(r)
    n_mean_diff = 0
    for d in teaser.values():
        t_prompts[d["id"]] = d["prompt"]
        assert full[d["id"]]["prompt"] == d["prompt"] if d["id"] in full else True
        for model, v in d["models"].items():
            key = f"{d['id']}_{model}"
            t_images.append({"image_id": key, "prompt_id": d["id"], "t2i_model": model})
            t_ratings.extend(by_key.get(key, []))
            t_ratings.append({"image_id": key, "rating_set": "released_mean", "rater": "mean",
                              "rating": float(v["human"])})
            own = [r["rating"] for r in by_key.get(key, [])]
            if own and abs(sum(own) / len(own) - float(v["human"])) > 0.006:
                n_mean_diff += 1
            t_scores.append({"image_id": key, "vqascore_clip_flant5": float(v["clip_flant5"]),
                             "clipscore": float(v["clip"])})
    write(out, "images.csv", pd.DataFrame(t_images))
    write(out, "prompts.csv", pd.DataFrame({"prompt_id": list(t_prompts), "prompt": list(t_prompts.values())}))
    write(out, "ratings.csv", pd.DataFrame(t_ratings))
    write(out, "scores.csv", pd.DataFrame(t_scores))
    meta = {"name": "genaibench-teaser", "title": "GenAI-Bench teaser subset with released VQAScore and CLIPScore",
            "default_rating_set": "likert",
            "rating_sets": {**rating_doc, "released_mean": "the release's per-image human mean (3 decimals)"},
            "scale": [1, 5], "sources": sources,
            "notes": ["Ratings per rater come from the 527-prompt file; released_mean is the teaser file's "
                      f"'human' field ({n_mean_diff} images differ from the mean of the 527 file's ratings "
                      "by more than rounding).",
                      "vqascore_clip_flant5 and clipscore are the released values (3 decimals)."]}
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    licence(ref / "genaibench/LICENSE", out, lic)
    print("genaibench-teaser:", len(t_images), "images;", n_mean_diff, "released means differ from the ratings")


def tifa160_tags(ref: Path, root: Path) -> None:
    dsg = pd.read_csv(ref / "dsg/tifa160-likert-anns.csv")
    item2text = dict(zip(dsg.item_id, dsg.source_id))
    anns = pd.read_csv(ref / "dsg/dsg-1k-anns.csv", keep_default_na=False)
    anns = anns[anns.item_id.str.startswith("tifa160_")]
    assert anns.item_id.nunique() == 160 and set(anns.item_id) <= set(item2text)
    rows = set()
    for r in anns.itertuples():
        pid = item2text[r.item_id]
        rows.add((pid, "dsg-category", r.category_broad))
        if r.category_detailed not in ("-", ""):
            rows.add((pid, "dsg-category", f"{r.category_broad}/{r.category_detailed}"))
    tags = pd.DataFrame(sorted(rows), columns=["prompt_id", "family", "tag"])
    order = {p: i for i, p in enumerate(pd.read_csv(root / "tifa160/prompts.csv").prompt_id)}
    tags = tags.sort_values(["prompt_id", "tag"], key=lambda c: c.map(order) if c.name == "prompt_id" else c)
    write(root / "tifa160", "tags.csv", tags)
    print("tifa160 tags:", len(tags), "rows,", tags.tag.nunique(), "tags")


def gecko2k(ref: Path, root: Path) -> None:
    out = root / "gecko2k"
    out.mkdir(parents=True, exist_ok=True)
    df = pd.read_csv(ref / "gecko2k/prompts.csv", dtype={"prompt_id": str}, keep_default_na=False)
    assert len(df) == 1546 and df.prompt_id.is_unique
    write(out, "prompts.csv", df[["prompt_id", "prompt"]])
    rows = []
    for r in df.itertuples():
        rows.append((r.prompt_id, "gecko-prompt-set", r.prompt_type))
        if r.prompt_type == "Gecko(S)":
            skill = r.dataset_id.split(":", 1)[0]
            rows += [(r.prompt_id, "gecko-category", skill.split("/", 1)[0]), (r.prompt_id, "gecko-skill", skill),
                     (r.prompt_id, "gecko-subskill", r.dataset_id)]
        else:
            assert r.prompt_type == "Gecko(R)", r.prompt_type
            rows.append((r.prompt_id, "gecko-source", r.dataset_id.rsplit("_", 1)[0]))
    write(out, "tags.csv", pd.DataFrame(rows, columns=["prompt_id", "family", "tag"]))
    flags = [c for c in df.columns if "max_disagreement_less_" in c]
    assert all(df[c].dtype == bool for c in flags)
    write(out, "reliability.csv", df[["prompt_id", *flags]])
    meta = {"name": "gecko2k", "title": "Gecko2K prompts (Gecko(S) skills, Gecko(R) sources, reliable-prompt flags)",
            "sources": ["https://github.com/google-deepmind/gecko_benchmark_t2i (Apache-2.0), commit e5f8ac2: "
                        "prompts.csv, DATABASE.md"],
            "notes": ["No images or ratings are released: these are tags for a user's rated set whose prompts "
                      "are Gecko2K's (matched on the prompt text).",
                      "max_disagreement_less_X: reliable at threshold X; v1_ used the standard deviation of "
                      "Likert ratings, the others the variance (DATABASE.md)."]}
    (out / "gold.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    licence(ref / "gecko2k/LICENSE", out, "Gecko2K prompts: from google-deepmind/gecko_benchmark_t2i (Wiles et "
            "al., 2024, Revisiting Text-to-Image Evaluation with Gecko), Apache-2.0. Converted to the ts2viz "
            "format by data/goldsets/make_bundle.py.")
    print("gecko2k:", len(df), "prompts,", len(rows), "tags")


def main(ref: Path, root: Path) -> None:
    tifa160(ref, root)
    tifa160_tags(ref, root)
    gecko2k(ref, root)
    imagenhub(ref, root)
    genaibench(ref, root)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(__file__).resolve().parent)
