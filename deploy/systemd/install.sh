#!/usr/bin/env bash
# Install or upgrade Esteira as the systemd service `esteira` (run as root):
#   sudo deploy/systemd/install.sh [SOURCE]   # SOURCE: this checkout (default) or a wheel
# An upgrade backs up the SQLite store first, reinstalls, and restarts; the bootstrap on start
# applies the migrations, and `journalctl -u esteira -f` shows the banner.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_pkg="${1:-$(cd "$here/../.." && pwd)}"
prefix=/opt/esteira
state=/var/lib/esteira
logs=/var/log/esteira
config=/etc/esteira
unit=/etc/systemd/system/esteira.service

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo $0)" >&2
  exit 1
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "install.sh: Python >= 3.11 is required" >&2; exit 1; }

id esteira >/dev/null 2>&1 \
  || useradd --system --home-dir "$state" --shell /usr/sbin/nologin esteira
install -d -o esteira -g esteira -m 0750 "$state" "$state/data" "$logs"
install -d -o root -g esteira -m 0750 "$config"
install -d -m 0755 "$prefix" "$prefix/share"

upgrading=no
if systemctl is-active --quiet esteira; then
  upgrading=yes
fi
store="$state/data/db/esteira.db"
if [ -f "$store" ]; then
  backup="$state/backups/esteira-$(date -u +%Y%m%dT%H%M%SZ).db"
  install -d -o esteira -g esteira -m 0750 "$state/backups"
  # sqlite3's online backup: consistent even while the service is still writing.
  python3 -c 'import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.close()' "$store" "$backup"
  chown esteira:esteira "$backup"
  echo "install.sh: backed up the operational store to $backup"
fi

[ -x "$prefix/venv/bin/python" ] || python3 -m venv "$prefix/venv"
# `embedded`: Temporal's dev server for the embedded mode, and the rest `esteira dev` runs.
"$prefix/venv/bin/pip" install --quiet --disable-pip-version-check --upgrade "$source_pkg[embedded]"
if [ -f "$here/../../docs/deployment.md" ]; then
  install -m 0644 "$here/../../docs/deployment.md" "$prefix/share/deployment.md"
fi

if [ ! -f "$config/esteira.env" ]; then
  install -o root -g esteira -m 0640 "$here/esteira.env.example" "$config/esteira.env"
  echo "install.sh: edit $config/esteira.env (ESTEIRA_API_KEY and the secrets), then start"
fi
install -m 0644 "$here/esteira.service" "$unit"
systemctl daemon-reload
systemctl enable esteira >/dev/null

if [ "$upgrading" = yes ]; then
  # Stop drains in-flight jobs; pause the pipeline first to let a long batch finish.
  systemctl restart esteira
  echo "install.sh: restarted; follow the bootstrap with: journalctl -u esteira -f"
else
  echo "install.sh: installed; start with: systemctl start esteira"
fi
