"""The contract every registered metric family keeps, checked over the whole registry.

For each family of :func:`ts2viz.metrics.families`: its example spec parses; the options its factory
accepts are exactly the options its card lists; its card's fidelity rows name tests that exist; a tiny
model (or file, or function) from ``tiny_models.CONTRACT_SPECS`` loads and scores two generated images; an
unreadable image gets NaN with a warning; ``metric.config`` serialises as JSON, records the compute dtype of
the models it loaded and holds no secret (an API key given as an option or in the environment).

A new family passes this by listing its options on its ``CARD`` and naming a small metric of it: the
``tiny`` spec of its ``FAMILY`` record (one that loads in seconds with nothing downloaded), or a builder in
``tests/support/tiny_models.py``'s ``CONTRACT_SPECS`` (a tiny random-weight model the tests build); the test
fails for a family with neither.
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from llm_server import contract_chat
from tiny_models import CONTRACT_IMAGES, CONTRACT_PROMPTS, CONTRACT_SPECS

from ts2viz import metrics
from ts2viz.metrics.family import FIDELITY_STATUSES, Card
from ts2viz.metrics.registry import accepted_options

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = [f.name for f in metrics.families()]
#: markers standing for secrets: an API key given as an option, and one in the key's environment variable
KEY_OPTION, KEY_ENV = "sk-contract-option-0b7e31", "sk-contract-environment-5d2a94"


@pytest.fixture(scope="module")
def chat():
    with contract_chat() as (url, requests):
        yield url, requests


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """Two generated images (different content and sizes) and an unreadable one, as files."""
    from PIL import Image

    folder = tmp_path_factory.mktemp("contract-images")
    rng = np.random.default_rng(0)
    paths = []
    for name, size in zip(CONTRACT_IMAGES, ((48, 40), (40, 56))):
        arr = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        Image.fromarray(arr).save(folder / name)
        paths.append(folder / name)
    broken = folder / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not an image")
    return paths, broken


def contract_builder(name: str):
    """``builder(tmp_path, chat_url) -> SPEC`` of a small metric of family ``name``, or None if it names none.

    The builder of ``tiny_models.CONTRACT_SPECS``, else the family record's own ``tiny`` spec.
    """
    tiny = metrics.family(name).tiny
    return CONTRACT_SPECS.get(name) or ((lambda tmp, url: tiny) if tiny else None)


def test_every_family_has_a_card_and_a_contract_spec():
    missing_card = [f.name for f in metrics.families() if not isinstance(f.card, Card)]
    missing_spec = [n for n in FAMILIES if contract_builder(n) is None]
    assert not missing_card, f"families without a CARD in their module: {missing_card}"
    assert not missing_spec, (f"families without a tiny spec on their FAMILY record nor a tiny-model builder in "
                              f"tests/support/tiny_models.py CONTRACT_SPECS: {missing_spec}")


@pytest.mark.parametrize("name", FAMILIES)
def test_example_spec_parses(name):
    fam = metrics.family(name)
    assert fam.example, f"{name}: no example spec"
    sp = metrics.parse_spec(fam.example)
    assert sp.family == name and sp.model


@pytest.mark.parametrize("name", FAMILIES)
def test_card_lists_exactly_the_options_the_factory_accepts(name):
    fam = metrics.family(name)
    accepted = accepted_options(fam.factory())
    assert accepted is not None, f"{name}: the factory takes **options without saying which (extra_options)"
    card = fam.card
    assert accepted == card.option_names, (f"{name}: accepted but not on the card: {sorted(accepted - card.option_names)}; "
                                           f"on the card but not accepted: {sorted(card.option_names - accepted)}")
    assert all(o.doc for o in card.options), f"{name}: options without a doc: {[o.name for o in card.options if not o.doc]}"


@pytest.mark.parametrize("name", FAMILIES)
def test_card_is_complete_and_its_tests_exist(name):
    card = metrics.family(name).card
    assert card.summary and card.output_range
    if metrics.family(name).group != "user":            # the user's own metrics have no paper
        assert card.paper and card.original and card.citation.lstrip().startswith("@"), name
        assert card.fidelity, f"{name}: no fidelity rows"
    options = card.option_names
    for row in card.fidelity:
        assert row.status in FIDELITY_STATUSES
        for opt in filter(None, (o.strip() for o in row.option.split(","))):
            assert opt in options, f"{name}: fidelity row {row.aspect!r} names option {opt!r}, not on the card"
        for ref in filter(None, (r.strip() for r in row.test.split(","))):
            path, _, test = ref.partition("::")
            assert (ROOT / path).is_file(), f"{name}: fidelity row {row.aspect!r}: no test file {path}"
            if test:
                src = (ROOT / path).read_text(encoding="utf-8")
                assert re.search(rf"^def {re.escape(test)}\(", src, re.MULTILINE), \
                    f"{name}: fidelity row {row.aspect!r}: no test {test} in {path}"
    for short, hub_id in card.model_names.items():
        assert short and re.fullmatch(r"[\w.-]+/[\w.-]+", hub_id), (name, short, hub_id)


@pytest.mark.parametrize("name", FAMILIES)
def test_tiny_model_loads_scores_and_keeps_no_secret(name, chat, images, tmp_path, monkeypatch):
    url, requests = chat
    builder = contract_builder(name)
    assert builder is not None, (f"{name}: give its FAMILY record a tiny spec, or add its tiny-model builder to "
                                 "tests/support/tiny_models.py CONTRACT_SPECS")
    spec = builder(tmp_path, url)
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))     # the LLM reply cache, among others
    card = metrics.family(name).card
    options = {}
    for opt in card.options:   # every API key the family takes: a marker as an option and in the environment
        if opt.name == "api_key":
            options["api_key"] = KEY_OPTION
    env = next((o.default for o in card.options if o.name == "api_key_env"), None)
    if env:
        monkeypatch.setenv(env, KEY_ENV)
    seen = len(requests)
    m = metrics.load(spec, device="cpu", **options)
    paths, broken = images
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # tiny random models: truncation and generation warnings
        scores = m(images=paths, prompts=list(CONTRACT_PROMPTS))
    assert isinstance(scores, np.ndarray) and scores.dtype == np.float64 and scores.shape == (2,)
    assert np.isfinite(scores).all(), f"{name}: {scores}"
    # the config names the metric exactly, serialises, records the compute dtype and holds no secret
    text = json.dumps(m.config)
    assert KEY_OPTION not in text and KEY_ENV not in text, f"{name}: a secret is in the config"
    assert KEY_OPTION not in repr(m), name
    if metrics.family(name).hub_model and getattr(m, "loads_model", True):  # (an API model loads none)
        assert m.config.get("dtype") == "float32", f"{name}: config['dtype'] = {m.config.get('dtype')!r}"
    sent = [auth for _, auth in requests[seen:] if auth]
    if "api_key" in options and sent:                  # the key reached the endpoint, not the config
        assert set(sent) == {f"Bearer {KEY_OPTION}"}, sent
    # an unreadable image: NaN and a warning, the other image still scored
    if m.needs_pixels:
        with pytest.warns(UserWarning, match="unreadable image"):
            with_broken = m(images=[broken, paths[1]], prompts=list(CONTRACT_PROMPTS))
        assert np.isnan(with_broken[0]) and np.isfinite(with_broken[1]), f"{name}: {with_broken}"
    else:   # a lookup by file name (csv:): reads no pixels, so a name without a row is what gives NaN
        assert np.isnan(m(images=[broken], prompts=[CONTRACT_PROMPTS[0]])[0])


# -- precision: a card's precision is the default GPU dtype, recorded in the config ---------------------------

def test_card_precision_is_the_default_gpu_dtype_and_dtype_overrides():
    import torch

    from ts2viz.metrics.common.device import family_precision, resolve_dtype

    for precision, want in [("float32", torch.float32), ("float16", torch.float16)]:
        with family_precision(precision) as used:
            assert resolve_dtype("cuda", None) == want            # the card's precision on a GPU
            assert resolve_dtype("cuda:1", "bfloat16") == torch.bfloat16   # the dtype option wins
            assert resolve_dtype("cpu", None) == torch.float32    # the CPU stays float32
        assert used == [precision, "bfloat16", "float32"]
    assert resolve_dtype("cpu", None) == torch.float32             # outside a build: nothing collected


def test_load_passes_the_card_precision_and_records_the_dtype():
    """A family whose card says float16: its model resolves float16 on a GPU, and load records it."""
    from ts2viz.metrics.common.base import Metric
    from ts2viz.metrics.common.device import resolve_dtype

    class Probe(Metric):
        def score_prepared(self, items, prompts):
            return np.zeros(len(items))

    def build(spec, device=None, dtype=None):
        dt = resolve_dtype("cuda", dtype)            # a GPU model's dtype (no GPU needed to resolve it)
        return Probe(spec, {"family": "probe", "seen": str(dt)}, "cpu")

    card = Card(summary="a probe", precision="float16", options=())
    metrics.register("probe", "a probe", build, card=card)
    try:
        assert metrics.family("probe").card is card
        m = metrics.load("probe:x")
        assert m.config["seen"] == "torch.float16" and m.config["dtype"] == "float16"
        assert metrics.load("probe:x?dtype=float32").config["dtype"] == "float32"
    finally:
        metrics.unregister("probe")
