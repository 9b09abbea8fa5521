#!/usr/bin/env bash
# Install the Debian packages the tests use (idempotent): PostgreSQL for the second store tier,
# the verifiers nobody here wrote (pdfsig, openssl cms, xmlsec1), SoftHSM2 for PKCS#11,
# Chromium for the dashboard's browser tests and a Docker engine for the image and compose tier.
set -euo pipefail

missing=()
have_pg() { compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; }
have_pg || missing+=(postgresql)
command -v pdfsig >/dev/null || missing+=(poppler-utils)
command -v openssl >/dev/null || missing+=(openssl)
command -v xmlsec1 >/dev/null || missing+=(xmlsec1)
command -v softhsm2-util >/dev/null || missing+=(softhsm2)
# Headless browser for the dashboard tests (Playwright drives it; its own download can't run).
command -v chromium >/dev/null || missing+=(chromium)
# The docker tier (tests/deploy/test_image.py, test_compose_up.py): Debian's engine, run by
# scripts/docker-engine.sh; debootstrap for the python base image (scripts/base-image.sh), as no
# registry is reachable; Compose v1, the only Compose Debian bookworm ships.
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v docker-compose >/dev/null || missing+=(docker-compose)
# promtool checks and unit-tests deploy/prometheus/alerts.yml (Debian ships it with the server).
command -v promtool >/dev/null || missing+=(prometheus)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "install-system-deps: missing ${missing[*]}; run as root to install them" \
       "(the tests that need them will say they were skipped)." >&2
  exit 0
fi

echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts a cluster on install; the tests run their own, so don't hold its port.
if command -v pg_ctlcluster >/dev/null; then
  for cluster in $(pg_lsclusters -h 2>/dev/null | awk '{print $1"/"$2}'); do
    "${sudo[@]}" pg_ctlcluster "${cluster%/*}" "${cluster#*/}" stop 2>/dev/null || true
  done
fi
# Only promtool is wanted: don't leave Debian's Prometheus server holding port 9090.
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
  "${sudo[@]}" systemctl disable --now prometheus 2>/dev/null || true
fi
