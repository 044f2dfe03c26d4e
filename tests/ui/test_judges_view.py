"""The Judges view's plain functions: the table people read, the triage list, one pair's text marked."""
from __future__ import annotations

import pytest

from ts2viz.errors import InputError
from ts2viz.ui.callbacks import judges as jc


def test_accuracy_table_shows_the_published_numbers_with_intervals():
    t = jc.accuracy_table("genaibench-pairwise", "genaibench").set_index("judge")
    assert len(t) == 18
    assert t.loc["gpt4o", "4-label acc %"].startswith("45.59 [")
    assert t.loc["gemini-1.5-pro", "4-label acc %"].startswith("44.67 [")
    assert jc.accuracy_table("genaibench-pairwise", "canonical").set_index("judge").loc[
        "gemini-1.5-pro", "4-label acc %"].startswith("44.61 [")


def test_triage_first_rows_are_pairs_every_judge_gets_wrong():
    t = jc.triage_table("genaibench-pairwise", "genaibench")
    assert len(t) == jc.TRIAGE_ROWS and list(t.columns) == ["pair", "raters", "judges wrong %", "prompt"]
    assert t["judges wrong %"].iloc[0] == 100.0
    assert t["judges wrong %"].is_monotonic_decreasing


def test_pair_detail_marks_the_parsed_token_and_escapes_text():
    html = jc.pair_detail("genaibench-pairwise", "genaibench", "0", "gpt4o")
    assert '<mark class="judge-verdict">[[A&gt;B]]</mark>' in html
    assert 'class="judge-human">B<' in html and 'class="judge-parsed">A<' in html and "✗" in html
    assert "<script" not in html


def test_bad_choices_are_one_line_errors():
    with pytest.raises(InputError, match="no pair '99999'"):
        jc.pair_detail("genaibench-pairwise", "genaibench", "99999", "gpt4o")
    with pytest.raises(InputError, match="no judge"):
        jc.pair_detail("genaibench-pairwise", "genaibench", "0", "gpt5")
    with pytest.raises(InputError, match="no side-by-side set"):
        jc.accuracy_table("../etc", "genaibench")
    with pytest.raises(InputError, match="no parse rule"):
        jc.triage_table("genaibench-pairwise", "eval")


def test_bias_figure_has_a_bar_per_judge():
    from ts2viz.figures.style import plain_figures

    with plain_figures():
        fig = jc.bias_figure("genaibench-pairwise", "genaibench")
    data = fig.to_plotly_json()["data"] if hasattr(fig, "to_plotly_json") else fig.data
    assert len(data[0]["y"]) == 18
