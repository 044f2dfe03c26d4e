"""Push an exported dataset folder to a Hugging Face dataset repository (the operator's step)."""
from __future__ import annotations

import os
from pathlib import Path


def push_to_hub(folder: str | os.PathLike, repo_id: str, *, token: str | None = None,
                endpoint: str | None = None, private: bool = False,
                commit_message: str = "Upload SEG dataset made with ts2viz") -> str:
    """Upload a dataset folder to the Hugging Face dataset repo ``repo_id`` (created if missing) with
    the ``huggingface_hub`` client, and return the URL of the commit.

    The folder is checked first with :func:`ts2viz.dataset.validate_folder` (every problem, one line
    each, in the :class:`~ts2viz.errors.InputError` raised; image files must exist). ``endpoint``
    defaults to ``HF_ENDPOINT`` / the public hub; ``token`` to the client's own (``HF_TOKEN``, login).
    Load it back with ``ts2viz.dataset.load_hf(repo_id)``.
    """
    raise NotImplementedError
