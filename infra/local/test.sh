#!/usr/bin/env bash
# The one test command (README quick start, CI): format check, lint, typecheck, build, and
# every unit and integration test against real PostgreSQL and RabbitMQ started by the tests;
# then the timing suite (test/**/*.timing.ts, alone: latencies compared within one run); then
# the fault suite (test/faults: processes killed, paused and restarted, about 5 minutes); then
# a short nemesis run with a fixed seed (test/nemesis: overlapping faults drawn from the seed on
# a broker cluster and a PostgreSQL pair under mixed load, one checker over the history, about
# 3 minutes); then
# the images (test/images: the five images built with podman from the Dockerfile and the
# compose topology run from them, two edges and two workers; needs root, installs podman with
# apt when missing, about 4 minutes cold).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash infra/local/setup.sh
pnpm test
pnpm test:timing
pnpm test:faults
pnpm test:nemesis --seed 12 --duration 90
pnpm test:images
