#!/usr/bin/env bash
# Open MPI from Debian (openmpi-bin, libopenmpi-dev) plus its Java bindings jar, which Debian does not ship: the jar is
# compiled from the bindings' Java sources of the SAME Debian source package as the installed libmpi_java.so and put
# into the local Maven repository as the third-party artifact org.open-mpi:mpi-java:<upstream version>, which
# transport-mmap depends on. Idempotent; when everything is in place it only checks and exits (well under a second).
#
# Used by ./meridian test and ./meridian build (via deploy/install/[0-9]*.sh) and on cluster hosts (deploy/MPI.md).
# Needs: root (apt-get), a JDK 17 (javac, jar) and Maven.
set -euo pipefail

MULTIARCH="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
LIBDIR="/usr/lib/$MULTIARCH"
M2_REPO="${MERIDIAN_M2_REPO:-$HOME/.m2/repository}"
GROUP_PATH="org/open-mpi/mpi-java"
# Which Debian package version the jar in ~/.m2 was built from; compared with the installed libopenmpi3.
STAMP_NAME="mpi-java.debian-version"

log() { echo "10-openmpi-java: $*" >&2; }
die() { echo "10-openmpi-java: $*" >&2; exit 1; }

installed_debian_version() { dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null || true; }
upstream_of() { local v="${1#*:}"; echo "${v%%-*}"; }   # 4.1.4-3+b1 -> 4.1.4

# ---- fast path: all installed and the jar matches the installed library -------------------------------------------
deb_version="$(installed_debian_version)"
if [ -n "$deb_version" ] && command -v mpirun >/dev/null && [ -e "$LIBDIR/libmpi_java.so" ]; then
  upstream="$(upstream_of "$deb_version")"
  jar="$M2_REPO/$GROUP_PATH/$upstream/mpi-java-$upstream.jar"
  if [ -f "$jar" ] && [ "$(cat "$M2_REPO/$GROUP_PATH/$upstream/$STAMP_NAME" 2>/dev/null)" = "$deb_version" ]; then
    exit 0
  fi
fi

[ "$(id -u)" = 0 ] || die "needs root for apt-get (run as root, or install openmpi-bin libopenmpi-dev yourself)"
command -v javac >/dev/null && command -v jar >/dev/null || die "needs a JDK 17 (javac, jar): apt-get install -y openjdk-17-jdk-headless"
command -v mvn >/dev/null || die "needs Maven: apt-get install -y maven"

APT=(apt-get -o DPkg::Lock::Timeout=600 -y -q)
export DEBIAN_FRONTEND=noninteractive

# ---- 1. binary packages --------------------------------------------------------------------------------------------
if ! dpkg-query -W -f='${Status}' openmpi-bin libopenmpi-dev 2>/dev/null | grep -q "install ok installed.*install ok installed" \
   || [ ! -e "$LIBDIR/libmpi_java.so" ] || ! command -v xz >/dev/null; then
  log "installing openmpi-bin libopenmpi-dev (and xz-utils for the source tarball)"
  "${APT[@]}" update >/dev/null
  "${APT[@]}" install --no-install-recommends openmpi-bin libopenmpi-dev xz-utils >/dev/null
fi
deb_version="$(installed_debian_version)"
[ -n "$deb_version" ] || die "libopenmpi3 is not installed after apt-get install"
[ -e "$LIBDIR/libmpi_java.so" ] || die "$LIBDIR/libmpi_java.so missing: this libopenmpi3 ($deb_version) was built without Java bindings"
upstream="$(upstream_of "$deb_version")"
source_version="$(dpkg-query -W -f='${source:Version}' libopenmpi3)"

# ---- 2. the matching source package (deb-src enabled once) ---------------------------------------------------------
enable_deb_src() {
  local changed=0 f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    if grep -q '^Types: deb$' "$f"; then sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"; changed=1; fi
  done
  if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list && ! grep -q '^deb-src ' /etc/apt/sources.list; then
    sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >/etc/apt/sources.list.d/meridian-deb-src.list
    changed=1
  fi
  return $((1 - changed))
}

work="$(mktemp -d /tmp/meridian-openmpi-src.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"
fetch_source() { "${APT[@]}" source --download-only "openmpi=$source_version" >/dev/null 2>"$work/apt-source.err"; }
if ! fetch_source; then
  log "enabling deb-src and updating the package lists"
  enable_deb_src || true
  "${APT[@]}" update >/dev/null
  fetch_source || { cat "$work/apt-source.err" >&2; die "apt-get source openmpi=$source_version failed"; }
fi
orig="$(ls openmpi_"$upstream".orig.tar.* 2>/dev/null | head -n 1)"
[ -n "$orig" ] || die "no openmpi_$upstream.orig tarball among: $(ls)"

# ---- 3. compile the bindings' Java sources into mpi.jar ------------------------------------------------------------
log "building mpi.jar $upstream from $orig (Debian $deb_version)"
tar -xf "$orig" --wildcards "openmpi-$upstream/ompi/mpi/java/java/*.java"
mkdir classes
javac -nowarn -encoding UTF-8 --release 17 -d classes "openmpi-$upstream"/ompi/mpi/java/java/*.java 2>"$work/javac.err" \
  || { cat "$work/javac.err" >&2; die "javac of the Open MPI Java bindings failed"; }
jar cf mpi.jar -C classes .

# ---- 4. install it where Maven finds it (third-party artifact, not one of ours) -------------------------------------
mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-install-plugin:3.1.3:install-file -Dfile="$work/mpi.jar" \
  -DgroupId=org.open-mpi -DartifactId=mpi-java -Dversion="$upstream" -Dpackaging=jar -DgeneratePom=true \
  -DlocalRepositoryPath="$M2_REPO" >"$work/mvn.log" 2>&1 || { cat "$work/mvn.log" >&2; die "mvn install:install-file failed"; }
echo "$deb_version" >"$M2_REPO/$GROUP_PATH/$upstream/$STAMP_NAME"
log "installed org.open-mpi:mpi-java:$upstream into $M2_REPO"
