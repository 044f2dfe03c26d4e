"""VQAScore's models and ITMScore / ITCScore in the app's live scoring: an operator types any spec; a public
app's visitors pick only the offered ones; an upload scored with VQAScore says what the model was asked."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ui_helpers import write_dataset, write_scores

from ts2viz.errors import InputError
from ts2viz.ui import load_state
from ts2viz.ui.callbacks import live as cb_live
from ts2viz.ui.serving.access import public

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "vqascore"
SPECS = {"vqascore": f"vqascore:{FIX / 'qwen2-vl' / 'qwen2-vl-tiny'}",
         "itmscore": f"itmscore:{FIX / 'blip2-itm' / 'blip2-itm-tiny'}",
         "itcscore": f"itcscore:{FIX / 'blip2-itm' / 'blip2-itm-tiny'}"}


@pytest.fixture()
def ds(tmp_path):
    write_dataset(tmp_path / "ds", big_image=False)
    return tmp_path / "ds"


def test_operator_scores_vqascore_itm_and_itc_live_and_uploads_say_what_was_asked(ds, tmp_path):
    app = load_state(str(ds), [str(write_scores(tmp_path, ds))], cache_root=tmp_path / "cache").view()
    listed = dict(cb_live.library_families())
    for family, spec in SPECS.items():
        assert family in listed                                   # the accordion lists the family
        cb_live.live_score(app, spec, "seg", 1)
        files = [im.file_name for n in app.dataset[1].nodes for im in n.images]
        assert np.isfinite(app.image_scores(files, [spec])).all()
    upload = ds / app.dataset[1].nodes[0].images[0].file_name
    out = cb_live.score_uploads(app, [str(upload)], "a red cat on the tree", SPECS["vqascore"], seg_id=1)
    assert 'Asked: "Does this image show "a red cat on the tree"?"' in out["message"]
    assert 'the answer "Yes"' in out["message"]
    out = cb_live.score_uploads(app, [str(upload)], "a red cat", SPECS["itmscore"], seg_id=1)
    assert "Asked" not in out["message"]                          # no question: nothing said


def test_public_visitor_picks_only_an_offered_vqascore(ds, tmp_path):
    app = load_state(str(ds), cache_root=tmp_path / "cache", access=public([SPECS["vqascore"]])).view()
    with pytest.raises(InputError, match="not offered"):
        cb_live.live_score(app, SPECS["itmscore"], "seg", 1)
    shown = app.app.access.display_name(SPECS["vqascore"])
    assert "fixtures" not in shown                                # no server path shown to visitors
    cb_live.live_score(app, shown, "seg", 1)
    assert np.isfinite(app.image_scores([im.file_name for im in app.dataset[1].nodes[0].images], [shown])).all()
