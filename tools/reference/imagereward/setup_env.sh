#!/usr/bin/env bash
# Side environment for the imagereward fixture (never the project's venv; CI never runs this).
# image-reward 1.5 (July 2023) imports transformers.modeling_utils names that later transformers moved:
# transformers 4.30.2 of its time, timm 0.6.13 and fairscale 0.4.13 as it pins. torch comes from the
# pickscore environment (made first) through a .pth file, to save 5 GB of disk.
set -euo pipefail
VENV=${VENV:-/work/side/rewards-ir}
TORCH_FROM=${TORCH_FROM:-/work/side/rewards-a}
[ -x "$TORCH_FROM/bin/python" ] || bash "$(dirname "$0")/../pickscore/setup_env.sh"
python3.11 -m venv "$VENV"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$TORCH_FROM/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz_torch_from_rewards_a.pth"
"$VENV/bin/pip" install -q --no-deps transformers==4.30.2 tokenizers==0.13.3 timm==0.6.13 \
    huggingface-hub==0.16.4 image-reward==1.5 clip-anytorch==2.6.0
# fairscale 0.4.13 is an sdist built without isolation (it imports torch to build): the venv's own
# setuptools needs the wheel package for bdist_wheel (python3.11's venv has setuptools 65 but no wheel)
"$VENV/bin/pip" install -q wheel
"$VENV/bin/pip" install -q --no-deps --no-build-isolation fairscale==0.4.13
echo "ready: $VENV"
