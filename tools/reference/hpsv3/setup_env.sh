#!/usr/bin/env bash
# Side environment for the hpsv3 fixture (never the project's venv; CI never runs this).
# hpsv3 1.0.0 pins transformers 4.45.2; its inference imports its training module (peft, trl, matplotlib,
# tensorboard...), so those are installed too; deepspeed, diffusers and opencv (training and generation
# only) are not. torch comes from the pickscore environment through a .pth file.
set -euo pipefail
VENV=${VENV:-/work/side/rewards-h3}
TORCH_FROM=${TORCH_FROM:-/work/side/rewards-a}
[ -x "$TORCH_FROM/bin/python" ] || bash "$(dirname "$0")/../pickscore/setup_env.sh"
python3.11 -m venv "$VENV"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$TORCH_FROM/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz_torch_from_rewards_a.pth"
"$VENV/bin/pip" install -q transformers==4.45.2 peft==0.13.2 trl==0.11.4 accelerate==1.0.1 datasets matplotlib \
    tensorboard fire omegaconf pandas pyyaml rich
"$VENV/bin/pip" install -q --no-deps hpsv3==1.0.0
echo "ready: $VENV"
