#!/bin/sh
# Build the side venv that runs t2v_metrics 3.1's own code (and GenEval 2's scoring code) for
# the reference fixtures of tools/reference/t2v_metrics_3_1/.
#
# t2v_metrics 3.1 is not on PyPI: its files come from a checkout of linzhiqiu/t2v_metrics at commit 6ecb74f
# (T2V_REPO: a git directory of that repository), unpacked into $SIDE/src and put on PYTHONPATH by run.sh
# (never installed, never copied into this repository). Its pyproject asks transformers>=4.52 (Qwen3-VL needs
# 4.57), torch>=2.7; the video, audio and API packages it also lists are not needed for the image models.
# GenEval2 (facebookresearch/GenEval2 commit a6e82d2) is unpacked beside it (GENEVAL2_REPO) when given; OneIG-Bench
# has its own side venv (tools/reference/oneig/setup_side_venv.sh: the transformers it pins).
#
# Usage: SIDE=/work/side/t2v31 T2V_REPO=/path/to/t2v_metrics.git [GENEVAL2_REPO=...] sh setup_side_venv.sh
set -e
SIDE=${SIDE:-/work/side/t2v31}
mkdir -p "$SIDE/src" "$SIDE/hf_home"
python3 -m venv "$SIDE/venv"
PIP="$SIDE/venv/bin/pip"
$PIP install -q --upgrade pip
$PIP install -q torch==2.14.1 torchvision==0.29.1
$PIP install -q transformers==4.57.3 "numpy<2.3" Pillow sentencepiece protobuf accelerate qwen-vl-utils==0.0.14 \
    scipy einops decord tokenizers
git --git-dir="$T2V_REPO" archive 6ecb74f t2v_metrics | tar -x -C "$SIDE/src"
if [ -n "$GENEVAL2_REPO" ]; then mkdir -p "$SIDE/geneval2" && git --git-dir="$GENEVAL2_REPO" archive a6e82d2 evaluation.py geneval2_data.jsonl | tar -x -C "$SIDE/geneval2"; fi
"$SIDE/venv/bin/python" -c "import torch, transformers; print('side venv:', torch.__version__, transformers.__version__)"
