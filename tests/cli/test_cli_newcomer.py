"""Issue 40's command-line paths as a newcomer meets them: a metric module in the current folder, an
unknown option's hint, a folder that is the TS2 release beside the bundled scores, the app's start errors."""
from __future__ import annotations

import shutil
import socket
import sys

import pytest

from ts2viz.cli import main


def test_callable_module_in_the_current_folder(tmp_path, monkeypatch, capsys):
    # the console script does not put the current folder on sys.path; the metric's import must
    (tmp_path / "here_metric_40.py").write_text("def score(images, prompts):\n    return [1.0] * len(images)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    from ts2viz.metrics import load

    m = load("callable:here_metric_40:score")
    from PIL import Image

    im = Image.new("RGB", (4, 4))
    assert list(m.score_prepared([m.prepare(im)], ["a prompt"])) == [1.0]
    assert str(tmp_path) not in sys.path and "" not in sys.path    # the path is left as it was


def test_unknown_option_says_the_close_one(capsys):
    with pytest.raises(SystemExit) as e:
        main(["leaderboard", "--cis"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2 and err.endswith("unrecognized arguments: --cis; did you mean --ci?"), err


def test_a_folder_that_is_the_ts2_release_takes_the_bundled_scores(tmp_path, capsys):
    # the TS2 release's metadata under another folder name (no images needed for the leaderboard)
    from ts2viz.paths import bundled_data_dir

    (tmp_path / "ts2-data").mkdir()
    shutil.copy(bundled_data_dir() / "ts2" / "metadata.csv", tmp_path / "ts2-data" / "metadata.csv")
    assert main(["leaderboard", "--dataset", str(tmp_path / "ts2-data"), "--scores", "ts2", "--metrics",
                 "CLIPScore", "--out", "-"]) == 0
    via_folder = capsys.readouterr().out
    assert main(["leaderboard", "--metrics", "CLIPScore", "--out", "-"]) == 0
    assert via_folder == capsys.readouterr().out and "CLIPScore,0.714139" in via_folder
    # another dataset is still refused, in one line
    other = tmp_path / "other"
    other.mkdir()
    rows = (tmp_path / "ts2-data" / "metadata.csv").read_text().splitlines()
    (other / "metadata.csv").write_text("\n".join(rows[:-1]) + "\n")
    assert main(["leaderboard", "--dataset", str(other), "--scores", "ts2"]) == 2
    assert "is not the TS2 release" in capsys.readouterr().err


def test_app_on_a_port_in_use_is_one_line_exit_2(capsys):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        assert main(["app", "--port", str(s.getsockname()[1])]) == 2
    finally:
        s.close()
    err = [ln for ln in capsys.readouterr().err.strip().splitlines() if ln.startswith("ts2viz: error")]
    assert len(err) == 1 and "choose another with --port" in err[0], err
