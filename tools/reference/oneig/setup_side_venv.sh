#!/bin/sh
# Build the side venv that runs OneIG-Bench's own alignment code (OneIG-Bench/OneIG-Benchmark commit 41b4983) for
# the reference fixture of tests/fixtures/reference/oneig/ (make_fixture.py).
#
# OneIG's requirements.txt pins transformers 4.50.0 (its run_alignment.sh installs it) and torch 2.6.0 with
# triton and flash-attention for CUDA; the fixture runs on the CPU in float32 with eager attention, so torch is
# the CPU-usable 2.14.1 (torchvision 0.29.1 installed with it, as pip resolves them only together). qwen-vl-utils
# is unpinned there: 0.0.14, the release current at that commit (February 2026). Pillow is the project's pin
# (12.3.0): the JPEG round trip of each grid cell must give the same bytes on both sides.
# OneIG's scripts are unpacked from a checkout into $SIDE/src (ONEIG_REPO: a git directory of the repository);
# run.sh puts them on the path. The repository has no licence: nothing of it is copied into this repository.
#
# Usage: SIDE=/work/side/oneig ONEIG_REPO=/path/to/OneIG-Benchmark.git sh setup_side_venv.sh
set -e
SIDE=${SIDE:-/work/side/oneig}
mkdir -p "$SIDE/src" "$SIDE/hf_home"
python3.11 -m venv "$SIDE/venv"
PIP="$SIDE/venv/bin/pip"
$PIP install -q torch==2.14.1 torchvision==0.29.1
$PIP install -q transformers==4.50.0 accelerate==1.4.0 qwen-vl-utils==0.0.14 Pillow==12.3.0 "numpy<2.3" pandas \
    megfile tqdm safetensors
git --git-dir="$ONEIG_REPO" archive 41b4983 scripts/alignment/alignment_score.py scripts/utils/utils.py \
    scripts/utils/inference.py | tar -x -C "$SIDE/src"
"$SIDE/venv/bin/python" -c "import torch, transformers; print('side venv:', torch.__version__, transformers.__version__)"
