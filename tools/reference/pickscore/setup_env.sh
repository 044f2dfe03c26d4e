#!/usr/bin/env bash
# Side environment for the pickscore and hpsv2 fixtures (never the project's venv; CI never runs this).
# PickScore's authors publish a snippet run with transformers; t2v_metrics 3.0 pins transformers 4.49.0.
set -euo pipefail
VENV=${VENV:-/work/side/rewards-a}
python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.14.1 torchvision==0.29.1
"$VENV/bin/pip" install -q transformers==4.49.0 ftfy regex timm einops huggingface-hub clint requests \
    sentencepiece "protobuf<4" safetensors
# hpsv2 pins pytest==7.2.0 and more that its scoring does not use; t2v_metrics pins a whole model zoo.
# Both are installed without their dependencies; the scripts import only the modules they run.
"$VENV/bin/pip" install -q --no-deps hpsv2==1.2.0 t2v-metrics==3.0
# hpsv2 1.2.0's wheel lacks its tokenizer's vocabulary (bpe_simple_vocab_16e6.txt.gz, the file open_clip
# ships): take it from the open_clip_torch wheel.
tmp=$(mktemp -d)
"$VENV/bin/pip" download -q --no-deps -d "$tmp" open_clip_torch==2.24.0
unzip -qo "$tmp"/open_clip_torch-*.whl 'open_clip/bpe_simple_vocab_16e6.txt.gz' -d "$tmp"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$tmp/open_clip/bpe_simple_vocab_16e6.txt.gz" "$site/hpsv2/src/open_clip/"
echo "ready: $VENV"
