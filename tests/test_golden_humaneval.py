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
    for col in ("n", "spearman", "kendall", "pearson", "pairwise_acc"):
        assert col in csv_rows.columns
        if col != "n":
            assert (csv_rows[f"{col}_lo"] <= csv_rows[col] + 1e-12).all()
            assert (csv_rows[col] <= csv_rows[f"{col}_hi"] + 1e-12).all()
    # the human ceiling: the TIFA raters' mean against the DSG raters' mean (SOURCE.md: Spearman 0.83)
    assert round(csv_rows.loc["human:tifa", "spearman"], 2) == 0.83


def test_dsg_code_details_are_what_reproduces_the_readme(capsys):
    # leaving the 5 images without DSG answers out (instead of scoring them 0, as DSG's code does)
    # moves the DSG row off the published numbers: the default follows the code
    assert main(["humaneval", "--gold", "tifa160", "--dsg-missing", "nan", "--no-ci", "--no-ceiling",
                 "--metrics", "dsg:PaLI-17B", "--out", "-"]) == 0
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("metric").loc["dsg:PaLI-17B"]
    assert row["n"] == 795 and round(row["spearman"], 3) != 0.571
