"""A generated human-rated gold folder (images.csv, ratings.csv, scores.csv) for tests."""
import numpy as np
import pandas as pd


def make_folder(path, n_prompts=20, models=("A", "B", "C"), seed=0):
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    imgs, ratings, scores = [], [], []
    for q in range(n_prompts):
        for j, mdl in enumerate(models):
            iid = f"p{q}-{mdl}"
            imgs.append({"image_id": iid, "prompt": f"prompt number {q}", "t2i_model": mdl})
            true = rng.normal() + j * 0.5
            for r in range(3):
                ratings.append({"image_id": iid, "rater": f"r{r}", "rating": int(np.clip(round(3 + true + rng.normal()), 1, 5))})
            scores.append({"image_id": iid, "good": true + 0.3 * rng.normal(), "bad": rng.normal()})
    pd.DataFrame(imgs).to_csv(path / "images.csv", index=False)
    pd.DataFrame(ratings).to_csv(path / "ratings.csv", index=False)
    pd.DataFrame(scores).to_csv(path / "scores.csv", index=False)
    return path


