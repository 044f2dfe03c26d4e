"""One module per metric family (its docstring, its ``CARD``, its ``build`` factory, its ``FAMILY`` record), found by the registry.

Every module here that ends with a ``FAMILY = Family(...)`` record (:class:`ts2viz.metrics.family.Family`)
is a family; :func:`ts2viz.metrics.registry.builtin_families` finds them, so adding a family is adding its
module (``docs/development/adding-a-family.md``). A family module imports nothing heavy at module level
(torch, transformers, open_clip and PIL are imported inside functions), so that its record and card can be
read without them. A family with helper modules is a subpackage whose ``__init__`` is the family module
(``gecko/`` with ``questions``, ``fineeval/`` with ``card``, ``questions``, ``regions``, ``scoring`` and
``metric``, ``vqascore/`` with ``recipes`` and ``api``, ``viescore/`` with ``prompts``, ``hpsv3/`` with
``prompt``, ``tifa/`` with ``filter``).
"""
import sys
import types


class _FamiliesPackage(types.ModuleType):
    """The package that is also :func:`ts2viz.metrics.families` (the list of registered families).

    Python binds a subpackage as an attribute of its parent, so ``ts2viz.metrics.families`` names this
    package once it is imported; calling it gives what the registry's function gives, so
    ``ts2viz.metrics.families()`` means one thing whatever has been imported.
    """

    def __call__(self):
        """The registered families, as :func:`ts2viz.metrics.registry.families` gives them.

        Returns
        -------
        list of Family
            The families, in display order.
        """
        from ..registry import families

        return families()


sys.modules[__name__].__class__ = _FamiliesPackage
