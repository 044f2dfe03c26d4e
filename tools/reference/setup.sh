#!/usr/bin/env bash
# Side environments for the reference fixtures (tools/reference/README.md). Run by hand, never in CI.
# Usage: bash tools/reference/setup.sh [ROOT]   (default ROOT: /work/side)
set -euo pipefail
ROOT=${1:-/work/side}
mkdir -p "$ROOT"
python3 -m venv "$ROOT/fc-clip"
"$ROOT/fc-clip/bin/pip" install -q torch==2.14.1 torchvision==0.29.1 openai-clip==1.0.1 "setuptools<80" \
    scikit-learn torchmetrics==1.9.0 "transformers<5" "huggingface_hub<1" safetensors packaging tqdm ftfy regex \
    pillow numpy
python3 -m venv "$ROOT/fc-dsg"
"$ROOT/fc-dsg/bin/pip" install -q torch==2.14.1 "numpy<2" transformers==4.31.0 sentencepiece protobuf==3.20.3 \
    pandas "pyarrow<18" pillow openai tqdm scipy
