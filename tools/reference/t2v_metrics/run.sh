#!/bin/sh
# Run a script of this folder in the side venv (offline, its own hub cache, the import stubs on the path).
# SIDE: the side folder made by setup_side_venv.sh (default /work/side/vqascore).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
SIDE=${SIDE:-/work/side/vqascore}
script=$1; shift
export HF_HOME="$SIDE/hf_home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
exec "$SIDE/venv/bin/python" "$HERE/$script" "$@"
