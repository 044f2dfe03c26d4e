"""Scoring transformed copies: one metric's clean and transformed scores over a SEG dataset.

The scores are kept in a per-image long table.

:func:`run` scores every image of a dataset with each metric, once as it is and once per transform
(:mod:`ts2viz.nuisance.transforms`), through the batch engine (:func:`ts2viz.engine.score_variants`):
batched, on the GPU when there is one, on Ray with ``ray=``, and cached, each transformed copy under a key
that carries the transform (and, for a random transform, the seed), so an interrupted run resumes and a
re-run scores nothing. The result, :class:`NuisanceScores`, is written and read as a *long table*, one row
per (metric, transform, image):

==================  ==========================================================================================
``metric``          the metric's name (its SPEC, as ``ts2viz score`` names its column)
``higher_is_better``  the metric's direction
``metric_config``   the hash of the metric's config (the score cache's key part)
``transform``       the transform's canonical SPEC (``jpeg:quality=30``)
``side``            ``image`` or ``text``
``changes_meaning`` whether the transform may change what the image shows (``hflip``)
``degrading``       whether it only removes information (``jpeg``, ``rescale``, ``blur``, ``noise``)
``seed``            the run's seed (what a random transform draws depends on it)
``seg_id``, ``partition``, ``node``, ``level``, ``file_name``: the image
``prompt``          the prompt the transformed copy was scored against
``clean``, ``transformed``, ``change``: the two scores and ``transformed - clean`` (NaN: not scored)
==================  ==========================================================================================
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError
from .hooks import ImageHook, TextHook
from .transform_types import Transform
from .transforms import parse, parse_list

#: the long table's columns, in order
COLUMNS = ("metric", "higher_is_better", "metric_config", "transform", "side", "changes_meaning", "degrading",
           "seed", "seg_id", "partition", "node", "level", "file_name", "prompt", "clean", "transformed", "change")
#: the columns a long table must have to be read (the others are filled in or recomputed)
REQUIRED = ("metric", "transform", "file_name", "clean", "transformed")


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class MetricRun:
    """One metric's scores of a dataset's images, clean and under each transform.

    Attributes
    ----------
    metric : str
        The metric's name.
    higher_is_better : bool
        Its direction.
    config_hash : str
        Its config's hash.
    file_names : tuple of str
        The images (rows).
    clean : numpy.ndarray
        (n,) their scores as they are.
    transforms : tuple of Transform
        The transforms (columns).
    transformed : numpy.ndarray
        (n, T) their scores under each transform.
    seed : int
        The seed the random transforms drew with.
    """

    metric: str
    higher_is_better: bool
    config_hash: str
    file_names: tuple[str, ...]
    clean: np.ndarray
    transforms: tuple[Transform, ...]
    transformed: np.ndarray
    seed: int = 0

    def column(self, transform: "str | Transform") -> np.ndarray:
        """The scores under one transform.

        Parameters
        ----------
        transform : str or Transform
            The transform, by spec in any spelling (``jpeg`` is ``jpeg:quality=75``).

        Returns
        -------
        numpy.ndarray
            (n,) the transformed scores, in :attr:`file_names` order.

        Raises
        ------
        InputError
            If the spec is bad or the metric was not run with that transform.
        """
        spec = parse(transform).spec
        specs = [t.spec for t in self.transforms]
        if spec not in specs:
            raise InputError(f"metric {self.metric!r} was not run with transform {spec!r} (have: {', '.join(specs)})")
        return self.transformed[:, specs.index(spec)]


@dataclass
class NuisanceScores:
    """Clean and transformed scores of one or more metrics over a dataset (see :func:`run`).

    :meth:`frame` is the long table, :meth:`write` writes it (atomically), :func:`read_nuisance` reads it
    back.

    Attributes
    ----------
    dataset_name : str
        The dataset's name.
    runs : list of MetricRun
        One per metric.
    """

    dataset_name: str
    runs: list[MetricRun] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        """The metrics' names, in run order."""
        return [r.metric for r in self.runs]

    def run(self, metric: str) -> MetricRun:
        """The run of one metric.

        Parameters
        ----------
        metric : str
            The metric's name.

        Returns
        -------
        MetricRun
            Its scores.

        Raises
        ------
        InputError
            If there are no results for the metric.
        """
        for r in self.runs:
            if r.metric == metric:
                return r
        raise InputError(f"no nuisance results for metric {metric!r} (have: {', '.join(self.metrics) or 'none'})")

    def frame(self, dataset):
        """The long table (see the module docstring), one row per (metric, transform, image).

        Parameters
        ----------
        dataset : Dataset
            The dataset the scores are of (for each image's SEG, node, level and prompt).

        Returns
        -------
        pandas.DataFrame
            The columns of :data:`COLUMNS`, in that order.
        """
        import pandas as pd

        frames = []
        for r in self.runs:
            rows = [dataset.row(f) for f in r.file_names]
            n = len(rows)
            for k, t in enumerate(r.transforms):
                if t.name == "mismatch":   # drawn over the run's SEGs, as run() drew it
                    swap = PromptSwap(mismatch_pairs(dataset.subset(sorted({x.seg_id for x in rows})), r.seed))
                    prompts = [swap(x.prompt) for x in rows]
                else:
                    prompts = [t.text(x.prompt) for x in rows] if t.side == "text" else [x.prompt for x in rows]
                tv = r.transformed[:, k]
                frames.append(pd.DataFrame({
                    "metric": [r.metric] * n, "higher_is_better": r.higher_is_better,
                    "metric_config": r.config_hash, "transform": t.spec, "side": t.side,
                    "changes_meaning": t.changes_meaning, "degrading": t.degrading, "seed": int(r.seed),
                    "seg_id": [x.seg_id for x in rows], "partition": [x.partition for x in rows],
                    "node": [x.label for x in rows], "level": [x.level for x in rows],
                    "file_name": list(r.file_names), "prompt": prompts, "clean": r.clean, "transformed": tv,
                    "change": tv - r.clean}))
        if not frames:
            return pd.DataFrame({c: [] for c in COLUMNS})
        return pd.concat(frames, ignore_index=True)[list(COLUMNS)]

    def write(self, path: str | os.PathLike, dataset) -> None:
        """Write the long table to ``path`` (``.csv`` or ``.parquet``), atomically.

        A reader never sees a half-written file.

        Parameters
        ----------
        path : str or os.PathLike
            The file; its suffix picks the format.
        dataset : Dataset
            The dataset the scores are of.
        """
        write_frame(self.frame(dataset), path)


def write_frame(df, path: str | os.PathLike) -> None:
    """A table as CSV (floats exactly, to the last bit) or Parquet by ``path``'s suffix, atomically.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    path : str or os.PathLike
        ``.parquet``/``.pq`` for Parquet, anything else for CSV.
    """
    from ..atomic import atomic_path

    p = Path(path)
    with atomic_path(p) as tmp:
        if p.suffix.lower() in (".parquet", ".pq"):
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, lineterminator="\n")


@dataclass(frozen=True)
class PromptSwap:
    """The ``mismatch`` baseline as the scoring engine applies it: each prompt replaced by its pair (picklable).

    Attributes
    ----------
    pairs : tuple of (str, str)
        ``(prompt, the prompt of another SEG)`` (:func:`mismatch_pairs`).
    """

    pairs: tuple[tuple[str, str], ...]

    def __call__(self, prompt: str) -> str:
        """The other SEG's prompt (the prompt itself if it is not in :attr:`pairs`)."""
        return dict(self.pairs).get(prompt, prompt)


def mismatch_pairs(dataset, seed: int = 0) -> tuple[tuple[str, str], ...]:
    """Each SEG's prompt paired with the prompt of a random other SEG (the ``mismatch`` baseline).

    For each SEG in id order, one SEG is drawn uniformly among those with another prompt text, with a
    generator seeded by the run's seed: the image of SEG ``s`` is then scored against the prompt of that
    SEG, the same mismatched (prompt, image) pairs as scoring each prompt with another SEG's images.

    Parameters
    ----------
    dataset : Dataset
        The SEGs of the run (after any subset).
    seed : int, default 0
        The run's seed.

    Returns
    -------
    tuple of (str, str)
        ``(prompt, other prompt)`` per distinct prompt (SEGs with the same prompt text share the first
        SEG's draw).

    Raises
    ------
    InputError
        If the SEGs have fewer than two distinct prompts.

    Examples
    --------
    >>> from types import SimpleNamespace as S
    >>> from ts2viz.nuisance.run import mismatch_pairs
    >>> ds = [S(id=0, prompt="a cat"), S(id=1, prompt="a dog"), S(id=2, prompt="a cow")]
    >>> all(a != b for a, b in mismatch_pairs(ds, seed=0))
    True
    """
    segs = sorted(dataset, key=lambda g: g.id)
    prompts = [g.prompt for g in segs]
    if len(set(prompts)) < 2:
        raise InputError("mismatch: the SEGs need at least two different prompts to pair an image with another "
                         "SEG's prompt")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x6D69736D]))   # "mism"
    out: dict[str, str] = {}
    for p in prompts:
        others = [q for q in prompts if q != p]
        q = others[int(rng.integers(len(others)))]
        out.setdefault(p, q)
    return tuple(out.items())


def variants_of(transforms: Sequence[Transform], seed: int = 0, dataset=None) -> list:
    """The engine's :class:`~ts2viz.engine.Variant` s for a run: the clean inputs, then one per transform.

    Parameters
    ----------
    transforms : sequence of Transform
        The transforms.
    seed : int, default 0
        The run's seed (image hooks carry it).
    dataset : Dataset, optional
        The run's SEGs: the ``mismatch`` baseline draws its pairs from them (:func:`mismatch_pairs`).

    Returns
    -------
    list of Variant
        ``clean``, then one variant per transform (an image hook or a prompt hook).

    Raises
    ------
    InputError
        For ``mismatch`` without ``dataset``, or over SEGs with fewer than two prompts.

    Examples
    --------
    >>> from ts2viz.nuisance.run import variants_of
    >>> from ts2viz.nuisance.transforms import parse_list
    >>> [v.label for v in variants_of(parse_list("blur,period"))]
    ['clean', 'blur:sigma=2', 'period']
    """
    from ..engine import Variant

    out = [Variant("clean")]
    for t in transforms:
        if t.name == "mismatch":
            if dataset is None:
                raise InputError("mismatch: the baseline needs the run's SEGs to draw other prompts from")
            out.append(Variant(t.spec, prompt=PromptSwap(mismatch_pairs(dataset, seed))))
        elif t.side == "image":
            out.append(Variant(t.spec, image=ImageHook(t.spec, int(seed))))
        else:
            out.append(Variant(t.spec, prompt=TextHook(t.spec)))
    return out


def check_seed(seed) -> int:
    """The seed as an integer >= 0.

    Parameters
    ----------
    seed : Any
        An integer, or a number or text equal to one.

    Returns
    -------
    int
        The seed.

    Raises
    ------
    InputError
        If it is not a non-negative integer (a bool is not one).
    """
    try:
        s = int(seed)
        if isinstance(seed, bool) or s != float(seed) or s < 0:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"the seed must be a non-negative integer, got {seed!r}") from None
    return s


def run(dataset, metrics, transforms=None, *, seed: int = 0, seg_ids: Sequence[int] | None = None,
        device: str | None = None, batch_size: int | None = None, cache_dir=None, use_cache: bool = True,
        progress=None, ray: bool | str | None = None, ray_actors: int | None = None) -> NuisanceScores:
    """Score every image of ``dataset`` with each metric, clean and under each transform.

    Parameters
    ----------
    dataset : Dataset or str
        A :class:`ts2viz.dataset.Dataset` or a spec for ``load_dataset``.
    metrics : str, Metric, or a sequence of them
        Metric SPECs or loaded metrics.
    transforms : str or sequence of str, optional
        Transform specs (a comma-separated string or a sequence; default
        :data:`ts2viz.nuisance.transforms.DEFAULT`).
    seed : int, default 0
        What the random transforms (``noise``) draw depends on.
    seg_ids, device, batch_size, cache_dir, use_cache, progress, ray, ray_actors
        As for :func:`ts2viz.engine.score_dataset`.

    Returns
    -------
    NuisanceScores
        One :class:`MetricRun` per metric. Images that cannot be read get NaN in every column (one
        warning).

    Raises
    ------
    InputError
        An unknown transform or a parameter out of range (before any model is loaded), an image
        transform with a metric that reads no pixels (``csv:``), the same metric twice, or what the
        engine raises.

    Examples
    --------
    >>> from ts2viz.nuisance import run  # doctest: +SKIP
    >>> ns = run.run("my_segs/", "clipscore:openai/clip-vit-base-patch32", "jpeg:quality=30,blur:sigma=2")  # doctest: +SKIP
    >>> ns.runs[0].column("blur:sigma=2") - ns.runs[0].clean  # doctest: +SKIP
    """
    from ..dataset import Dataset, load_dataset
    from ..engine import score_variants
    from ..engine.core import needs_pixels

    ts = parse_list(transforms)
    seed = check_seed(seed)
    specs = [metrics] if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)) else list(metrics)
    if not specs:
        raise InputError("no metric given (use --metric SPEC; `ts2viz metrics` lists the families)")
    for s in specs:
        reads_scores = isinstance(s, str) and not needs_pixels(s)     # its family's record (the csv family)
        if reads_scores and any(t.kind.baseline for t in ts):
            raise InputError(f"metric {s!r} reads precomputed scores, one per image for its own prompt: the blind "
                             "and mismatched-image baselines (blank, static, mismatch) need new (image, prompt) "
                             "pairs scored by a model (give a metric SPEC that loads one)")
        if reads_scores and any(t.side == "image" for t in ts):
            raise InputError(f"metric {s!r} reads precomputed scores: image transforms cannot be scored with it "
                             "(use text transforms only, or a metric that reads the images)")
        if not isinstance(s, str) and not getattr(s, "needs_pixels", True) and \
                any(t.side == "image" or t.kind.baseline for t in ts):
            raise InputError(f"metric {s.spec!r} reads no pixels: image transforms cannot be scored with it")
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if seg_ids is not None:
        ds = ds.subset(seg_ids)
    out = NuisanceScores(ds.name)
    names = set()
    for spec in specs:
        vs = score_variants(ds, spec, variants_of(ts, seed, ds), device=device, batch_size=batch_size,
                            cache_dir=cache_dir, progress=progress, use_cache=use_cache, ray=ray,
                            ray_actors=ray_actors)
        if vs.spec in names:
            raise InputError("the same metric is given twice")
        names.add(vs.spec)
        vals = np.asarray(vs.values, dtype=np.float64)
        out.runs.append(MetricRun(vs.spec, vs.higher_is_better, vs.config_hash, tuple(vs.file_names),
                                  _frozen(vals[:, 0]), tuple(ts), _frozen(vals[:, 1:]), seed))
    return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _truthy(v, path, line: int, column: str) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    t = str(v).strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    raise InputError(f"column {column!r}: expected true or false, got {str(v)[:20]!r}", file=path, row=line)


def read_nuisance(path: str | os.PathLike, dataset=None) -> NuisanceScores:
    """Read a long table written by :meth:`NuisanceScores.write` (or ``ts2viz nuisance --out``).

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv`` or ``.parquet`` file.
    dataset : Dataset, optional
        If given, every ``file_name`` must be one of its images.

    Returns
    -------
    NuisanceScores
        Per metric, its images in the order they first appear, its transforms in the order they first
        appear (a combination the file lacks is NaN).

    Raises
    ------
    InputError
        One line naming the file, the row (1-based line of a CSV; 1 is the header) and the problem: not
        readable, a required column missing, a transform that is not registered, a non-numeric score, a
        file name not in the dataset, a (metric, transform, image) twice, an image whose clean score
        differs between rows, two directions or two seeds for one metric.

    Notes
    -----
    NaN policy: an empty, ``nan``/``na`` or non-finite score is NaN (not scored).

    Examples
    --------
    A table written and read back (the scores here are CLIPScore's bundled ones and a made-up JPEG
    copy 0.01 lower):

    >>> import os, tempfile
    >>> from ts2viz import bundled_scores, load_dataset
    >>> from ts2viz.nuisance.run import MetricRun, NuisanceScores, read_nuisance
    >>> from ts2viz.nuisance.transforms import parse_list
    >>> ds = load_dataset("ts2").subset([0, 1])
    >>> files = [im.file_name for seg in ds for node in seg.nodes for im in node.images]
    >>> clean = bundled_scores().aligned(files, ["CLIPScore"])[:, 0]
    >>> ns = NuisanceScores(ds.name, [MetricRun("CLIPScore", True, "", tuple(files), clean,
    ...                                         tuple(parse_list("jpeg:quality=30")), (clean - 0.01)[:, None])])
    >>> path = os.path.join(tempfile.mkdtemp(), "nuisance.csv")
    >>> ns.write(path, ds)
    >>> back = read_nuisance(path, ds)
    >>> back.metrics, [t.spec for t in back.run("CLIPScore").transforms], len(back.run("CLIPScore").clean) == len(files)
    (['CLIPScore'], ['jpeg:quality=30'], True)
    """
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise InputError("no such nuisance file", file=p)
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            df = pd.read_parquet(p)
        else:
            df = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte 0x{e.object[e.start]:02x}); save the file as UTF-8", file=p) from None
    except Exception as e:  # noqa: BLE001 - any reader failure is one line
        raise InputError(f"not a readable nuisance table ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})",
                         file=p) from None
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(f"missing column {missing[0]!r} (a nuisance table has {', '.join(REQUIRED)}, ...)", file=p, row=1)
    if not len(df):
        raise InputError("no rows", file=p)
    row0 = 2        # a CSV's first data row is line 2; a Parquet file's rows are counted the same way
    metrics: dict[str, dict] = {}
    specs_cache: dict[str, Transform] = {}
    for k, rec in enumerate(df.itertuples(index=False)):
        r = rec._asdict()
        line = row0 + k
        metric = str(r["metric"]).strip()
        if not metric:
            raise InputError("empty metric name", file=p, row=line)
        raw_t = str(r["transform"])
        t = specs_cache.get(raw_t)
        if t is None:
            try:
                t = specs_cache[raw_t] = parse(raw_t)
            except InputError as e:
                raise InputError(e.problem, file=p, row=line) from None
        fn = str(r["file_name"])
        if dataset is not None and not dataset.has_image(fn):
            raise InputError(f"unknown file_name {fn[:80]!r}: not an image of dataset {dataset.name}", file=p, row=line)
        vals = []
        for col in ("clean", "transformed"):
            v = r[col]
            try:
                x = float(v) if not (isinstance(v, str) and v.strip().lower() in ("", "nan", "na")) else np.nan
            except (TypeError, ValueError):
                raise InputError(f"column {col!r}: {str(v)[:30]!r} is not a number", file=p, row=line) from None
            vals.append(np.nan if not np.isfinite(x) else x)
        m = metrics.setdefault(metric, {"files": {}, "transforms": {}, "clean": {}, "t": {}, "hib": None,
                                        "config": "", "seed": None})
        if "higher_is_better" in df.columns and str(r["higher_is_better"]).strip() != "":
            hib = _truthy(r["higher_is_better"], p, line, "higher_is_better")
            if m["hib"] is not None and m["hib"] != hib:
                raise InputError(f"metric {metric!r} is higher-is-better on one row and not on another", file=p, row=line)
            m["hib"] = hib
        if "metric_config" in df.columns and not m["config"]:
            m["config"] = str(r["metric_config"])
        if "seed" in df.columns and str(r["seed"]).strip() != "":
            try:
                s = check_seed(float(r["seed"]) if isinstance(r["seed"], str) else r["seed"])
            except InputError:
                raise InputError(f"column 'seed': {str(r['seed'])[:20]!r} is not a non-negative integer", file=p,
                                 row=line) from None
            if m["seed"] is not None and m["seed"] != s:
                raise InputError(f"metric {metric!r} has rows of two seeds ({m['seed']} and {s}); write one run per "
                                 "file", file=p, row=line)
            m["seed"] = s
        i = m["files"].setdefault(fn, len(m["files"]))
        j = m["transforms"].setdefault(t.spec, len(m["transforms"]))
        if (i, j) in m["t"]:
            raise InputError(f"metric {metric!r}, transform {t.spec!r}, image {fn[:80]!r} appears twice", file=p, row=line)
        m["t"][(i, j)] = vals[1]
        old = m["clean"].get(i)
        if old is not None and not (old == vals[0] or (np.isnan(old) and np.isnan(vals[0]))):
            raise InputError(f"metric {metric!r}, image {fn[:80]!r}: clean score {vals[0]!r} here but {old!r} on an "
                             "earlier row", file=p, row=line)
        m["clean"][i] = vals[0]
        specs_cache.setdefault(t.spec, t)
    out = NuisanceScores(getattr(dataset, "name", "") or p.stem)
    for metric, m in metrics.items():
        files = list(m["files"])
        ts = [specs_cache[s] for s in m["transforms"]]
        clean = np.array([m["clean"].get(i, np.nan) for i in range(len(files))])
        tr = np.full((len(files), len(ts)), np.nan)
        for (i, j), v in m["t"].items():
            tr[i, j] = v
        out.runs.append(MetricRun(metric, True if m["hib"] is None else m["hib"], m["config"], tuple(files),
                                  _frozen(clean), tuple(ts), _frozen(tr), m["seed"] or 0))
    return out


__all__ = ["COLUMNS", "MetricRun", "NuisanceScores", "run", "read_nuisance", "variants_of", "write_frame",
           "check_seed"]
