#!/usr/bin/env bash
# Does this host's kernel keep one session's threads off the CPU while another session keeps every core busy and
# wakes often? The reason for MERIDIAN_SUPERVISOR_AUTOGROUP_NICE (deploy/conf/cluster.conf, README "The cluster").
#
# In its own session each time (its own autogroup when kernel.sched_autogroup_enabled=1), a load of B busy threads
# (B = the number of cores) plus S threads that sleep 1 ms (or 4 ms) at a time, at the autogroup nice given; in another session
# a probe that sleeps 10 ms at a time and records how late it wakes. Prints the probe's worst lateness per case and
# one JSON line. On this project's 2-core machine (kernel 6.18): busy alone 3-4 ms; busy + 5 sleepers 2-11 s; the
# same sleeping 4 ms at a time: 10 ms (how often they wake is what counts: 10 sleeping 2 ms, 3.5 s; 40 sleeping 10 ms,
# 0.6 s); at autogroup nice 10: 2 ms (nice 5 with 20 sleepers: 1.7 s; nice 10 with 40: 3 ms).
# usage: perf/sched/autogroup-starvation.sh [SECONDS per case, default 10]
set -euo pipefail
secs="${1:-10}"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "autogroup-starvation: SECONDS is '$secs'; it must be a whole number of seconds > 0" >&2; exit 2; }
command -v gcc >/dev/null || { echo "autogroup-starvation: gcc is missing" >&2; exit 2; }
command -v setsid >/dev/null || { echo "autogroup-starvation: setsid (util-linux) is missing" >&2; exit 2; }
dir="$(mktemp -d)"
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$dir"' EXIT

cat >"$dir/probe.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  double seconds = atof(argv[1]), start = now(), worst = 0;
  struct timespec tenMs = {0, 10000000};
  while (now() - start < seconds) {
    double before = now();
    nanosleep(&tenMs, 0);
    double late = now() - before - 0.01;
    if (late > worst) worst = late;
  }
  printf("%.0f\n", worst * 1e3);
  return 0;
}
C
cat >"$dir/load.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static void *busy(void *unused) { while (!stop) {} return 0; }
static struct timespec nap;
static void *sleeper(void *unused) { while (!stop) nanosleep(&nap, 0); return 0; }
int main(int argc, char **argv) {
  int seconds = atoi(argv[1]), busyThreads = atoi(argv[2]), sleepers = atoi(argv[3]);
  nap.tv_nsec = atol(argv[4]) * 1000000L;
  pthread_t t;
  for (int i = 0; i < busyThreads; i++) pthread_create(&t, 0, busy, 0);
  for (int i = 0; i < sleepers; i++) pthread_create(&t, 0, sleeper, 0);
  sleep(seconds);
  stop = 1;
  return 0;
}
C
gcc -O2 -o "$dir/probe" "$dir/probe.c"
gcc -O2 -pthread -o "$dir/load" "$dir/load.c"

cores="$(nproc)"
autogroups="$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo absent)"
echo "autogroup starvation: $cores cores, kernel $(uname -r), kernel.sched_autogroup_enabled = $autogroups; $secs s per case"
json="{\"benchmark\":\"autogroup-starvation\",\"cores\":$cores,\"autogroups\":\"$autogroups\",\"cases\":["
sep=""
for spec in "0 0 1" "0 5 1" "0 5 4" "10 5 1" "0 20 1" "10 20 1"; do
  read -r nice sleepers napMs <<<"$spec"
  setsid "$dir/load" $((secs + 2)) "$cores" "$sleepers" "$napMs" &
  sleep 0.3
  pid="$(pgrep -n -f "$dir/load")"
  [ "$nice" = 0 ] || [ ! -w "/proc/$pid/autogroup" ] || echo "$nice" >"/proc/$pid/autogroup"
  worst="$(setsid "$dir/probe" "$secs")"
  wait
  echo "  $cores busy + $sleepers threads sleeping $napMs ms at a time, load's autogroup at nice $nice: probe woke up to $worst ms late"
  json+="$sep{\"sleepers\":$sleepers,\"sleep_ms\":$napMs,\"nice\":$nice,\"worst_late_ms\":$worst}"
  sep=","
done
echo "$json]}"
