#!/usr/bin/env bash
# `pnpm test:images`: builds every image with podman from the real Dockerfile (one target each),
# prints their sizes (failing over budget), then runs the compose topology from them
# (test/images/stack.mjs).
# Needs root (podman's overlay storage and runc here; it installs podman when missing).
# Where no container registry is reachable, the Node base image is a local TEST SUBSTITUTE
# (test/images/base-image.sh). Set IMAGES_REBUILD_BASE=1 to make it again.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf '[images] %s\n' "$*"; }
fail() { printf '[images] FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (podman with overlay storage and runc, as on the CI machines)"
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman runc debootstrap fuse-overlayfs slirp4netns uidmap >/dev/null
fi
export CONTAINERS_CONF="$PWD/test/images/containers.conf"

BASE=localhost/gateway-node-base:test
TAG=test
export IMAGES_TAG="$TAG"
# The Dockerfile's target (the image's name) and its budget in MB (README.md, "Images": keep the
# two in step).
IMAGES=(
  "billing 295"
  "dispatcher 285"
  "inference-worker 315"
  "edge 320"
  "stand-ins 275"
)

started=$(date +%s)
# One snapshot of the sources for all five builds: a file edited meanwhile cannot give the images
# different sources or break the shared build layers. (.dockerignore then trims it further.)
context="$(mktemp -d /var/tmp/gateway-images-context.XXXXXX)"
trap 'rm -rf "$context"' EXIT
tar -C . --exclude=node_modules --exclude=dist --exclude=.git --exclude=.tmp --exclude=.data \
  --exclude=.artifacts --exclude=.bench --exclude=.faults --exclude='*.tsbuildinfo' -cf - . \
  | tar -C "$context" -xf -
if [ "${IMAGES_REBUILD_BASE:-0}" = 1 ] || ! podman image exists "$BASE"; then
  log "making the base image $BASE (test substitute for the pinned node image)"
  nice -n 10 bash test/images/base-image.sh "$BASE"
fi
for entry in "${IMAGES[@]}"; do
  read -r name _ <<<"$entry"
  t0=$(date +%s)
  # The first build compiles the workspace; the others reuse its layers (the shared build stage).
  if ! nice -n 10 podman build --pull=never --network host --layers \
    --build-arg NODE_IMAGE="$BASE" -f "$context/Dockerfile" --target "$name" \
    -t "localhost/inference-gateway/$name:$TAG" "$context" \
    >"/tmp/gateway-image-build-$name.log" 2>&1; then
    tail -40 "/tmp/gateway-image-build-$name.log" >&2
    fail "building $name (Dockerfile, --target $name)"
  fi
  log "built $name in $(($(date +%s) - t0)) s"
done
log "all images built in $(($(date +%s) - started)) s"

over=0
printf '[images] %-18s %9s %9s\n' image size budget
for entry in "${IMAGES[@]}"; do
  read -r name budget <<<"$entry"
  bytes=$(podman image inspect --format '{{.Size}}' "localhost/inference-gateway/$name:$TAG")
  mb=$(((bytes + 999999) / 1000000))
  flag=''
  if [ "$mb" -gt "$budget" ]; then flag=' OVER BUDGET'; over=1; fi
  printf '[images] %-18s %6s MB %6s MB%s\n' "$name" "$mb" "$budget" "$flag"
done
[ "$over" -eq 0 ] || fail "an image is over its budget"

[ "${IMAGES_BUILD_ONLY:-0}" = 1 ] && exit 0
# The driver imports the built test helpers (PostgreSQL, RabbitMQ, broker users).
pnpm exec tsc -b packages/testing packages/messaging
t0=$(date +%s)
node test/images/stack.mjs
log "stack checks passed in $(($(date +%s) - t0)) s; total $(($(date +%s) - started)) s"
