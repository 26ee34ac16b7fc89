#!/usr/bin/env bash
# TEST SUBSTITUTE for the official Node base image, which cannot be pulled where no container
# registry is reachable: Debian bookworm (debootstrap minbase, from the mirror apt uses) plus
# this machine's Node and npm, user `node` 1000:1000, imported as $1. It stands in for
# node:<lts>-bookworm-slim in tests only; real builds use the digest-pinned image (Dockerfile).
# The machine's CA bundle goes in because outbound TLS here is re-signed by the machine's own CA
# (the build stage fetches pnpm and packages from the npm registry).
set -euo pipefail
tag="$1"
work="$(mktemp -d /var/tmp/gateway-node-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mirror="$(grep -hoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1 | tr -d ' ' || true)"
mirror="${mirror:-http://deb.debian.org/debian}"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 1; }

node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
mkdir -p "$root/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# What the slim image leaves out too: package lists, caches, documentation.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*

tar -C "$root" -c . | podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  --message 'test substitute for node:bookworm-slim (test/images/base-image.sh)' \
  - "$tag" >/dev/null
echo "base image $tag: Debian bookworm minbase + Node $("$node_bin" --version) (test substitute)"
