#!/usr/bin/env bash
# Build the local Python base image (Debian bookworm's python3) with debootstrap + docker import,
# for engines that can't pull from a registry. Reused when the tag already exists.
#   scripts/base-image.sh [TAG]        prints the tag on stdout
set -euo pipefail

tag="${1:-${ESTEIRA_BASE_IMAGE:-esteira-base/python:3.11-bookworm}}"
docker="${DOCKER:-docker}"

if "$docker" image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

# The mirror this machine's apt already uses (deb822 sources first, then the one-line format).
mirror="${DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' \
             /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' \
             /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
fi
if [ -z "$mirror" ]; then
  echo "base-image: no Debian mirror found in /etc/apt; set DEBIAN_MIRROR" >&2
  exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/esteira-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
echo "base-image: debootstrap bookworm from $mirror" >&2
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
  bookworm "$root" "$mirror" >&2
# Trust the CAs this host adds locally (a TLS proxy in front of the package index, say), so
# pip inside a build reaches the index exactly as the host does. Debian's pip reads this bundle.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null
fi
# Same sources inside the image as on the host, for a later `apt-get install` (PostgreSQL).
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
# Debian's python refuses `pip install` outside a venv (PEP 668) by design; the image only
# installs into venvs, so that stays.
tar -C "$root" -c . | "$docker" import \
  --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' - "$tag" >&2
echo "$tag"
