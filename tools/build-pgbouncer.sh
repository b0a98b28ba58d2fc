#!/usr/bin/env bash
# Builds the kit's one PgBouncer: upstream PgBouncer 1.25.2 (CVE-2025-12819 and CVE-2026-6664..6667 fixed)
# from the source vendored in tools/pgbouncer-src/, plus the patches in tools/pgbouncer-patches/ (applied
# with patch -p1), for two uses:
#
#   tools/build-pgbouncer.sh              the local rehearsal's binary for this machine, installed into
#                                         .cache/pgbouncer (bin/pgbouncer); prints the binary's path.
#   tools/build-pgbouncer.sh --deb ARCH   a Debian 13 package for ARCH (arm64: the PgBouncer engine's
#                                         hosts, cross-built; amd64), into .cache/pgbouncer-deb/ARCH; prints
#                                         the .deb's path.
#
# The package is Debian 13's own binary package pgbouncer 1.24.1-1+deb13u2 (its maintainer scripts,
# conffiles, units and dependencies) with /usr/sbin/pgbouncer replaced by the kit's build, configured as
# Debian's debian/rules configures it (systemd notify, PAM, c-ares) and compiled against a trixie sysroot of
# that architecture. Its version is 1.25.2-0+apk<N>, so dpkg prefers it to Debian's; its control names the
# source (`Source: pgbouncer (1.25.2)`) and the patches (`X-Apk-Patches: <name>=<sha256>,...`). The
# rehearsal's build writes the same two fields into .cache/pgbouncer/BUILD-INFO, so the two can be compared
# (lib/packaging/pgbouncer-build.ts). The man pages stay Debian's 1.24.1 ones (upstream builds them with
# pandoc, which the kit does not install); everything that runs is 1.25.2.
#
# Why vendored: no registry reachable from a build machine serves PgBouncer 1.25.2 or later (Debian's sid
# index names 1.26.1 but its files are not served; trixie has 1.24.1 with backports). The tarball is
# `git archive --prefix=pgbouncer-1.25.2/ pgbouncer_1_25_2 | gzip -n -9` of upstream's repository
# (github.com/pgbouncer/pgbouncer, tag pgbouncer_1_25_2, commit 515b6284d273bfd62d1b7e3931ccdce41f9bfe7b);
# its SHA-256 is pinned below and checked before every build. A git tree has no configure script: autoconf
# makes it (autogen.sh), so the build needs autoconf, automake and libtool.
# Upstream has not fixed the forced-user SCRAM keys (#1612) nor a failed Parse's name (#1118), so both
# patches stay.
#
# Debian's binary package and the sysroot come through apt, which reads sources lists, state and caches of
# its own under .cache/pgbouncer-deb and checks every download: InRelease signed by the Debian archive key
# (debian-archive-keyring) -> the index's hash -> each file's hash.
#
# Skipped when already built from the same source and patches. Progress goes to stderr.
set -euo pipefail
# The patches apply, and are listed, in the C locale's order of their names.
export LC_ALL=C

# The one pinned source; the +apk revision is bumped when the kit's packaging changes without a new source.
UPSTREAM_VERSION=1.25.2
SOURCE_SHA256=8c33f6d7b150e2c5ddb4400fa85cc49a039e9d0c590912ab90e8c6af1833ddc6
# The tag's commit time: the package's file dates, so the same inputs give the same package.
SOURCE_EPOCH=1778258911
# Debian's binary package whose files carry the build.
DEBIAN_PACKAGING=1.24.1-1+deb13u2
APK_REVISION=1

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache"
prefix="$cache/pgbouncer"
binary="$prefix/bin/pgbouncer"
build_info="$prefix/BUILD-INFO"
src_cache="$cache/pgbouncer-src"
source_tarball="$root/tools/pgbouncer-src/pgbouncer-$UPSTREAM_VERSION.tar.gz"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
patches_dir="$root/tools/pgbouncer-patches"

log() { echo "build-pgbouncer: $*" >&2; }
die() { echo "build-pgbouncer: $*" >&2; exit 1; }

deb_arch=""
case "${1:-}" in
  "") ;;
  --deb)
    deb_arch="${2:-}"
    case "$deb_arch" in
      arm64 | amd64) ;;
      *) die "--deb takes the package's architecture, arm64 (the hosts) or amd64; got '${deb_arch}'" ;;
    esac
    ;;
  *) die "unknown argument '$1': give no argument (the rehearsal's binary) or --deb arm64|amd64 (a Debian 13 package)" ;;
esac

mkdir -p "$cache"
# One build at a time (make -j, or a test and make, may run it together); the rehearsal's and the
# packages' builds share the source download.
exec 9>"$cache/pgbouncer.lock"
flock 9

# The patch set, as the package's control records it: name=sha256, in the order patch applies them.
patch_files=()
for p in "$patches_dir"/*.patch; do
  [ -e "$p" ] && patch_files+=("$p")
done
patches_field=""
for p in "${patch_files[@]}"; do
  patches_field+="${patches_field:+,}$(basename "$p")=$(sha256sum "$p" | cut -d' ' -f1)"
done
[ -n "$patches_field" ] || patches_field="none"
source_field="pgbouncer ($UPSTREAM_VERSION)"

# Installs the Debian 12 packages the build needs from the system's own sources (root), else says which.
need_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ]; then
    log "installing build dependencies: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    die "missing Debian packages: ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}"
  fi
}

# A throwaway apt of our own in $1 with the sources list $2 (nothing from /etc/apt/sources.list{,.d});
# sets apt_opts. $3 is the architecture of binary indexes (none for sources).
project_apt() {
  local dir="$1" sources="$2" arch="${3:-}"
  mkdir -p "$dir/etc" "$dir/state/lists/partial" "$dir/cache/archives/partial"
  printf '%s' "$sources" >"$dir/etc/sources.list"
  : >"$dir/state/status"
  # The system's update and dpkg hooks (cache cleaners, PackageKit) are about the system's apt, not this one.
  printf '#clear %s;\n' APT::Update::Pre-Invoke APT::Update::Post-Invoke APT::Update::Post-Invoke-Success DPkg::Pre-Invoke DPkg::Post-Invoke >"$dir/etc/apt.conf"
  apt_opts=(
    -c "$dir/etc/apt.conf"
    -o "Dir::Etc::sourcelist=$dir/etc/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State=$dir/state"
    -o "Dir::State::status=$dir/state/status"
    -o "Dir::Cache=$dir/cache"
    -o "Acquire::Languages=none"
    -o "APT::Install-Recommends=false"
    # The files land in the project's tree, which apt's unprivileged _apt user may not be able to write.
    -o "APT::Sandbox::User=$(id -un)"
  )
  if [ -n "$arch" ]; then apt_opts+=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"); fi
  if ! apt-get "${apt_opts[@]}" -qq update >&2; then
    die "apt could not fetch or verify trixie's index; a keyring without the trixie key needs: apt-get install -y debian-archive-keyring (2023.3+deb12u1 or later)"
  fi
}

# Unpacks the vendored source into $1, checked against its pinned SHA-256, applies the kit's patches and
# makes the configure script.
prepare_source() {
  local dest="$1"
  [ -f "$source_tarball" ] || die "$source_tarball is missing: it is part of the repository (git checkout -- tools/pgbouncer-src)"
  local sum
  sum="$(sha256sum "$source_tarball" | cut -d' ' -f1)"
  [ "$sum" = "$SOURCE_SHA256" ] || die "$source_tarball has SHA-256 $sum, not the pinned $SOURCE_SHA256: restore it (git checkout -- tools/pgbouncer-src), or pin a new source on purpose in tools/build-pgbouncer.sh"
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -xzf "$source_tarball" -C "$dest" --strip-components=1
  local p
  for p in "${patch_files[@]}"; do
    log "applying $(basename "$p")"
    patch -d "$dest" -p1 --forward --quiet <"$p" >&2
  done
  (cd "$dest" && ./autogen.sh >"$dest.autogen.log" 2>&1) || { tail -30 "$dest.autogen.log" >&2; exit 1; }
}

# Runs configure (arguments) and make in the current directory, logs in $log_dir.
configure_and_make() {
  ./configure "$@" >"$log_dir/configure.log" 2>&1 || { tail -30 "$log_dir/configure.log" >&2; exit 1; }
  # The program only: the man pages need pandoc.
  make -j"$(nproc)" pgbouncer >"$log_dir/make.log" 2>&1 || { tail -30 "$log_dir/make.log" >&2; exit 1; }
}

# --- the rehearsal's binary ---------------------------------------------------------------------------

reports_version() {
  local v
  [ -x "$binary" ] && v="$("$binary" --version 2>/dev/null)" && [[ "$v" == "PgBouncer $UPSTREAM_VERSION"$'\n'* ]]
}

build_rehearsal() {
  if [ -f "$build_info" ] && grep -qxF "Source: $source_field" "$build_info" \
    && grep -qxF "X-Apk-Patches: $patches_field" "$build_info" && reports_version; then
    echo "$binary"
    return 0
  fi
  need_packages gcc make autoconf automake libtool patch pkg-config libevent-dev libssl-dev libc-ares-dev
  local src="$src_cache/rehearsal/src"
  log_dir="$src_cache/rehearsal"
  prepare_source "$src"
  log "building into $prefix"
  rm -rf "$prefix"
  # Without systemd and PAM: the rehearsal supervises its processes itself and logs in with SCRAM only.
  local flags=(--prefix="$prefix" --with-cares --without-systemd --without-pam)
  (cd "$src" && configure_and_make "${flags[@]}")
  install -D -m 0755 "$src/pgbouncer" "$binary"
  reports_version || die "$binary does not report PgBouncer $UPSTREAM_VERSION: $("$binary" --version 2>&1 | head -1)"
  printf 'Package: pgbouncer\nSource: %s\nX-Apk-Patches: %s\nX-Apk-Configure: %s\n' "$source_field" "$patches_field" "${flags[*]/#--prefix=*/--prefix=.cache/pgbouncer}" >"$build_info"
  rm -rf "$src_cache/rehearsal"
  log "$("$binary" --version | head -1) ready"
  echo "$binary"
}

# --- the Debian 13 package ----------------------------------------------------------------------------

build_deb() {
  local arch="$1" triplet cc strip_tool
  case "$arch" in
    arm64) triplet=aarch64-linux-gnu ;;
    amd64) triplet=x86_64-linux-gnu ;;
  esac
  local version="$UPSTREAM_VERSION-0+apk$APK_REVISION"
  local out_dir="$cache/pgbouncer-deb/$arch"
  local deb="$out_dir/pgbouncer_${version}_$arch.deb"
  local stamp="$out_dir/.built"
  local key="$source_field $patches_field apk$APK_REVISION"
  if [ -f "$deb" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    echo "$deb"
    return 0
  fi
  # The compiler for the package's architecture (Debian 12's cross compiler for arm64), and the tools to
  # repack and check it.
  local packages=(make autoconf automake libtool dpkg-dev patch pkg-config file)
  if [ "$arch" = arm64 ]; then packages+=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu); else packages+=(gcc binutils-x86-64-linux-gnu); fi
  need_packages "${packages[@]}"
  cc="$triplet-gcc"
  strip_tool="$triplet-strip"
  [ -r "$keyring" ] || die "$keyring is missing; install it with: apt-get install -y debian-archive-keyring"

  local work="$out_dir/work"
  rm -rf "$out_dir"
  mkdir -p "$work/debs"
  log_dir="$work"
  # trixie's binary packages for $arch: Debian's pgbouncer whose files carry the build and the sysroot's libraries
  # (with their security updates, as the hosts install them).
  log "fetching trixie's $arch index from $mirror"
  local list="" suite
  for suite in "$mirror trixie main" "$mirror trixie-updates main" "$security trixie-security main"; do
    list+="deb [arch=$arch signed-by=$keyring] $suite"$'\n'
  done
  project_apt "$work/apt" "$list" "$arch"
  local candidate
  candidate="$(apt-cache "${apt_opts[@]}" show "pgbouncer=$DEBIAN_PACKAGING" 2>/dev/null | sed -n 's/^Version: //p' | head -1)"
  [ "$candidate" = "$DEBIAN_PACKAGING" ] || die "trixie's indexes for $arch have no binary pgbouncer $DEBIAN_PACKAGING to repackage (apt-cache show pgbouncer lists: $(apt-cache "${apt_opts[@]}" show pgbouncer 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' '))"
  log "downloading Debian's pgbouncer $DEBIAN_PACKAGING ($arch) and a trixie $arch sysroot"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "pgbouncer=$DEBIAN_PACKAGING" >&2)
  # The build dependencies debian/control names that the binary links (libpq and the test tools are not
  # linked), with their dependency closure: apt resolves it against an empty status, so nothing of this
  # machine's Debian 12 is taken for trixie's.
  local sysroot_packages=(libc6-dev libevent-dev libssl-dev libc-ares-dev libpam0g-dev libsystemd-dev)
  mkdir -p "$work/sysroot-debs/partial"
  apt-get "${apt_opts[@]}" -qq -y --download-only -o "Dir::Cache::archives=$work/sysroot-debs" \
    install "${sysroot_packages[@]}" >&2
  local sysroot="$work/sysroot" d
  mkdir -p "$sysroot/usr/lib" "$sysroot/usr/bin" "$sysroot/usr/sbin"
  # trixie is merged-/usr: /lib and friends are links into /usr, which the libraries' linker scripts assume.
  for d in lib bin sbin; do ln -s "usr/$d" "$sysroot/$d"; done
  [ "$arch" = amd64 ] && mkdir -p "$sysroot/usr/lib64" && ln -s usr/lib64 "$sysroot/lib64"
  for d in "$work/sysroot-debs"/*.deb; do
    dpkg-deb --fsys-tarfile "$d" | tar -x --keep-directory-symlink -C "$sysroot"
  done
  local glibc
  glibc="$(dpkg-deb -f "$work/sysroot-debs"/libc6_*.deb Version)"
  log "sysroot: $(find "$work/sysroot-debs" -maxdepth 1 -name '*.deb' | wc -l) packages, glibc $glibc"

  local src="$work/src"
  prepare_source "$src"
  # As Debian's debian/rules configures it (dh_auto_configure's paths, --with-cares=yes --with-pam
  # --with-systemd), so Debian's and the kit's units (Type=notify, /usr/sbin/pgbouncer) work unchanged; with
  # dpkg-buildflags' hardening flags for the architecture. The build is treated as a cross build for amd64 too
  # (--build differs from --host): its programs link trixie's glibc, which this machine's may not run.
  local libdir="$sysroot/usr/lib/$triplet"
  local cflags cppflags ldflags
  cflags="$(DEB_HOST_ARCH="$arch" dpkg-buildflags --get CFLAGS)"
  cppflags="$(DEB_HOST_ARCH="$arch" dpkg-buildflags --get CPPFLAGS) -isystem $sysroot/usr/include/$triplet -isystem $sysroot/usr/include"
  ldflags="$(DEB_HOST_ARCH="$arch" dpkg-buildflags --get LDFLAGS) -B$libdir -L$libdir -Wl,-rpath-link=$libdir"
  local flags=(--build=x86_64-pc-linux-gnu --host="$triplet" --prefix=/usr --bindir=/usr/sbin --sysconfdir=/etc
    --localstatedir=/var --with-cares=yes --with-pam --with-systemd)
  log "building for $arch (Debian 13)"
  (
    cd "$src"
    export CC="$cc --sysroot=$sysroot" CFLAGS="$cflags" CPPFLAGS="$cppflags" LDFLAGS="$ldflags"
    export PKG_CONFIG_LIBDIR="$libdir/pkgconfig:$sysroot/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot"
    configure_and_make "${flags[@]}"
  )
  if ! grep -q '^  pam     = yes' "$work/configure.log" || ! grep -q '^  systemd = yes' "$work/configure.log"; then
    die "configure did not enable PAM and systemd for $arch (see $work/configure.log)"
  fi
  local built="$src/pgbouncer"
  # As dh_strip strips an executable.
  "$strip_tool" --remove-section=.comment --remove-section=.note "$built"

  # Debian's package, its pgbouncer replaced by the kit's build.
  local pkg="$work/pkg" original
  original="$(find "$work/debs" -maxdepth 1 -name 'pgbouncer_*.deb')"
  dpkg-deb -R "$original" "$pkg"
  check_binary "$arch" "$triplet" "$built" "$pkg/usr/sbin/pgbouncer" "$sysroot" "$glibc"
  touch -r "$pkg/usr/sbin/pgbouncer" "$built"
  cp -p "$built" "$pkg/usr/sbin/pgbouncer"
  chmod 0755 "$pkg/usr/sbin/pgbouncer"
  (cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"
  local installed_size
  installed_size="$(du -k -s --apparent-size --exclude=DEBIAN "$pkg" | cut -f1)"
  # Source names the source version (Debian's form where the binary's version differs from it).
  dpkg-deb -f "$original" >"$work/control.orig"
  awk -v version="$version" -v source="$source_field" -v patches="$patches_field" -v size="$installed_size" '
    /^Version:/ { print "Version: " version; next }
    /^Source:/ { next }
    /^Installed-Size:/ { print "Installed-Size: " size; next }
    /^Description:/ && !done { print "Source: " source; print "X-Apk-Patches: " patches; done = 1 }
    { print }
  ' "$work/control.orig" >"$pkg/DEBIAN/control"
  mkdir -p "$out_dir"
  SOURCE_DATE_EPOCH="$SOURCE_EPOCH" \
    dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >&2
  printf '%s\n' "$key" >"$stamp"
  rm -rf "$work"
  log "$(basename "$deb") ready"
  echo "$deb"
}

# Fails unless the built binary is for the package's architecture, needs the same libraries as Debian's own
# binary of the same version (so the package's Depends still hold), finds them in trixie and needs no newer
# glibc than trixie's; for amd64 it also runs it with the sysroot's loader and libraries.
check_binary() {
  local arch="$1" triplet="$2" built="$3" debians="$4" sysroot="$5" glibc="$6"
  local machine
  case "$arch" in arm64) machine=AArch64 ;; amd64) machine='Advanced Micro Devices X86-64' ;; esac
  readelf -h "$built" | grep -q "Machine: *$machine" || die "$built is not for $arch: $(file -b "$built")"
  local needed theirs
  needed="$(readelf -d "$built" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
  theirs="$(readelf -d "$debians" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
  [ "$needed" = "$theirs" ] || die "the $arch build needs '$needed', Debian's binary '$theirs': its Depends would not hold (see configure's summary in $log_dir/configure.log)"
  local lib
  for lib in $needed; do
    [ -e "$sysroot/usr/lib/$triplet/$lib" ] || die "the $arch build needs $lib, which trixie's packages of its Depends do not have"
  done
  local newest
  newest="$(readelf -V "$built" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
  dpkg --compare-versions "$newest" le "$glibc" || die "the $arch build needs GLIBC_$newest, newer than trixie's glibc $glibc"
  # Run it with trixie's loader and libraries: directly for amd64, under qemu's user-mode emulation for
  # arm64 where qemu-aarch64 is installed (it is not a build dependency: the checks above do not need it).
  local run=() v ran="not run (no qemu-aarch64 or qemu-aarch64-static on PATH)"
  if [ "$arch" = amd64 ]; then
    run=("$sysroot/usr/lib64/ld-linux-x86-64.so.2" --library-path "$sysroot/usr/lib/$triplet" "$built")
  elif command -v qemu-aarch64-static >/dev/null || command -v qemu-aarch64 >/dev/null; then
    run=("$(command -v qemu-aarch64-static || command -v qemu-aarch64)" -L "$sysroot" "$built")
  fi
  if [ "${#run[@]}" -gt 0 ]; then
    v="$("${run[@]}" --version 2>&1 | head -1)"
    [ "$v" = "PgBouncer $UPSTREAM_VERSION" ] || die "the $arch build run with trixie's libraries reports '$v', not PgBouncer $UPSTREAM_VERSION"
    ran="ran with trixie's libraries: $v"
  fi
  log "$arch binary: $machine, needs $needed(glibc <= $newest; trixie has $glibc); $ran"
}

if [ -n "$deb_arch" ]; then
  build_deb "$deb_arch"
else
  build_rehearsal
fi
