"""Check a figure's JSON, as the page receives it, against Plotly's schema, key by key.

``go.Figure(json)`` is not such a check: plotly.py's classes accept "magic underscore" spellings
(``line_shape="hv"`` for ``line: {shape: "hv"}``) and convert them, while plotly.js reads the JSON as it
is and silently ignores a key it does not know (the node CDFs were once drawn as ramps that way). Here
every key of every trace and of the layout must be an attribute of plotly's object model at that exact
place (``_valid_props``, or a layout subplot id such as ``xaxis2``/``legend2``), every nested object
must be an object where the schema has one, and every leaf value must pass that attribute's own
validator (plotly's ``validate_coerce``). The schema is plotly.py's, generated from plotly.js 3 (the
major version Gradio's page loads).
"""
from __future__ import annotations

from typing import Any


def _walk(obj, d: Any, path: str, errors: list[str]) -> None:
    from _plotly_utils.basevalidators import CompoundArrayValidator, CompoundValidator

    if not isinstance(d, dict):
        errors.append(f"{path}: expected an object, got {type(d).__name__}")
        return
    for key, value in d.items():
        where = f"{path}.{key}"
        subplot = getattr(obj, "_subplot_re_match", None)
        if key not in obj._valid_props and not (subplot and subplot(key)):
            errors.append(f"{where}: not an attribute plotly.js reads here")
            continue
        try:
            v = obj._get_validator(key)
        except (KeyError, ValueError) as e:
            errors.append(f"{where}: {e}")
            continue
        if isinstance(v, CompoundValidator):
            _walk(v.data_class(), value, where, errors)
        elif isinstance(v, CompoundArrayValidator):
            if not isinstance(value, list):
                errors.append(f"{where}: expected a list of objects")
                continue
            for i, item in enumerate(value):
                _walk(v.data_class(), item, f"{where}[{i}]", errors)
        else:
            try:
                v.validate_coerce(value)
            except ValueError as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else "invalid"
                errors.append(f"{where}: {first[:200]}")


def schema_errors(figure: dict) -> list[str]:
    """The places where ``figure`` (``{"data": [...], "layout": {...}}`` as plotly.js gets it) departs
    from Plotly's schema: unknown or misplaced keys, objects where values belong and back, invalid
    values. An empty list means plotly.js reads every key as written."""
    import plotly.graph_objects as go
    from plotly.validator_cache import ValidatorCache

    errors: list[str] = []
    if not isinstance(figure, dict) or not isinstance(figure.get("data"), list):
        return ["figure: expected {'data': [...], 'layout': {...}}"]
    extra = set(figure) - {"data", "layout", "config", "frames"}
    errors += [f"figure.{k}: not a figure key" for k in sorted(extra)]
    classes = ValidatorCache.get_validator("", "data").class_strs_map
    for i, trace in enumerate(figure["data"]):
        kind = trace.get("type", "scatter") if isinstance(trace, dict) else None
        if kind not in classes:
            errors.append(f"data[{i}]: unknown trace type {kind!r}")
            continue
        body = {k: v for k, v in trace.items() if k != "type"}
        _walk(getattr(go, classes[kind])(), body, f"data[{i}]({kind})", errors)
    _walk(go.Layout(), figure.get("layout", {}), "layout", errors)
    return errors
