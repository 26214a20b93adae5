#!/usr/bin/env bash
# Install what the tests need, idempotently: Debian packages, the real Ignition binaries
# (extracted, not installed), and the project's .venv. Safe to run again; does nothing when all is present.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEPS="$ROOT/.deps"
mkdir -p "$DEPS"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
while read -r pkg; do
  case "$pkg" in ''|\#*) continue ;; esac
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done < "$ROOT/scripts/debian-packages.txt"

apt_updated=0
apt_update_once() {
  if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
}

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  apt_update_once
  # No services started by package scripts: tests start their own servers.
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  $SUDO rm -f /usr/sbin/policy-rc.d
fi

# The real Ignition (Debian 2.14): ignition-validate and the dracut-module binary, extracted only.
if [ ! -x "$DEPS/ignition/usr/bin/ignition-validate" ]; then
  echo "install-deps: extracting Debian's ignition into $DEPS/ignition"
  apt_update_once
  tmp="$(mktemp -d)"
  (cd "$tmp" && apt-get download ignition >/dev/null)
  dpkg -x "$tmp"/ignition_*.deb "$DEPS/ignition"
  rm -rf "$tmp"
fi

# The project's virtualenv.
# A plain pure-Python install (pyproject.toml only): redone when pyproject.toml changes.
if [ ! -x "$ROOT/.venv/bin/mco" ] || [ "$ROOT/pyproject.toml" -nt "$ROOT/.venv/.installed" ]; then
  echo "install-deps: preparing .venv"
  [ -x "$ROOT/.venv/bin/python" ] || python3 -m venv "$ROOT/.venv"
  "$ROOT/.venv/bin/pip" install -q --upgrade pip
  "$ROOT/.venv/bin/pip" install -q -e "$ROOT[test]"
  touch "$ROOT/.venv/.installed"
fi
