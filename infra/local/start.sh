#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs the whole gateway locally.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash infra/local/setup.sh
pnpm run generate
pnpm exec tsc -b tsconfig.build.json
# The dashboard is rebuilt only when one of its sources is newer than its build: Vite empties
# apps/dashboard/dist first, and a gateway already running from this checkout (or, in CI, the
# browser tests beside this script's own test) serves its pages from there meanwhile.
built=apps/dashboard/dist/index.html
if [ ! -f "$built" ] || [ -n "$(find apps/dashboard/src apps/dashboard/index.html \
  apps/dashboard/vite.config.ts apps/dashboard/package.json packages/contracts/src \
  -newer "$built" -print -quit)" ]; then
  pnpm run build:dashboard
fi
exec node infra/local/local-gateway.mjs
