"""Golden: `ts2viz humaneval --gold tifa160 --out -` reproduces the DSG authors' published TIFA160
correlations (j-min/DSG README, "Human correlation on TIFA-160": Spearman rho / Kendall tau-b of QG/A
scores against the mean of the DSG Likert ratings over the 800 images).

The expected numbers are typed from that README, not produced by this code.
"""
import io

import pandas as pd
import pytest

from ts2viz.cli import main

# (Spearman, Kendall tau-b) per VQA model, from the DSG README
DSG_README = {
    "dsg": {"mPLUG-large": (0.463, 0.380), "InstructBLIP": (0.442, 0.364), "PaLI-17B": (0.571, 0.458)},
    "vq2a": {"mPLUG-large": (0.212, 0.164), "InstructBLIP": (0.426, 0.352), "PaLI-17B": (0.207, 0.157)},
    # "dsg without dependency" rows of the same README
    "dsg-nodep": {"mPLUG-large": (0.464, 0.378), "InstructBLIP": (0.436, 0.355), "PaLI-17B": (0.570, 0.457)},
}


@pytest.fixture(scope="module")
def csv_rows():
    import contextlib

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["humaneval", "--gold", "tifa160", "--out", "-"]) == 0
    return pd.read_csv(io.StringIO(buf.getvalue())).set_index("metric")


@pytest.mark.parametrize("family", list(DSG_README))
def test_dsg_readme_rows(csv_rows, family):
    for vqa, (rho, tau) in DSG_README[family].items():
        row = csv_rows.loc[f"{family}:{vqa}"]
        assert row["n"] == 800
        assert round(row["spearman"], 3) == rho, (family, vqa, row["spearman"])
        assert round(row["kendall"], 3) == tau, (family, vqa, row["kendall"])


def test_output_columns_and_intervals(csv_rows):
    # the leave-one-rater-out ceiling has point values only (its gold differs per rating)
    assert csv_rows.loc["human:leave-one-rater-out", ["spearman", "kendall", "pearson"]].notna().all()
    assert csv_rows.loc["human:leave-one-rater-out", "n"] == 3995
    rows = csv_rows.drop(index="human:leave-one-rater-out")
    for col in ("n", "spearman", "kendall", "pearson", "pairwise_acc"):
        assert col in csv_rows.columns
        if col != "n":
            assert (rows[f"{col}_lo"] <= rows[col] + 1e-12).all()
            assert (rows[col] <= rows[f"{col}_hi"] + 1e-12).all()
    # the human ceiling: the TIFA raters' mean against the DSG raters' mean (SOURCE.md: Spearman 0.83)
    assert round(csv_rows.loc["human:tifa", "spearman"], 2) == 0.83


def test_dsg_code_details_are_what_reproduces_the_readme(capsys):
    # leaving the 5 images without DSG answers out (instead of scoring them 0, as DSG's code does)
    # moves the DSG row off the published numbers: the default follows the code
    assert main(["humaneval", "--gold", "tifa160", "--dsg-missing", "nan", "--no-ci", "--no-ceiling",
                 "--metrics", "dsg:PaLI-17B", "--out", "-"]) == 0
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("metric").loc["dsg:PaLI-17B"]
    assert row["n"] == 795 and round(row["spearman"], 3) != 0.571


# TIFA's human_annotations/compute_correlation.ipynb (Yushi-Hu/tifa), its printed outputs against the
# TIFA raters' mean (human_avg): the value labelled "Spearman's Correlation" is np.corrcoef (Pearson),
# the Kendall value is scipy's tau-b. Typed from the notebook's outputs.
TIFA_NOTEBOOK = {
    "meteor": (0.33965916777485317, 0.27407599432086477),
    "bleu": (0.18334016729588443, 0.18791013860699693),
    "rouge": (0.3288894058298478, 0.24485782545105927),
    "spice": (0.3280527854243443, 0.2317581980131657),
    "clipscore_vitb32": (0.3318181645103688, 0.2314458979024208),
    "tifa_vilt": (0.4932251792578269, 0.3824088520807112),
    "tifa_git-large": (0.5445007948927731, 0.42550824027221545),
    "tifa_ofa-large": (0.4961472092111418, 0.37247819040318836),
    "tifa_blip2-flant5xl": (0.5589831246126169, 0.4359972113027652),
    "tifa_mplug-large": (0.5967201059577838, 0.4717164648720951),
}


def test_tifa_notebook_spearman_is_the_np_corrcoef_option(capsys):
    assert main(["humaneval", "--gold", "tifa160", "--ratings", "tifa", "--spearman", "np-corrcoef", "--no-ci",
                 "--metrics", ",".join(TIFA_NOTEBOOK), "--out", "-"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("metric")
    for m, (labelled_spearman, tau) in TIFA_NOTEBOOK.items():
        assert got.loc[m, "spearman"] == pytest.approx(labelled_spearman, abs=2e-6)      # CSV has 6 decimals
        assert got.loc[m, "kendall"] == pytest.approx(tau, abs=2e-6)
    # the textbook Spearman (the default) is a different number
    assert main(["humaneval", "--gold", "tifa160", "--ratings", "tifa", "--no-ci", "--metrics", "meteor",
                 "--out", "-"]) == 0
    textbook = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("metric").loc["meteor", "spearman"]
    assert abs(textbook - TIFA_NOTEBOOK["meteor"][0]) > 0.01
