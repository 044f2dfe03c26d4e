#!/bin/sh
# Run make_fixture.py in the OneIG side venv (setup_side_venv.sh): offline, the side venv's own hub cache, OneIG's
# checkout ($SIDE/src) on the path. SIDE: default /work/side/oneig.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
SIDE=${SIDE:-/work/side/oneig}
export SIDE HF_HOME="$SIDE/hf_home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$HERE:$SIDE/src${PYTHONPATH:+:$PYTHONPATH}"
exec nice -n 10 "$SIDE/venv/bin/python" "$HERE/make_fixture.py" "$@"
