#!/usr/bin/env bash
# The one test command (README quick start, CI): format check, lint, typecheck, build, and
# every unit and integration test against real PostgreSQL and RabbitMQ started by the tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash infra/local/setup.sh
pnpm test
