#!/usr/bin/env bash
# Prometheus from Debian (package `prometheus`, 2.42 in bookworm): the `prometheus` server that `./meridian cluster
# start` runs as one of the cluster's daemons (deploy/bin/meridian-cluster), and `promtool`, which checks what that
# start renders and runs the alert rules' unit tests (deploy/prometheus/tests/) under `./meridian test`.
#
# Only the two binaries are used. The package also ships a service (/etc/init.d/prometheus, prometheus.service) that
# its postinst starts at once: `invoke-rc.d prometheus start` without systemd (as in a container: a daemon as user
# prometheus on *:9090 with /etc/prometheus/prometheus.yml), `deb-systemd-invoke start` with it. That service would
# take port 9090, the cluster's Prometheus's, and scrape nothing of ours. So during the install a policy-rc.d denies
# that one service (both helpers ask /usr/sbin/policy-rc.d first; a host's own policy-rc.d, such as Docker's
# deny-everything one, is left as it is), and afterwards the service is disabled, so that a reboot does not start it.
# Idempotent; does nothing when both commands are there.
set -euo pipefail

command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "deploy/install/40-prometheus.sh: prometheus/promtool missing; install them as root: apt-get install -y --no-install-recommends prometheus (then stop and disable its service: the cluster runs its own Prometheus on 9090)" >&2
  exit 2
fi

POLICY=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$POLICY" ]; then
  # policy-rc.d's arguments: the service (init script id or systemd unit), the actions; 101 = action forbidden
  printf '%s\n' '#!/bin/sh' '# written by Meridian deploy/install/40-prometheus.sh for the time of one install' \
    'case "$1" in prometheus|prometheus.service) exit 101 ;; esac' 'exit 0' >"$POLICY"
  chmod 755 "$POLICY"
  own_policy=1
fi
cleanup() { [ $own_policy = 0 ] || rm -f "$POLICY"; }
trap cleanup EXIT

echo "deploy/install/40-prometheus.sh: installing prometheus (its packaged service is kept stopped)" >&2
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600 -y -qq)
"${APT[@]}" update
"${APT[@]}" install --no-install-recommends prometheus >/dev/null

# never start the packaged service at boot either
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
if command -v update-rc.d >/dev/null 2>&1 && [ -x /etc/init.d/prometheus ]; then
  update-rc.d prometheus disable >/dev/null 2>&1 || true
fi
# a service that started anyway (a host policy that allowed it): stop it, through its own init script
if [ -f /run/prometheus/prometheus.pid ] && kill -0 "$(cat /run/prometheus/prometheus.pid)" 2>/dev/null; then
  /etc/init.d/prometheus stop >/dev/null 2>&1 || true
fi

command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 \
  || { echo "deploy/install/40-prometheus.sh: prometheus or promtool still missing after apt-get install" >&2; exit 1; }
echo "deploy/install/40-prometheus.sh: $(prometheus --version 2>&1 | head -n 1)" >&2
