#!/bin/sh
# Build the side venv that runs t2v_metrics 3.0's own code for the VQAScore / ITMScore / ITCScore fixtures.
#
# t2v-metrics==3.0 pins torch==2.5.1, transformers==4.49.0, numpy==1.26.4, Pillow==10.0.0 and ~60 more packages
# (apex==0.9.10dev, deepspeed, xformers, torchcodec, video tools ...), which cannot all be installed together on
# Python 3.11 here. So it is installed with --no-deps, next to:
#   torch 2.9.1 / torchvision 0.24.1 (the CUDA builds this machine has; the pin's 2.5.1 is not available),
#   transformers 4.49.0, tokenizers <0.22, numpy 1.26.4, Pillow 10.0.0 (all as pinned), and the unpinned
#   packages the image models import (sentencepiece, protobuf, timm, open_clip_torch, omegaconf, iopath,
#   fairscale, einops, opencv-python-headless, decord, qwen-vl-utils, tiktoken, openai, accelerate, ...).
# LLaVA-NeXT's `llava` package (imported at module level by llavaov_model.py) is installed --no-deps from
# LLaVA-VL/LLaVA-NeXT when LLAVA_NEXT points at a checkout of it (optional: no fixture uses it).
# t2v_metrics' package __init__ files are never run (t2v_import.py imports the model modules directly),
# so ffmpeg, xformers and torchcodec are not needed.
#
# TORCH overrides the torch pins: the speed benchmark (benchmarks/bench_vs_t2v_metrics.py) wants the project's
# own torch on both sides, e.g. TORCH="torch==2.15.0 torchvision==0.29.2".
#
# Usage: SIDE=/work/side/vqascore [TORCH="..."] [LLAVA_NEXT=/path/to/LLaVA-NeXT] sh setup_side_venv.sh
set -e
SIDE=${SIDE:-/work/side/vqascore}
mkdir -p "$SIDE" "$SIDE/hf_home" "$SIDE/stubs"
python3 -m venv "$SIDE/venv"
PIP="$SIDE/venv/bin/pip"
$PIP install -q --upgrade pip
$PIP install -q ${TORCH:-torch==2.9.1 torchvision==0.24.1}
$PIP install -q transformers==4.49.0 "tokenizers>=0.21,<0.22" numpy==1.26.4 Pillow==10.0.0 sentencepiece protobuf \
    "timm>=1.0.15" open-clip-torch ftfy omegaconf iopath fairscale einops opencv-python-headless decord \
    qwen-vl-utils==0.0.14 tiktoken openai httpx==0.24.0 accelerate scipy pandas "pyarrow<19" func_timeout
$PIP install -q --no-deps t2v-metrics==3.0
if [ -n "$LLAVA_NEXT" ]; then $PIP install -q --no-deps -e "$LLAVA_NEXT"; fi
"$SIDE/venv/bin/python" -c "import torch, transformers; print('side venv:', torch.__version__, transformers.__version__)"
