"""The base of the metrics a vision judge rates (UnifiedReward, VIEScore): the judge, its retries and the unread replies."""
from __future__ import annotations

import warnings

from .base import Metric
from .spec import Spec


class JudgedMetric(Metric):
    """A metric whose scores a vision judge gives in words; per-image details keep the replies.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    judge : EndpointJudge or LocalVisionJudge
        The vision judge (:func:`ts2viz.metrics.backbones.judge.load_vision_judge`).
    config : dict
        What identifies the metric besides its retries (the family, the judge's config, the prompts).
    retries : int, default 1
        How many times an unreadable reply is asked for again (only when the judge samples; recorded in the
        config as 0 for a greedy judge, which would repeat itself).
    batch_size : int or None, optional
        Images per scoring call (default 4).

    Attributes
    ----------
    unparsed : int
        The replies that could not be read, over the metric's life (shown with every warning).
    """

    has_details = True

    def __init__(self, spec: Spec, judge, config: dict, *, retries: int = 1, batch_size: int | None = None):
        self.judge = judge
        self.retries = max(0, int(retries))
        config = {**config, "retries": self.retries if judge.samples else 0}
        super().__init__(spec, config, getattr(judge, "device", "cpu"), batch_size or 4)
        self.unparsed = 0

    def warn_unread(self, bad: int, of: int, what: str) -> None:
        """Count ``bad`` unread replies of ``of`` and warn (where the batch was scored) that their images are NaN.

        Parameters
        ----------
        bad : int
            The replies of this batch that could not be read (none: no warning).
        of : int
            The batch's requests.
        what : str
            What those replies lacked (``"could not be read as ..."``).
        """
        if not bad:
            return
        self.unparsed += bad
        warnings.warn(f"{self.spec}: {bad} judge {'reply' if bad == 1 else 'replies'} of {of} {what}; those images "
                      f"are NaN ({self.unparsed} so far; the replies are in the details)", stacklevel=3)
