"""Images of every Pillow mode read as the originals read them (issue 39, item 9; tools/reference/<family>/make_fixture.py --modes).

Each fixture (``tests/fixtures/reference/<family>/modes/``) holds one image per mode (L, LA, RGBA, P, I;16,
CMYK, an EXIF-rotated JPEG) and, from the original's own code, its score of the file (``original``) and its
score of the RGB copy ``image_mode=ts2viz`` reads (``ts2viz_reading``, made by the fixture script without
ts2viz's code). ts2viz with the default ``image_mode=original`` must give the first, with ``ts2viz`` the
second; the modes where the two differ are those the family's card names (:data:`DIFFERS`).
"""
from __future__ import annotations

import numpy as np
import pytest
from reward_fixtures import FIXTURES, RTOL, fixture

from ts2viz.metrics import family, load

#: family -> (spec of the tiny model, options, the fixture's key of the original's score)
CASES = {
    "hpsv2": (lambda r, e: f"hpsv2:{_p(r, e['checkpoint'])}?arch={_p(r, e['arch'])}", {}, "score"),
    "imagereward": (lambda r, e: f"imagereward:{_p(r, e['checkpoint']).parent}?tokenizer={_p(r, e['tokenizer'])}",
                    {}, "score"),
    "pickscore": (lambda r, e: f"pickscore:{_p(r, e['model'])}", {"processor": None}, "authors"),
    "hpsv3": (lambda r, e: f"hpsv3:{_p(r, e['checkpoint']).parent}?base={_p(r, e['base'])}", {}, "mu"),
}
def _p(root, rel):
    return (root / rel).resolve()


#: the modes whose ``image_mode=original`` and ``ts2viz`` scores differ, as each card says (and HPSv2's RGBA:
#: its own code raises, ts2viz reads it as ``ts2viz`` does; its card names that too)
DIFFERS = {"hpsv2": {"I;16"}, "imagereward": {"I;16", "LA", "RGBA", "P"}, "pickscore": {"I;16"}, "hpsv3": {"I;16"}}
#: the least relative difference that counts as "differs" (100x the agreement tolerance)
APART = 100 * RTOL
#: absolute slack beside RTOL (a score near 0, e.g. PickScore's -6.6e-4 on the EXIF image)
ATOL = 1e-6


def _modes(fam: str):
    return fixture(f"{fam}/modes")


_METRICS: dict = {}


def _metric(fam: str, mode: str):
    key = (fam, mode)
    if key not in _METRICS:
        root, exp = _modes(fam)
        spec, opts, _ = CASES[fam]
        opts = dict(opts)
        if "processor" in opts:
            opts["processor"] = str(_p(root, exp["processor"]))
        _METRICS[key] = load(spec(root, exp), device="cpu", image_mode=mode, **opts)
    return _METRICS[key]


def _close(got, want) -> bool:
    return abs(got - want) <= ATOL + RTOL * abs(want)


@pytest.mark.parametrize("fam", sorted(CASES))
def test_default_image_mode_scores_every_mode_as_the_original(fam):
    root, exp = _modes(fam)
    key = CASES[fam][2]
    m = _metric(fam, "original")
    assert m.config["image_mode"] == "original"
    got = m([str(root / r["image"]) for r in exp["rows"]], [r["prompt"] for r in exp["rows"]])
    assert {r["mode"] for r in exp["rows"]} == {"L", "LA", "RGBA", "P", "I;16", "CMYK", "RGB"}
    for r, g in zip(exp["rows"], got):
        if "error" in r:  # HPSv2's own code cannot score it: ts2viz reads it as image_mode=ts2viz does
            assert fam == "hpsv2" and r["mode"] == "RGBA" and "4 channels" in r["error"]
            assert _close(g, r["ts2viz_reading"]), (r["image"], g, r["ts2viz_reading"])
            continue
        assert _close(g, r[key]), f"{fam} {r['image']} ({r['mode']}): got {g}, the original {r[key]}"


@pytest.mark.parametrize("fam", sorted(CASES))
def test_image_mode_ts2viz_scores_the_copy_ts2viz_reads(fam):
    root, exp = _modes(fam)
    m = _metric(fam, "ts2viz")
    assert m.config["image_mode"] == "ts2viz"
    assert m.config_hash != _metric(fam, "original").config_hash  # recorded with the scores
    got = m([str(root / r["image"]) for r in exp["rows"]], [r["prompt"] for r in exp["rows"]])
    for r, g in zip(exp["rows"], got):
        assert _close(g, r["ts2viz_reading"]), f"{fam} {r['image']}: got {g}, want {r['ts2viz_reading']}"


@pytest.mark.parametrize("fam", sorted(CASES))
def test_the_modes_that_differ_are_the_ones_the_card_names(fam):
    _, exp = _modes(fam)
    key = CASES[fam][2]
    differs = set()
    for r in exp["rows"]:
        if "error" in r:
            continue
        a, b = r[key], r["ts2viz_reading"]
        rel = abs(a - b) / max(abs(a), abs(b))
        if rel > APART:
            differs.add(r["mode"])
        else:  # a margin: no mode sits between "the same" and "different"
            assert rel <= RTOL, f"{fam} {r['mode']}: relative difference {rel:.2g} neither within {RTOL} nor over {APART}"
    assert differs == DIFFERS[fam]
    row = next(f for f in family(fam).card.fidelity if f.option == "image_mode")
    for mode in DIFFERS[fam] | {r["mode"] for r in exp["rows"] if "error" in r}:
        assert f"`{mode}`" in row.ts2viz + row.original, (fam, mode, row)
    assert "EXIF" in row.ts2viz
    # an RGB image (the EXIF JPEG) reads the same either way
    rgb = next(r for r in exp["rows"] if r["mode"] == "RGB")
    assert rgb[key] == rgb["ts2viz_reading"]


def test_rgb_images_are_read_bit_identically_in_both_modes():
    from PIL import Image

    from ts2viz.metrics.common.base import load_image
    from ts2viz.metrics.common.image_mode import READINGS

    path = FIXTURES / "hpsv2" / "images" / "a-landscape.png"
    want = np.asarray(Image.open(path).convert("RGB"))
    for how in READINGS:
        got = load_image(path, how)
        assert got.mode == "RGB" and np.array_equal(np.asarray(got), want)


def test_an_unknown_image_mode_is_one_line():
    from ts2viz.errors import InputError

    root, exp = _modes("hpsv2")
    with pytest.raises(InputError) as e:
        load(CASES["hpsv2"][0](root, exp), device="cpu", image_mode="pillow")
    assert "\n" not in str(e.value) and "image_mode='pillow' is not one of original, ts2viz" in str(e.value)


def test_the_engine_reads_images_as_the_metric_does():
    """The scoring engine's preparation threads (not only a plain call) read each image with the metric's own
    reading: ImageReward's images of every mode through the engine give image-reward's scores."""
    from ts2viz.engine import score_images

    root, exp = _modes("imagereward")
    m = _metric("imagereward", "original")
    got = score_images(m, [root / r["image"] for r in exp["rows"]], [r["prompt"] for r in exp["rows"]],
                       use_cache=False)
    for r, g in zip(exp["rows"], got):
        assert _close(g, r["score"]), (r["image"], g, r["score"])
