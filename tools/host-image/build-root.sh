#!/usr/bin/env bash
# Builds the root file system the rehearsal boots its Debian 13 hosts from (the PgBouncer engine's
# pooler hosts): Debian trixie's priority required and important packages and the EC2 image's own
# (packages.txt beside this script), made by mmdebstrap from Debian's mirror, for this machine's
# architecture. The hosts boot it read-only with systemd-nspawn --volatile=overlay, so one root serves
# every host and each boot starts from the image as it was built, as a new instance does.
#
#   tools/host-image/build-root.sh      prints the root directory's path on stdout
#
# Cached under .cache/host-image/<hash of this script and the package list>; rebuilt when either
# changes. The machine's apt configuration is not touched (mmdebstrap uses its own). Progress on stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root_dir="$(cd "$here/../.." && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
log() { echo "build-root: $*" >&2; }

packages="$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt" | tr -s '[:space:]' ',' | sed 's/,$//')"
key="$(cat "$0" "$here/packages.txt" | sha256sum | cut -c1-16)"
arch="$(dpkg --print-architecture)"
cache="$root_dir/.cache/host-image"
target="$cache/debian-13-$arch-$key"

if [ -f "$target/.built" ]; then
  echo "$target/root"
  exit 0
fi
for tool in mmdebstrap systemd-nspawn; do
  command -v "$tool" >/dev/null || { echo "build-root: $tool is missing: apt-get install -y mmdebstrap systemd-container (make system-deps does)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "build-root: the hosts' root is made and booted as root (mmdebstrap in root mode, systemd-nspawn)" >&2; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[ -f "$target/.built" ] && { echo "$target/root"; exit 0; }
# Earlier builds of other inputs are dropped: one root per machine is all the rehearsal boots.
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'debian-13-*' -exec rm -rf {} +
mkdir -p "$target"
# A new instance's machine id is made at its first boot (systemd's first-boot semantics), as on an image.
# shellcheck disable=SC2016 # mmdebstrap runs the hook with the root as $1
empty_machine_id='rm -f "$1"/etc/machine-id "$1"/var/lib/dbus/machine-id; : >"$1"/etc/machine-id'
log "mmdebstrap trixie ($arch, required + important + $packages)"
if ! mmdebstrap --quiet --mode=root --variant=important --architectures="$arch" --keyring="$keyring" \
  --include="$packages" \
  --customize-hook="$empty_machine_id" \
  trixie "$target/root" \
  "deb $mirror trixie main" "deb $mirror trixie-updates main" "deb $security trixie-security main" \
  >"$target/mmdebstrap.log" 2>&1; then
  tail -20 "$target/mmdebstrap.log" >&2
  rm -rf "$target"
  exit 1
fi
# What the image is: the manifest the tests and `rehearse up` report.
# shellcheck disable=SC2016 # dpkg-query fields, not shell
chroot "$target/root" dpkg-query -W -f '${Package}\t${Version}\n' >"$target/manifest.tsv"
date -u +%FT%TZ >"$target/.built"
log "$(wc -l <"$target/manifest.tsv") packages in $target/root"
echo "$target/root"
