"""The ts2viz app, as a Hugging Face Space starts it: ``python app.py [OPTIONS]`` is ``ts2viz app [OPTIONS]``.

The options, the trust levels and the start errors (one line, exit code 2): :mod:`ts2viz.cli.app`.
"""
import sys

from ts2viz.cli import main

if __name__ == "__main__":
    sys.exit(main(["app", *sys.argv[1:]]))
