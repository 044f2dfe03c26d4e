"""``python -m ts2viz``: the command line (:func:`ts2viz.cli.main`), with its exit code."""
import sys

from .cli import main

sys.exit(main())
