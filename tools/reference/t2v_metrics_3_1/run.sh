#!/bin/sh
# Run a script of this folder in the t2v_metrics 3.1 side venv, through ../t2v_metrics/run.sh (offline, the side
# venv's own hub cache, ../t2v_metrics' shared helpers on the path), with this folder and t2v_metrics 3.1's
# checkout ($SIDE/src) on the path too. SIDE: the folder made by setup_side_venv.sh (default /work/side/t2v31).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
SIDE=${SIDE:-/work/side/t2v31}
export SIDE PYTHONPATH="$HERE:$SIDE/src${PYTHONPATH:+:$PYTHONPATH}"
script=$1; shift
exec "$HERE/../t2v_metrics/run.sh" "../t2v_metrics_3_1/$script" "$@"
