#!/usr/bin/env bash
# What `./meridian cluster` and deploy/bin/storm need from the system: Java 17+ (Kafka 4 brokers require it), Maven
# (assembles the runtime from Maven Central on first start), and util-linux / coreutils tools (setsid, flock,
# timeout, sha256sum, base64; all in a base Debian), and for the two-host testbed iproute2, nsenter and unshare. ZooKeeper's srvr check uses bash's /dev/tcp, so no netcat.
# Idempotent; does nothing when everything is there.
set -euo pipefail

missing=()
java_ok() {
  command -v java >/dev/null 2>&1 || return 1
  local major
  major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
  [ -n "$major" ] && [ "$major" -ge 17 ]
}
java_ok && command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
# ip (iproute2), nsenter and unshare (util-linux): the two-host testbed (./meridian testbed)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
for tool in setsid flock nsenter unshare; do command -v "$tool" >/dev/null 2>&1 || { missing+=(util-linux); break; }; done
for tool in timeout sha256sum base64; do command -v "$tool" >/dev/null 2>&1 || { missing+=(coreutils); break; }; done

[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deploy/install/30-cluster.sh: missing packages ${missing[*]}; install them as root: apt-get install -y ${missing[*]}" >&2
  exit 2
fi
echo "deploy/install/30-cluster.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
