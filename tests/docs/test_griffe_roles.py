"""The API reference's Griffe extension (tools/griffe_roles.py): numpydoc's roles and See Also entries become
links to the names they mean, resolved the way Python resolves them from where the docstring is."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import griffe_roles  # noqa: E402


def fake(name: str) -> str | None:
    """A resolver that knows two names."""
    return {"holm": "pkg.wilcoxon.holm", "~pkg.bootstrap.bootstrap": "pkg.bootstrap.bootstrap"}.get(name.strip())


def test_roles_become_optional_links_or_code():
    out = griffe_roles.rewrite("See :func:`holm`, :func:`~pkg.bootstrap.bootstrap` and :func:`numpy.median`.", fake)
    assert out == ('See <autoref identifier="pkg.wilcoxon.holm" optional>`holm`</autoref>, '
                   '<autoref identifier="pkg.bootstrap.bootstrap" optional>`bootstrap`</autoref> and `numpy.median`.')


def test_see_also_entries_become_a_list():
    doc = ("Summary.\n\nSee Also\n--------\nholm : adjust a family\n    of p-values.\nnumpy.median, holm\n\n"
           "Notes\n-----\nText.\n")
    out = griffe_roles.rewrite(doc, fake)
    assert out == ("Summary.\n\nSee Also\n--------\n"
                   '- <autoref identifier="pkg.wilcoxon.holm" optional>`holm`</autoref>: adjust a family of p-values.\n'
                   '- `numpy.median`, <autoref identifier="pkg.wilcoxon.holm" optional>`holm`</autoref>\n'
                   "\nNotes\n-----\nText.\n")


@pytest.fixture(scope="module")
def loaded():
    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(ROOT)])
    pkg = loader.load("ts2viz")
    return loader.modules_collection, pkg


@pytest.mark.parametrize("where, name, expected", [
    ("statistics.wilcoxon.wilcoxon", "holm", "ts2viz.statistics.wilcoxon.holm"),           # same module
    ("metametrics.intervals.bootstrap", "MetaMetrics.averages",
     "ts2viz.metametrics.results.MetaMetrics.averages"),                                    # import
    ("metametrics", ".walks", "ts2viz.metametrics.walks"),                                  # relative to the package
    ("metametrics", "~.intervals.LeaderboardBootstrap", "ts2viz.metametrics.intervals.LeaderboardBootstrap"),
    ("metaeval", "pearson", "ts2viz.statistics.correlation.pearson"),                       # a re-export: its target
    ("statistics.wilcoxon.wilcoxon", "numpy.quantile", None),                                # not ts2viz: plain code
])
def test_names_resolve_from_where_the_docstring_is(loaded, where, name, expected):
    collection, pkg = loaded
    assert griffe_roles.resolve(collection, pkg[where], name) == expected
