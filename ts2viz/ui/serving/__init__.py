"""Serving the app and who may use it.

The trust level and its caps (:mod:`.access`), the guard that answers malformed event calls
(:mod:`.guard`), the upload folder of a public app (:mod:`.uploads`), the background jobs
(:mod:`.jobs`), the warm-up's yielding to visitors (:mod:`.priority`) and the model call on a ZeroGPU
Space (:mod:`.gpu`).
"""
