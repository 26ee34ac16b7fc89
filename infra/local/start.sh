#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs the whole gateway locally.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash infra/local/setup.sh
pnpm run build
exec node infra/local/local-gateway.mjs
