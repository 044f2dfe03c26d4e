"""The meta-metric policy: every rule in which ways of computing the TS2 meta-metrics differ, in one object.

The TS2 paper's text and the code behind its published numbers disagree on several details. Each such
detail is one field of :class:`Policy`; ``paper`` (reproduces the published numbers) and ``spec`` (the
paper's text) are two named presets of it, defined here and nowhere else. The engine
(:func:`ts2viz.metametrics.results.compute`), the CLI (``--mode``, ``--policy``), the app and the docs all read
these presets, and every result records the policy that made it.

A custom policy is one keyword away::

    compute(ds, scores, policy=PAPER.replace(walk_weights="uniform"))
    compute(ds, scores, policy="paper:walk_weights=uniform,leave_out=none")   # same, as text
    ts2viz leaderboard --mode paper --policy walk_weights=uniform,leave_out=none
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from ..errors import InputError

PairRule = Literal["all-levels", "adjacent-levels", "adjacent-nodes"]

#: the values each field may take, with what they mean (also the CLI's help text)
CHOICES: dict[str, dict[object, str]] = {
    "repeat_root": {
        True: "each walk takes the error-0 step twice (root images enter every walk twice)",
        False: "each walk holds each node once",
    },
    "sep_pairs": {
        "all-levels": "per walk: every pair of distinct error levels in the walk, a level's population being "
                      "all of the walk's images at that level; the SEG averages its walks",
        "adjacent-levels": "per walk: consecutive error levels of the walk only; the SEG averages its walks",
        "adjacent-nodes": "per SEG: each distinct pair of nodes joined by an edge, once (walks show their "
                          "consecutive node pairs)",
    },
    "delta_pairs": {
        "all-levels": "as sep_pairs=all-levels, for the mean score gap",
        "adjacent-levels": "as sep_pairs=adjacent-levels, for the mean score gap",
        "adjacent-nodes": "as sep_pairs=adjacent-nodes, for the mean score gap",
    },
    "walk_weights": {
        "scored-images": "a SEG's value is the mean over its walks weighted by each walk's number of scored images",
        "uniform": "a SEG's value is the plain mean over its walks",
    },
    "no_pairs": {
        "zero": "sep and delta are 0 where there is no pair of populations to compare (a single-node SEG)",
        "undefined": "sep and delta are NaN there, and left out of averages",
    },
    "leave_out": {
        "ts2-last": "the averages leave out the last SEG of the TS2 dataset (id 164), as the published code's "
                    "range(max id) did; other datasets lose nothing",
        "none": "the averages use every SEG",
    },
    "nan_policy": {
        "omit": "images without a score are left out of every walk and population",
        "raise": "a missing score is an error",
    },
}


@dataclass(frozen=True)
class Policy:
    """How the meta-metrics are computed (see :data:`CHOICES` for each field's values).

    Parameters
    ----------
    name : str
        A label recorded with results (``paper``, ``spec`` or ``paper+walk_weights=uniform``).
    repeat_root : bool
        Whether walks take the error-0 step twice.
    sep_pairs : {'all-levels', 'adjacent-levels', 'adjacent-nodes'}
        Which population pairs the KS statistic (sep) compares.
    delta_pairs : {'all-levels', 'adjacent-levels', 'adjacent-nodes'}
        Which population pairs the mean score gap (delta) averages.
    walk_weights : {'scored-images', 'uniform'}
        How a SEG averages its walks.
    no_pairs : {'zero', 'undefined'}
        Sep and delta where there is nothing to compare.
    leave_out : {'ts2-last', 'none'}
        Which SEGs the overall and partition averages leave out.
    nan_policy : {'omit', 'raise'}, default 'omit'
        What a missing (NaN) score means.

    Raises
    ------
    InputError
        If a rule's value is not one of :data:`CHOICES`.

    See Also
    --------
    resolve_policy : a policy from a preset name and overrides.

    Examples
    --------
    >>> from ts2viz.metametrics.policy import PAPER
    >>> PAPER.replace(walk_weights="uniform").name
    'paper+walk_weights=uniform'
    """

    name: str
    repeat_root: bool
    sep_pairs: PairRule
    delta_pairs: PairRule
    walk_weights: Literal["scored-images", "uniform"]
    no_pairs: Literal["zero", "undefined"]
    leave_out: Literal["ts2-last", "none"]
    nan_policy: Literal["omit", "raise"] = "omit"

    def __post_init__(self) -> None:
        """Check every rule against :data:`CHOICES` (see the class's Raises)."""
        for f in RULES:
            v = getattr(self, f)
            if v not in CHOICES[f]:
                raise InputError(f"policy {f}={v!r}: expected one of {', '.join(map(str, CHOICES[f]))}")

    def replace(self, **changes) -> "Policy":
        """A copy with some rules changed; its name records the changes against this one.

        Parameters
        ----------
        **changes
            Rule name -> new value.

        Returns
        -------
        Policy
            The new policy (this one itself when nothing changes).

        Raises
        ------
        InputError
            For an unknown rule or a value not in :data:`CHOICES`.
        """
        unknown = [k for k in changes if k not in RULES]
        if unknown:
            raise InputError(f"unknown policy rule {unknown[0]!r} (rules: {', '.join(RULES)})")
        diff = {k: v for k, v in changes.items() if getattr(self, k) != v}
        if not diff:
            return self
        name = self.name + "".join(f"+{k}={value_text(v)}" for k, v in diff.items())
        return dataclasses.replace(self, name=name, **diff)

    def rules(self) -> dict[str, object]:
        """The rules as a plain dict (everything but the name).

        Returns
        -------
        dict[str, object]
            Rule name -> value, in declared order.
        """
        return {f: getattr(self, f) for f in RULES}

    def describe(self) -> str:
        """One line per rule: ``field = value: meaning``.

        Returns
        -------
        str
            The lines, joined by newlines.
        """
        return "\n".join(f"{f} = {value_text(v)}: {CHOICES[f][v]}" for f, v in self.rules().items())


RULES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Policy) if f.name != "name")

#: The code behind the published TS2 numbers (recovered by recomputing them from the released scores).
PAPER = Policy("paper", repeat_root=True, sep_pairs="all-levels", delta_pairs="adjacent-levels",
               walk_weights="scored-images", no_pairs="zero", leave_out="ts2-last")
#: The TS2 paper's text: each node once per walk, KS between adjacent nodes, plain means, every SEG.
SPEC = Policy("spec", repeat_root=False, sep_pairs="adjacent-nodes", delta_pairs="adjacent-nodes",
              walk_weights="uniform", no_pairs="undefined", leave_out="none")

PRESETS: dict[str, Policy] = {"paper": PAPER, "spec": SPEC}
#: the preset names, for choices in the CLI and the app
MODES: tuple[str, ...] = tuple(PRESETS)


def value_text(v: object) -> str:
    """A rule value as written in overrides: ``true``/``false`` for booleans, else the value.

    Parameters
    ----------
    v : object
        The value.

    Returns
    -------
    str
        Its text.
    """
    return str(v).lower() if isinstance(v, bool) else str(v)


def rules_help() -> str:
    """Every rule with its possible values, for help texts: ``repeat_root (true|false), ...``.

    Returns
    -------
    str
        The rules and values, comma-separated.
    """
    return ", ".join(f"{r} ({'|'.join(value_text(v) for v in CHOICES[r])})" for r in RULES)


def _parse_value(field: str, text: str) -> object:
    t = text.strip()
    for v in CHOICES[field]:
        if value_text(v) == t.lower():
            return v
    raise InputError(f"policy {field}={t!r}: expected one of {', '.join(value_text(v) for v in CHOICES[field])}")


def parse_overrides(text: str | None) -> dict[str, object]:
    """Parse policy overrides written as ``RULE=VALUE`` pairs separated by commas.

    Parameters
    ----------
    text : str or None
        E.g. ``"walk_weights=uniform,leave_out=none"`` (``-`` in a rule name reads as ``_``).

    Returns
    -------
    dict[str, object]
        Rule -> value, e.g. ``{"walk_weights": "uniform", "leave_out": "none"}``.

    Raises
    ------
    InputError
        For an entry that is not RULE=VALUE with a known rule, or a value not in :data:`CHOICES`.

    Examples
    --------
    >>> from ts2viz.metametrics.policy import parse_overrides
    >>> parse_overrides("walk_weights=uniform,leave_out=none")
    {'walk_weights': 'uniform', 'leave_out': 'none'}
    """
    out: dict[str, object] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, val = part.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in RULES:
            raise InputError(f"policy override {part!r}: expected RULE=VALUE with RULE one of {', '.join(RULES)}")
        out[key] = _parse_value(key, val)
    return out


def resolve_policy(policy: "str | Policy" = "paper", overrides: str | dict | None = None) -> Policy:
    """A :class:`Policy` from a preset name, ``"preset:rule=value,..."`` text, or a Policy, plus overrides.

    Parameters
    ----------
    policy : str or Policy, default "paper"
        ``"paper"``, ``"spec"``, a preset with overrides (``"paper:walk_weights=uniform"``), or a Policy.
    overrides : str or dict, optional
        More overrides (``"rule=value,..."`` or a dict), applied after the preset's.

    Returns
    -------
    Policy
        The policy; its name records every override.

    Raises
    ------
    InputError
        For an unknown preset, rule or value.

    Examples
    --------
    >>> from ts2viz.metametrics.policy import resolve_policy
    >>> resolve_policy("paper:walk_weights=uniform", "leave_out=none").name
    'paper+walk_weights=uniform+leave_out=none'
    >>> resolve_policy("spec").repeat_root
    False
    """
    if isinstance(policy, Policy):
        pol = policy
    else:
        name, _, rest = str(policy).partition(":")
        if name not in PRESETS:
            raise InputError(f"unknown mode {name!r}: expected one of {', '.join(PRESETS)}")
        pol = PRESETS[name].replace(**parse_overrides(rest)) if rest else PRESETS[name]
    if overrides:
        pol = pol.replace(**(overrides if isinstance(overrides, dict) else parse_overrides(overrides)))
    return pol
