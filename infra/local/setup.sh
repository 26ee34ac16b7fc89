#!/usr/bin/env bash
# Installs what this project needs on a fresh Debian machine, and nothing when it is there:
# pnpm, the locked dependencies, RabbitMQ and PostgreSQL server binaries, libfaketime (the
# nemesis's clock skew) and Chromium (for the dashboard's browser tests; Playwright drives
# Debian's build, never downloads one) from Debian.
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v pnpm >/dev/null 2>&1; then
  log "installing pnpm"
  npm install -g pnpm@12 >/dev/null
fi

if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  log "installing rabbitmq-server"
  apt_install rabbitmq-server
fi

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  log "installing postgresql"
  apt_install postgresql
fi

if ! ls /usr/lib/*/faketime/libfaketimeMT.so.1 >/dev/null 2>&1; then
  # The nemesis moves one process's wall clock with it (packages/testing/src/skewable-clock.ts).
  log "installing libfaketime"
  apt_install libfaketime
fi

if [ ! -x /usr/bin/chromium ]; then
  log "installing chromium"
  apt_install chromium
fi

log "installing dependencies from the lockfile"
# playwright-core downloads nothing itself; this keeps any Playwright package from trying.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 pnpm install --frozen-lockfile --reporter=silent
