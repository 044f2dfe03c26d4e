#!/usr/bin/env bash
# hpsv2 shares the pickscore side environment (torch, hpsv2 1.2.0 and its vocabulary file): see there.
exec bash "$(dirname "$0")/../pickscore/setup_env.sh"
