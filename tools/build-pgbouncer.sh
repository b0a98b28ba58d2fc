#!/usr/bin/env bash
# Builds PgBouncer 1.24 for the local rehearsal into .cache/pgbouncer-1.24 (bin/pgbouncer), from
# Debian 13 (trixie)'s source package: upstream 1.24.1 plus Debian's security patches, plus the upstream
# fixes in tools/pgbouncer-patches/ that the rehearsal needs. Debian 12 ships 1.18, which lacks what
# the rehearsal relies on (so_reuseport peering of cancel requests, protocol-level prepared statements
# in transaction pooling).
#
# The system's apt configuration is left untouched: apt reads a sources list, state and cache of its
# own under .cache/pgbouncer-src/apt. apt checks the download: InRelease signed by the Debian archive
# key (debian-archive-keyring) -> the Sources index's hash -> the .dsc, .orig and .debian files' hashes;
# dpkg-source then checks the files against the .dsc again before it unpacks and patches.
#
# Skipped when already built from the same patches (stamp file). Prints the binary's path on stdout;
# progress goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache"
prefix="$cache/pgbouncer-1.24"
stamp="$prefix/.built"
binary="$prefix/bin/pgbouncer"
work="$cache/pgbouncer-src"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
patches_dir="$root/tools/pgbouncer-patches"
# What the build needs on the machine (Debian 12 packages from the system's own sources).
build_packages=(gcc make dpkg-dev patch pkg-config libevent-dev libssl-dev libc-ares-dev)

log() { echo "build-pgbouncer: $*" >&2; }
reports_1_24() {
  local v
  [ -x "$binary" ] && v="$("$binary" --version 2>/dev/null)" && [[ "$v" == "PgBouncer 1.24."* ]]
}

mkdir -p "$cache"
# One build at a time (make -j may run several targets that need it).
exec 9>"$cache/pgbouncer-1.24.lock"
flock 9

# The stamp names the patches the build has; changing one rebuilds.
patches_sum="$(cat "$patches_dir"/*.patch 2>/dev/null | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(sed -n 2p "$stamp")" = "patches $patches_sum" ] && reports_1_24; then
  echo "$binary"
  exit 0
fi

missing=()
for pkg in "${build_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing build dependencies: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "build-pgbouncer: missing Debian packages: ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
if [ ! -r "$keyring" ]; then
  echo "build-pgbouncer: $keyring is missing; install it with: apt-get install -y debian-archive-keyring" >&2
  exit 1
fi

# A throwaway apt of our own: trixie's source index only, nothing from /etc/apt/sources.list{,.d}.
rm -rf "$work"
apt_dir="$work/apt"
mkdir -p "$apt_dir/etc" "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$work/download"
echo "deb-src [signed-by=$keyring] $mirror trixie main" >"$apt_dir/etc/sources.list"
# The system's update and dpkg hooks (cache cleaners, PackageKit) are about the system's apt, not this one.
printf '#clear %s;\n' APT::Update::Pre-Invoke APT::Update::Post-Invoke APT::Update::Post-Invoke-Success DPkg::Pre-Invoke DPkg::Post-Invoke >"$apt_dir/etc/apt.conf"
apt_opts=(
  -c "$apt_dir/etc/apt.conf"
  -o "Dir::Etc::sourcelist=$apt_dir/etc/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::State=$apt_dir/state"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Acquire::Languages=none"
  # The files land in the project's tree, which apt's unprivileged _apt user may not be able to write.
  -o "APT::Sandbox::User=$(id -un)"
)
log "fetching trixie's source index from $mirror"
if ! apt-get "${apt_opts[@]}" -qq update >&2; then
  echo "build-pgbouncer: apt could not fetch or verify trixie's index; a keyring without the trixie key needs: apt-get install -y debian-archive-keyring (2023.3+deb12u1 or later)" >&2
  exit 1
fi
version="$(apt-cache "${apt_opts[@]}" showsrc pgbouncer | sed -n 's/^Version: //p' | head -1)"
case "$version" in
  1.24.*) ;;
  *) echo "build-pgbouncer: trixie's pgbouncer source is '${version:-absent}', expected 1.24.x" >&2; exit 1 ;;
esac
log "downloading pgbouncer $version (source)"
(cd "$work/download" && apt-get "${apt_opts[@]}" -qq source --download-only "pgbouncer=$version" >&2)
# dpkg-source checks the files against the .dsc; the .dsc's maintainer signature would need
# debian-keyring, which apt's chain above makes unnecessary (it only warns that it cannot check it).
(cd "$work/download" && dpkg-source --no-copy -x -- *.dsc src) >"$work/extract.log" 2>&1 \
  || { tail -30 "$work/extract.log" >&2; exit 1; }
src="$work/download/src"
for p in "$patches_dir"/*.patch; do
  [ -e "$p" ] || continue
  log "applying $(basename "$p")"
  patch -d "$src" -p1 --forward --quiet <"$p" >&2
done
# The man pages ship pre-built; keep make from regenerating them (that needs pandoc).
touch "$src"/doc/pgbouncer.1 "$src"/doc/pgbouncer.5
log "building into $prefix"
rm -rf "$prefix"
(
  cd "$src"
  ./configure --prefix="$prefix" --with-cares --without-systemd --without-pam >"$work/configure.log" 2>&1 \
    || { tail -30 "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; exit 1; }
  make install >>"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; exit 1; }
)
if ! reports_1_24; then
  echo "build-pgbouncer: $binary does not report PgBouncer 1.24: $("$binary" --version 2>&1 | head -1)" >&2
  exit 1
fi
printf '%s\npatches %s\n' "$version" "$patches_sum" >"$stamp"
rm -rf "$work"
log "$("$binary" --version | head -1) ready"
echo "$binary"
