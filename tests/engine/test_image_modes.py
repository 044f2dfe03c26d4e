"""Images of every mode are scored as what they show: a 16-bit PNG as its 8-bit equivalent (Pillow's own
``convert("RGB")`` clips 16-bit values at 255, which scored such an image nearly white)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from ts2viz.metrics.common.base import load_image


def _gradient16() -> Image.Image:
    v = np.linspace(0, 65535, 64 * 64).reshape(64, 64).astype(np.uint16)
    return Image.fromarray(v, mode="I;16")


def _png(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("source", ["pil", "bytes", "path"])
def test_16_bit_png_is_scaled_not_clipped(source, tmp_path):
    im16 = _gradient16()
    data = _png(im16)
    if source == "pil":
        arg = Image.open(io.BytesIO(data))
    elif source == "bytes":
        arg = data
    else:
        arg = tmp_path / "g16.png"
        arg.write_bytes(data)
    rgb = np.asarray(load_image(arg, "ts2viz"))
    assert rgb.dtype == np.uint8 and rgb.shape == (64, 64, 3)
    want = np.floor(np.asarray(im16, dtype=np.float64) / 257.0 + 0.5)     # 65535 -> 255, 0 -> 0
    assert np.array_equal(rgb[..., 0], want) and np.array_equal(rgb[..., 1], want)
    assert rgb.mean() == pytest.approx(127.5, abs=0.6)                   # not clipped to white (255)


def test_engine_scores_a_16_bit_image_as_its_8_bit_copy(tmp_path):
    from ts2viz.engine import score_images

    im16 = _gradient16()
    im8 = Image.fromarray(np.floor(np.asarray(im16, dtype=np.float64) / 257.0 + 0.5).astype(np.uint8)).convert("RGB")
    (tmp_path / "a16.png").write_bytes(_png(im16))
    im8.save(tmp_path / "a8.png")
    import sys
    (tmp_path / "brightness_metric.py").write_text(
        "import numpy as np\n\ndef score(images, prompts):\n"
        "    return [float(np.asarray(im.convert('RGB'), dtype=float).mean()) for im in images]\n")
    sys.path.insert(0, str(tmp_path))
    try:
        vals = score_images("callable:brightness_metric:score", [tmp_path / "a16.png", tmp_path / "a8.png"],
                            ["a grey ramp", "a grey ramp"], use_cache=False)
    finally:
        sys.path.remove(str(tmp_path))
    assert vals[0] == pytest.approx(vals[1], abs=1e-9) and vals[0] == pytest.approx(127.5, abs=0.6)
