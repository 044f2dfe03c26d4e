"""The preference rewards in the app's live scoring: an operator types any spec (nothing special is needed:
they are library specs like any other, listed in the families accordion); a public app's visitors pick only
the offered ones, by display name."""
from __future__ import annotations

import numpy as np
import pytest
from reward_specs import reward_specs
from ui_helpers import write_dataset, write_scores

from ts2viz.errors import InputError
from ts2viz.ui import load_state
from ts2viz.ui.serving.access import public
from ts2viz.ui.callbacks import board as cb_board, live as cb_live


@pytest.fixture()
def ds(tmp_path):
    write_dataset(tmp_path / "ds", big_image=False)
    return tmp_path / "ds"


def test_operator_scores_every_reward_family_live(ds, tmp_path):
    app = load_state(str(ds), [str(write_scores(tmp_path, ds))], cache_root=tmp_path / "cache").view()
    listed = dict(cb_live.library_families())
    for family, spec in reward_specs().items():
        assert family in listed                                   # the accordion lists the family
        cb_live.live_score(app, spec, "seg", 1)
        assert spec in app.metrics and app.kind_of(spec) == "live"
        files = [im.file_name for n in app.dataset[1].nodes for im in n.images]
        assert np.isfinite(app.image_scores(files, [spec])).all()
    board = cb_board.leaderboard(app, "paper").set_index("metric")
    assert all(board.loc[s, "source"] == "live" for s in reward_specs().values())


def test_public_visitor_picks_only_an_offered_reward(ds, tmp_path):
    specs = reward_specs()
    app = load_state(str(ds), cache_root=tmp_path / "cache", access=public([specs["pickscore"]])).view()
    with pytest.raises(InputError, match="not offered"):
        cb_live.live_score(app, specs["hpsv2"], "seg", 1)
    shown = app.app.access.display_name(specs["pickscore"])
    assert shown != specs["pickscore"] and "fixtures" not in shown   # no server path shown to visitors
    with pytest.raises(InputError, match="not offered"):
        cb_live.live_score(app, specs["pickscore"], "seg", 1)       # the spec itself is not a choice
    cb_live.live_score(app, shown, "seg", 1)
    assert np.isfinite(app.image_scores([im.file_name for im in app.dataset[1].nodes[0].images], [shown])).all()
