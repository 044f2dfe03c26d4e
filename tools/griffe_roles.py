"""A Griffe extension for the API reference (mkdocs.yml loads it): numpydoc's cross-references as links.

ts2viz's docstrings follow numpydoc, whose cross-references are Sphinx roles (``:func:`bootstrap```,
``:class:`~ts2viz.scores.Scores```, ``:mod:`.ord_sep```) and whose "See Also" section lists one
``name : description`` entry per line. mkdocstrings renders neither: a role shows as ``:func:`` before the
name, and the See Also entries run together in one paragraph. Before rendering, this extension rewrites
each docstring of the package:

- a role becomes a link to the object's page when the name resolves, the way Python would from where
  the docstring is (the object itself, its class, its module, the module's imports; ``.name`` relative to
  the package; ``~`` shows the last part only), and inline code otherwise (numpy's, the standard
  library's); the link is an "optional" autoref, so a name that no page renders reads as plain code
  and never breaks ``mkdocs build --strict``;
- the See Also entries become a list, each name linked the same way.

The docstrings themselves are not changed (``help()`` and the doctests read them as they are written).
"""
from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|obj|exc|const|ref):`(?P<target>[^`]+)`")
SEE_ALSO = re.compile(r"^(?P<indent>[ \t]*)See Also\n(?P=indent)-{3,}[ \t]*\n", re.M)
#: a numpydoc section header (a line, then a line of dashes): where a See Also block ends
HEADER = re.compile(r"^[ \t]*[A-Z][A-Za-z ]*\n[ \t]*-{3,}[ \t]*$", re.M)


class SphinxRoles(griffe.Extension):
    """Rewrite roles and See Also sections in every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite every docstring of ``pkg`` once the whole package is loaded (names then resolve)."""
        collection = loader.modules_collection
        for obj in _objects(pkg):
            doc = obj.docstring
            if doc is None or (":" not in doc.value and "See Also" not in doc.value):
                continue
            doc.value = rewrite(doc.value, lambda name, obj=obj: resolve(collection, obj, name))


def _objects(obj: griffe.Object):
    """``obj`` and every object defined under it (aliases, i.e. imported names, left out)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


def resolve(collection: Any, obj: griffe.Object, name: str) -> str | None:
    """The path of the object ``name`` refers to from ``obj``'s docstring, or None."""
    name = name.strip().lstrip("~")
    if not name or " " in name:
        return None
    if name.startswith("."):
        module = obj if obj.is_module else obj.module
        base = module if module.is_init_module else module.parent
        for _ in range(len(name) - len(name.lstrip(".")) - 1):
            base = base.parent if base is not None else None
        candidates = [f"{base.path}.{name.lstrip('.')}"] if base is not None else []
    else:
        candidates, scope = [], obj
        while scope is not None:
            candidates.append(f"{scope.path}.{name}")
            scope = scope.parent
        candidates.append(name)
    for path in candidates:
        try:
            target = collection[path]
            return target.final_target.path if target.is_alias else target.path
        except Exception:  # noqa: BLE001 - not found, or an import whose target is not loaded (numpy, ...)
            continue
    return None


def _link(name: str, path: str | None) -> str:
    shown = name.strip()
    shown = shown.rsplit(".", 1)[-1] if shown.startswith("~") else shown.lstrip(".")
    if path is None:
        return f"`{shown}`"
    return f'<autoref identifier="{path}" optional>`{shown}`</autoref>'


def _see_also(block: str, find) -> str:
    """A See Also block (``name[, name] [: description]`` entries, continuation lines indented) as a list."""
    lines = [x for x in block.split("\n") if x.strip()]
    indent = min((len(x) - len(x.lstrip()) for x in lines), default=0)
    items: list[str] = []
    for line in lines:
        if len(line) - len(line.lstrip()) > indent and items:      # a description's next line
            items[-1] += " " + line.strip()
            continue
        names, _, text = line.strip().partition(" : ")
        if ROLE.search(names) or "`" in names:                      # written with roles already
            linked = ROLE.sub(lambda m: _link(m["target"], find(m["target"])), names)
        else:
            linked = ", ".join(_link(n.strip(), find(n.strip())) for n in names.split(",") if n.strip())
        items.append(f"{' ' * indent}- {linked}" + (f": {text}" if text else ""))
    return "\n".join(items) + "\n"


def rewrite(text: str, find) -> str:
    """``text`` with its roles linked and its See Also entries listed; ``find(name)`` resolves a name."""
    m = SEE_ALSO.search(text)
    if m:
        start = m.end()
        nxt = HEADER.search(text, start)
        end = nxt.start() if nxt else len(text)
        text = text[:start] + _see_also(text[start:end], find) + ("\n" if nxt else "") + text[end:]
    return ROLE.sub(lambda r: _link(r["target"], find(r["target"])), text)
