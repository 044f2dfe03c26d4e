"""The nuisance transforms: the registry's specs and errors, determinism, sizes, every PIL mode and tiny
images, and that each transform does what its name says (checked against computations written here)."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from PIL import Image

from ts2viz.errors import InputError
from ts2viz.nuisance import hooks as H, transforms as T

IMAGE_SPECS = ["jpeg:quality=30", "rescale:factor=0.5", "resize:side=40", "crop:fraction=0.9", "blur:sigma=2",
               "brightness:factor=1.2", "contrast:factor=1.5", "saturation:factor=0.5", "noise:sigma=8",
               "roundtrip:quality=90", "hflip", "blank:value=128", "static"]
#: the mismatched-image baseline: a text-side transform drawn over a run's SEGs (tests/nuisance/test_baselines.py)
RUN_SPECS = ["mismatch"]
TEXT_SPECS = ["case:to=lower", "case:to=upper", "case:to=title", "period", "prefix:text=a photo of", "spaces"]


def textured(w: int = 64, h: int = 48, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    base = np.linspace(40, 200, w)[None, :, None] + np.array([0, 20, -20])[None, None, :]
    return Image.fromarray(np.clip(base + rng.normal(0, 30, size=(h, w, 3)), 0, 255).astype(np.uint8))


def px(im) -> np.ndarray:
    return np.asarray(im, dtype=np.int64)


# -- the registry ------------------------------------------------------------------------------------

def test_every_registered_transform_is_covered_here():
    names = {k.name for k in T.kinds()}
    assert names == {s.split(":")[0] for s in IMAGE_SPECS + TEXT_SPECS + RUN_SPECS}
    assert {k.side for k in T.kinds()} == set(T.SIDES)


def test_specs_are_canonical_with_every_parameter():
    assert T.parse("jpeg").spec == "jpeg:quality=75" == T.parse(" JPEG:quality=75 ").spec
    assert T.parse("blur:sigma=2.0").spec == "blur:sigma=2"
    assert T.parse("crop:fraction=0.90").spec == "crop:fraction=0.9"
    assert T.parse("hflip").spec == "hflip" and T.parse("hflip").params == ()
    assert T.parse("case:to=UPPER").spec == "case:to=upper"
    assert T.parse("prefix:text=an image of").text("x") == "an image of x"
    assert [t.spec for t in T.parse_list(None)] == list(T.DEFAULT)
    assert [t.spec for t in T.parse_list("jpeg:quality=30, blur")] == ["jpeg:quality=30", "blur:sigma=2"]
    # what every result records about them
    assert T.parse("hflip").changes_meaning and not T.parse("jpeg").changes_meaning
    assert {t.name for t in map(T.parse, IMAGE_SPECS + TEXT_SPECS) if t.degrading} == {"jpeg", "rescale", "blur", "noise"}
    assert [k.name for k in T.kinds() if k.random] == ["noise", "static", "mismatch"]


@pytest.mark.parametrize("spec, message", [
    ("jpg:quality=30", "unknown transform 'jpg'; did you mean 'jpeg'?"),
    ("jpeg:quality=0", "quality=0 is out of range: quality must be an integer >= 1 and <= 95"),
    ("jpeg:quality=96", "out of range"),
    ("jpeg:quality=30.5", "quality=30.5 is not an integer"),
    ("jpeg:q=30", "unknown parameter 'q' (jpeg takes quality)"),
    ("jpeg:quality=30&quality=40", "given twice"),
    ("jpeg:30", "expected KEY=VALUE"),
    ("crop:fraction=0.89", "fraction must be a number >= 0.9 and <= 1"),
    ("crop:fraction=1.01", "out of range"),
    ("blur:sigma=0", "sigma must be a number > 0 and <= 25"),
    ("blur:sigma=nan", "out of range"),
    ("rescale:factor=1", "factor must be a number >= 0.05 and < 1"),
    ("noise:sigma=-1", "out of range"),
    ("resize:side=4", "out of range"),
    ("hflip:x=1", "hflip takes no parameters"),
    ("case:to=sideways", "to must be one of lower, upper, title"),
    ("prefix:text=" + "x" * 41, "text of 1-40 characters"),
    ("", "empty transform"),
    ("1jpeg", "expected NAME"),
])
def test_bad_specs_are_one_line_errors(spec, message):
    with pytest.raises(InputError) as e:
        T.parse(spec)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_list_may_not_name_a_transform_twice():
    with pytest.raises(InputError, match="'jpeg:quality=75' is given twice"):
        T.parse_list("jpeg,jpeg:quality=75")
    with pytest.raises(InputError, match="given twice"):
        T.parse_list(["blur", "blur:sigma=2"])


def test_each_side_refuses_the_other():
    with pytest.raises(InputError, match="changes the prompt"):
        T.parse("period").image(textured())
    with pytest.raises(InputError, match="changes the image"):
        T.parse("blur").text("a cat")


# -- determinism, sizes, modes, tiny images ------------------------------------------------------------

@pytest.mark.parametrize("spec", IMAGE_SPECS)
def test_deterministic_for_the_same_pixels_and_seed(spec):
    t = T.parse(spec)
    a = t.image(textured(), seed=3)
    b = t.image(textured(), seed=3)          # another image object with the same pixels
    assert a.mode == b.mode == "RGB"
    assert a.tobytes() == b.tobytes()


def test_only_noise_depends_on_the_seed_and_its_key_says_so():
    im = textured()
    noise = T.parse("noise:sigma=8")
    assert noise.image(im, seed=1).tobytes() != noise.image(im, seed=2).tobytes()
    assert noise.cache_key(1) != noise.cache_key(2)
    other = textured(seed=5)
    # different pixels, different draws: the noise fields differ (not one field added to every image)
    d1 = px(noise.image(im, seed=1)) - px(im)
    d2 = px(noise.image(other, seed=1)) - px(other)
    assert not np.array_equal(d1, d2)
    for spec in IMAGE_SPECS:
        t = T.parse(spec)
        if t.random:
            continue
        assert t.image(im, seed=1).tobytes() == t.image(im, seed=2).tobytes()
        assert t.cache_key(1) == t.cache_key(2)
    assert len({T.parse(s).cache_key(0) for s in IMAGE_SPECS}) == len(IMAGE_SPECS)


@pytest.mark.parametrize("spec", IMAGE_SPECS)
def test_sizes(spec):
    im = textured(64, 48)
    out = T.parse(spec).image(im)
    if spec.startswith("resize"):
        assert out.size == (53, 40)              # the shorter side 40, 64/48 kept: 53.3 -> 53
    elif spec.startswith("crop"):
        assert out.size == (58, 44)              # ceil(0.9 x 64) = 58, ceil(0.9 x 48) = 44
    else:
        assert out.size == im.size


def _modes() -> dict:
    rgb = textured(20, 14)
    a16 = (np.arange(20 * 14, dtype=np.uint32).reshape(14, 20) * 230).astype(np.uint16)
    buf = io.BytesIO()
    Image.fromarray(a16).save(buf, "PNG")          # a 16-bit greyscale PNG, read back as Pillow reads it
    buf.seek(0)
    png16 = Image.open(buf)
    png16.load()
    rgba = rgb.convert("RGBA")
    rgba.putalpha(Image.fromarray(np.full((14, 20), 90, np.uint8)))
    return {"RGB": rgb, "RGBA": rgba, "P": rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16),
            "L": rgb.convert("L"), "LA": rgb.convert("LA"), "1": rgb.convert("1"), "CMYK": rgb.convert("CMYK"),
            "I;16": png16, "I": Image.fromarray(a16.astype(np.int32) * 2), "F": Image.fromarray(a16.astype(np.float32) / 300)}


@pytest.mark.parametrize("mode", list(_modes()))
@pytest.mark.parametrize("spec", IMAGE_SPECS)
def test_every_mode_gives_8_bit_rgb(spec, mode):
    im = _modes()[mode]
    assert im.mode == mode
    out = T.parse(spec).image(im)
    assert out.mode == "RGB" and np.asarray(out).dtype == np.uint8
    expect = {"resize": (57, 40), "crop": (18, 13)}.get(spec.split(":")[0], (20, 14))
    assert out.size == expect


def test_16_bit_and_other_modes_are_scaled_not_clipped():
    m = _modes()
    a16 = np.asarray(m["I;16"]).astype(np.int64)
    assert a16.max() > 255                           # the scale matters
    want = (a16 * 2 + 257) // (2 * 257)               # round(value / 257), half up, in integers
    got = px(T.as_rgb(m["I;16"]))
    assert np.array_equal(got[..., 0], want) and np.array_equal(got[..., 1], want)
    big = np.asarray(m["I"]).astype(np.int64)         # 32-bit integers: clipped to 16 bits first
    assert np.array_equal(px(T.as_rgb(m["I"]))[..., 2], (np.minimum(big, 65535) * 2 + 257) // 514)
    # Pillow's own conversion (what the scoring engine's decoding does) would clip them at 255 instead
    assert px(m["I;16"].convert("RGB")).max() == 255 and (px(m["I;16"].convert("RGB")) == 255).mean() > 0.5
    # RGBA: transparency dropped, the colours kept (as the engine reads images)
    assert np.array_equal(px(T.as_rgb(m["RGBA"])), px(m["RGB"]))
    assert T.as_rgb(m["RGB"]) is m["RGB"]


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (7, 1), (3, 2)])
@pytest.mark.parametrize("spec", IMAGE_SPECS)
def test_tiny_images(spec, size):
    im = textured(*size)
    out = T.parse(spec).image(im)
    assert out.mode == "RGB"
    if spec.startswith("resize"):
        assert min(out.size) == 40
    else:
        assert out.size[0] >= 1 and out.size[1] >= 1 and out.size[0] <= size[0] and out.size[1] <= size[1]
        if not spec.startswith("crop"):
            assert out.size == size


# -- each one does what its name says -------------------------------------------------------------------

def test_jpeg_changes_the_bytes_not_the_size_and_lower_quality_loses_more():
    # a photograph-like image: smooth shading and a few edges (pure noise is what JPEG keeps worst at any quality)
    yy, xx = np.mgrid[0:64, 0:96]
    a = np.stack([xx * 2.0 + 20, yy * 3.0 + 10, 128 + 60 * ((xx // 24 + yy // 16) % 2)], -1)
    im = Image.fromarray(np.clip(a + np.random.default_rng(0).normal(0, 3, a.shape), 0, 255).astype(np.uint8))
    q30, q90 = T.parse("jpeg:quality=30").image(im), T.parse("jpeg:quality=90").image(im)
    assert q30.size == q90.size == im.size
    assert q30.tobytes() != q90.tobytes() != im.tobytes()
    err = lambda a: float(((px(a) - px(im)) ** 2).mean())  # noqa: E731
    assert err(q30) > 2 * err(q90) > 0
    # it is a JPEG round trip at that quality: decoding Pillow's own encoding gives the same pixels
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=30)
    assert q30.tobytes() == Image.open(io.BytesIO(buf.getvalue())).convert("RGB").tobytes()


def test_crop_keeps_at_least_the_fraction_of_each_side_and_the_centre():
    im = textured(101, 37)
    for f in (0.9, 0.93, 0.999, 1.0):
        out = T.parse(f"crop:fraction={f}").image(im)
        w, h = out.size
        assert w >= 0.9 * 101 and h >= 0.9 * 37 and w >= f * 101 - 1e-9 and h >= f * 37 - 1e-9
        left, top = (101 - w) // 2, (37 - h) // 2
        assert np.array_equal(px(out), px(im)[top:top + h, left:left + w])
    assert T.parse("crop:fraction=1").image(im).tobytes() == im.tobytes()


def test_blur_spreads_a_line_with_the_given_standard_deviation():
    # a bright vertical line spreads sideways, a horizontal one up and down (a line, not a point: its blurred
    # profile stays well above the 8-bit rounding)
    for axis in (1, 0):
        a = np.zeros((121, 121, 3), np.uint8)
        if axis == 1:
            a[:, 60] = 255
        else:
            a[60, :] = 255
        for sigma in (1.5, 3.0, 5.0):
            out = px(T.parse(f"blur:sigma={sigma}").image(Image.fromarray(a)))[..., 0].astype(float)
            profile = out[60, :] if axis == 1 else out[:, 60]
            xs = np.arange(121) - 60
            sd = np.sqrt((profile * xs ** 2).sum() / profile.sum())
            # Pillow approximates the Gaussian with box passes, and rounds to 8 bits: within 10 %
            assert abs(sd - sigma) < 0.1 * sigma, (axis, sigma, sd)
            assert np.allclose(profile, profile[::-1])      # symmetric about the line


def test_rescale_keeps_flat_areas_and_loses_fine_detail():
    flat = Image.new("RGB", (40, 30), (120, 60, 200))
    assert T.parse("rescale:factor=0.5").image(flat).tobytes() == flat.tobytes()
    checker = np.indices((40, 40)).sum(0) % 2 * 255
    im = Image.fromarray(np.repeat(checker[..., None], 3, 2).astype(np.uint8))
    out = px(T.parse("rescale:factor=0.5").image(im))
    assert out.std() < 0.2 * px(im).std()


def test_resize_sets_the_shorter_side():
    out = T.parse("resize:side=96").image(textured(64, 48))
    assert out.size == (128, 96)
    out = T.parse("resize:side=30").image(textured(48, 64))
    assert out.size == (30, 40)


def test_brightness_contrast_saturation_against_the_definitions():
    im = textured(33, 21)
    x = px(im)
    # brightness x 1.2 = 6/5: round(6x/5) half up = floor((12x + 5) / 10), clipped, in integers
    want = np.minimum((12 * x + 5) // 10, 255)
    assert np.array_equal(px(T.parse("brightness:factor=1.2").image(im)), want)
    lum = x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114
    m = lum.mean()
    want = np.clip(np.floor(m + 0.5 * (x - m) + 0.5), 0, 255)
    assert np.array_equal(px(T.parse("contrast:factor=0.5").image(im)), want)
    grey = px(T.parse("saturation:factor=0").image(im))
    assert np.array_equal(grey[..., 0], grey[..., 1]) and np.array_equal(grey[..., 1], grey[..., 2])
    assert np.array_equal(grey[..., 0], np.floor(lum + 0.5))
    assert T.parse("saturation:factor=1").image(im).tobytes() == im.tobytes()
    assert T.parse("brightness:factor=1").image(im).tobytes() == im.tobytes()


def test_noise_has_mean_zero_and_the_given_standard_deviation():
    im = Image.new("RGB", (100, 100), (128, 128, 128))      # mid-grey: nothing clipped
    d = px(T.parse("noise:sigma=12").image(im, seed=0)) - 128
    # 30,000 draws, rounded to integers: the sample sd is within 2 % of 12 (standard error 0.4 %, rounding +0.3 %)
    assert abs(d.mean()) < 0.3 and abs(d.std() - 12) < 0.25


def test_roundtrip_stores_a_jpeg_as_png_and_anything_else_as_jpeg(tmp_path):
    im = textured(48, 32)
    im.save(tmp_path / "a.jpg", quality=90)
    im.save(tmp_path / "a.png")
    jpg = Image.open(tmp_path / "a.jpg").convert("RGB")
    png = Image.open(tmp_path / "a.png").convert("RGB")
    hook = H.ImageHook("roundtrip:quality=80")
    assert hook(jpg, tmp_path / "a.jpg").tobytes() == jpg.tobytes()       # PNG: lossless
    out = hook(png, tmp_path / "a.png")
    buf = io.BytesIO()
    png.save(buf, "JPEG", quality=80)
    assert out.tobytes() == Image.open(io.BytesIO(buf.getvalue())).convert("RGB").tobytes() != png.tobytes()
    assert H.source_format(tmp_path / "a.jpg") == "JPEG" and H.source_format(tmp_path / "missing.png") is None


def test_hflip_mirrors_and_is_marked_as_changing_meaning():
    im = textured(10, 4)
    out = T.parse("hflip").image(im)
    assert np.array_equal(px(out), px(im)[:, ::-1])
    assert T.parse("hflip").image(out).tobytes() == im.tobytes()


def test_text_transforms():
    p = "A red cat on the Mat"
    assert T.apply("case", p) == "a red cat on the mat"
    assert T.apply("case:to=upper", p) == "A RED CAT ON THE MAT"
    assert T.apply("case:to=title", "a red cat") == "A Red Cat"
    assert T.apply("period", "a red cat") == "a red cat." and T.apply("period", "a red cat. ") == "a red cat"
    assert T.apply("prefix", "a red cat") == "a photo of a red cat"
    assert T.apply("spaces", "a red  cat") == "a  red    cat"


def test_engine_hooks_travel_to_ray_workers():
    hook = H.ImageHook("noise:sigma=4", seed=9)
    back = pickle.loads(pickle.dumps(hook))
    im = textured()
    assert back(im).tobytes() == hook(im).tobytes() == T.parse("noise:sigma=4").image(im, seed=9).tobytes()
    assert back.key == hook.key and "seed=9" in hook.key
    assert pickle.loads(pickle.dumps(H.TextHook("period")))("a cat") == "a cat."
