#!/bin/sh
# Run a script of this folder in the t2v_metrics 3.1 side venv (offline, its own hub cache; t2v_metrics 3.1's
# checkout and ../t2v_metrics (the shared tiny tokenizers, images and import helper) on the path).
# SIDE: the side folder made by setup_side_venv.sh (default /work/side/t2v31).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
SIDE=${SIDE:-/work/side/t2v31}
script=$1; shift
export HF_HOME="$SIDE/hf_home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$HERE:$HERE/../t2v_metrics:$SIDE/src${PYTHONPATH:+:$PYTHONPATH}"
exec nice -n 10 "$SIDE/venv/bin/python" "$HERE/$script" "$@"
