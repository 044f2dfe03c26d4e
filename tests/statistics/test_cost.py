"""Costs per metric and the quality-vs-cost Pareto front (ts2viz.cost): a hand-worked example, a loop from
the definition, the parsers' one-line errors, the CLI and the app's view."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ts2viz.cost import cost_table, parse_costs, pareto_front, read_costs
from ts2viz.errors import InputError

REPO = Path(__file__).resolve().parents[2]


def test_hand_worked_front():
    #            A     B     C     D (= B)  E (no cost)  F (worse and dearer than A)
    quality = [0.80, 0.70, 0.90, 0.70, 0.95, 0.60]
    cost = [2.0, 1.0, 10.0, 1.0, np.nan, 3.0]
    assert pareto_front(quality, cost).tolist() == [True, True, True, True, False, False]


def test_front_matches_loop():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = np.round(rng.random(12), 1)
        c = np.round(rng.random(12) * 5, 0) + 1
        want = [not any(q[j] >= q[i] and c[j] <= c[i] and (q[j] > q[i] or c[j] < c[i]) for j in range(12))
                for i in range(12)]
        assert pareto_front(q, c).tolist() == want


def test_parsers(tmp_path):
    assert parse_costs("A=1, B = 2.5\nC=3e-2;") == {"A": 1.0, "B": 2.5, "C": 0.03}
    with pytest.raises(InputError, match="name=cost"):
        parse_costs("A 1")
    with pytest.raises(InputError, match="positive"):
        parse_costs("A=-1")
    with pytest.raises(InputError, match="no such metric"):
        parse_costs("Z=1", ["A"])
    p = tmp_path / "c.csv"
    p.write_text("metric,cost\nA,1\nB,x\n")
    with pytest.raises(InputError, match="row 3"):
        read_costs(p)
    p.write_text("metric,cost\nA,1\nA,2\n")
    with pytest.raises(InputError, match="twice"):
        read_costs(p)
    p.write_text("name,seconds\nA,1\n")
    with pytest.raises(InputError, match="header"):
        read_costs(p)
    t = cost_table(["A", "B", "C"], {"A": 1.0, "C": 5.0}, {"ord_avg": [0.5, 0.9, 0.7]})
    assert np.isnan(t.cost[1]) and t.front["ord_avg"].tolist() == [True, False, True]


def test_cli_leaderboard_cost(tmp_path):
    costs = tmp_path / "costs.csv"
    costs.write_text("metric,cost\nCLIPScore,0.02\nALIGNScore,0.03\nTIFA-GPT4V,4.0\nDSG-GPT4V,6.0\n"
                     "DSG-InstructBLIP,1.5\nVIEScore,5.0\n")
    out = tmp_path / "lb.csv"
    r = subprocess.run([sys.executable, "-m", "ts2viz", "leaderboard", "--cost", str(costs), "--out", str(out)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    got = set(df.metric[df.pareto_ord_avg.astype(bool)])
    # Ord: CLIPScore 71.4 @0.02 < ALIGNScore 73.9 @0.03 < DSG-InstructBLIP 80.2 @1.5; the rest dominated
    assert got == {"CLIPScore", "ALIGNScore", "DSG-InstructBLIP"}
    # Sep: ALIGNScore 92.8 @0.03 beats every dearer metric
    assert set(df.metric[df.pareto_sep_avg.astype(bool)]) == {"CLIPScore", "ALIGNScore"}
    assert df.cost.notna().sum() == 6
    assert "Pareto front" in r.stdout and "seconds per image" in r.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("metric,cost\nNoSuchMetric,1\n")
    r = subprocess.run([sys.executable, "-m", "ts2viz", "leaderboard", "--cost", str(bad)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 2 and "row 2" in r.stderr and "Traceback" not in r.stderr


def test_app_cost_view(tmp_path):
    from ts2viz.ui import load_state
    from ts2viz.ui.views.cost_view import cost_view

    view = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    fig, md = cost_view(view, "paper", "CLIPScore=0.02, ALIGNScore=0.03; TIFA-GPT4V=4\nDSG-InstructBLIP=1.5",
                        "seconds per image", "ord_avg")
    assert "CLIPScore (71.4 at 0.02) → ALIGNScore (73.9 at 0.03) → DSG-InstructBLIP (80.2 at 1.5)" in md
    front = [t for t in fig.data if t.name == "Pareto front"][0]
    assert list(front.text) == ["CLIPScore", "ALIGNScore", "DSG-InstructBLIP"]
    assert fig.layout.xaxis.type == "log"
    with pytest.raises(InputError, match="no such metric"):
        cost_view(view, "paper", "<b>x</b>=1", "seconds per image", "ord_avg")
    with pytest.raises(InputError):
        cost_view(view, "paper", "CLIPScore=1", "dollars", "ord_avg")
    _, md = cost_view(view, "paper", "", "seconds per image", "sep_avg")
    assert "Type a cost" in md
