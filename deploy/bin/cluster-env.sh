# Shared by deploy/bin/meridian-cluster and deploy/bin/storm (sourced, not run): settings, paths, the runtime assembly.
# Callers set MERIDIAN_PROG (for messages) before sourcing.

MERIDIAN_HOME="${MERIDIAN_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export MERIDIAN_HOME

die() { echo "$MERIDIAN_PROG: $*" >&2; exit 2; }
fail() { echo "$MERIDIAN_PROG: $*" >&2; exit 1; }

load_settings() {
  if [ -n "${MERIDIAN_CLUSTER_CONF:-}" ]; then
    [ -r "$MERIDIAN_CLUSTER_CONF" ] || die "MERIDIAN_CLUSTER_CONF names $MERIDIAN_CLUSTER_CONF, which is not a readable file"
    # the environment wins over the file: keep what is set now and put it back after
    local saved
    saved="$(declare -p $(compgen -v MERIDIAN_) 2>/dev/null || true)"
    # shellcheck disable=SC1090
    . "$MERIDIAN_CLUSTER_CONF" || die "cannot read $MERIDIAN_CLUSTER_CONF"
    eval "$saved"
  fi
  # shellcheck source=../conf/cluster.conf
  . "$MERIDIAN_HOME/deploy/conf/cluster.conf"
  CLUSTER_DIR="$MERIDIAN_CLUSTER_DIR"
  RUNTIME="$CLUSTER_DIR/runtime"
  STORM_HOME="$RUNTIME/storm-home"
  CONF_DIR="$CLUSTER_DIR/conf"
  DATA_DIR="$CLUSTER_DIR/data"
  LOG_DIR="$CLUSTER_DIR/logs"
  RUN_DIR="$CLUSTER_DIR/run"
  STORM_LOCAL_DIR="$DATA_DIR/storm"
  NIMBUS_SEED="${MERIDIAN_NIMBUS_SEEDS%%,*}"
}

require_java() {
  command -v java >/dev/null 2>&1 || die "java is not installed (Java 17 or newer is needed; apt-get install -y openjdk-17-jdk-headless)"
  local version major
  version="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)"
  major="${version%%.*}"
  [[ "$major" =~ ^[0-9]+$ ]] && [ "$major" -ge 17 ] \
    || die "java is version '${version:-unknown}'; Kafka 4 and Meridian need Java 17 or newer"
}

# The versions and sources the runtime is built from: a change in any of them means a rebuild.
runtime_key() {
  {
    grep -E '<(storm|kafka|metrics|log4j|slf4j|zookeeper)\.version>' "$MERIDIAN_HOME/pom.xml"
    (cd "$MERIDIAN_HOME/deploy/runtime" && find . -path '*/target' -prune -o -type f \( -name pom.xml -o -path '*/src/*' \) -print \
      | LC_ALL=C sort | xargs cat)
  } | sha256sum | cut -d' ' -f1
}

runtime_ready() {
  [ -f "$RUNTIME/.key" ] && [ "$(cat "$RUNTIME/.key")" = "$(runtime_key)" ]
}

# Assemble STORM_HOME, ZooKeeper, Kafka and the probe with Maven (first use, or after a version change).
ensure_runtime() {
  runtime_ready && return 0
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not installed; it assembles the cluster runtime (apt-get install -y maven)"
  local next="$CLUSTER_DIR/runtime.next" log="$CLUSTER_DIR/runtime-build.log" started=$SECONDS
  mkdir -p "$CLUSTER_DIR"
  rm -rf "$next"
  echo "$MERIDIAN_PROG: assembling the cluster runtime (Storm, ZooKeeper, Kafka) from Maven Central into $RUNTIME ..." >&2
  if ! mvn -B -q -f "$MERIDIAN_HOME/deploy/runtime/pom.xml" package -Druntime.dir="$next" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "assembling the cluster runtime failed; full log in $log"
  fi
  mkdir -p "$next/storm-home/extlib" "$next/storm-home/extlib-daemon" "$next/storm-home/conf" "$next/storm-home/log4j2"
  runtime_key >"$next/.key"
  rm -rf "$RUNTIME"
  mv "$next" "$RUNTIME"
  echo "$MERIDIAN_PROG: runtime assembled in $((SECONDS - started)) s" >&2
}

# yaml_list "a,b,c" -> ["a", "b", "c"]
yaml_list() {
  local out="" item
  local -a items
  IFS=',' read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    item="${item// /}"
    [ -n "$item" ] || continue
    if [[ "$item" =~ ^[0-9]+$ ]]; then out+="${out:+, }$item"; else out+="${out:+, }\"$item\""; fi
  done
  echo "[$out]"
}

jvm_opens() {
  sed -n 's:.*<meridian.jvm.opens>\(.*\)</meridian.jvm.opens>.*:\1:p' "$MERIDIAN_HOME/pom.xml"
}

# render TEMPLATE OUT NAME=value...: replaces every @NAME@; refuses a template placeholder left without a value
render() {
  local template="$1" out="$2" text pair name left
  shift 2
  text="$(cat "$template")"
  for pair in "$@"; do
    name="${pair%%=*}"
    text="${text//@$name@/${pair#*=}}"
  done
  left="$(grep -o '@[A-Z_][A-Z0-9_]*@' <<<"$text" | head -n 1 || true)"
  [ -z "$left" ] || die "$template: no value for $left"
  printf '%s\n' "$text" >"$out.tmp"
  mv "$out.tmp" "$out"
}

# Write storm.yaml (into STORM_HOME/conf, where workers and the storm command read it) and the log4j2 files.
render_storm_conf() {
  # at least 4: ZooKeeper's sessions time out after it, and ZooKeeper refuses a maximum below its minimum (2 ticks of
  # 2 s)
  [[ "$MERIDIAN_HOST_TIMEOUT_SECS" =~ ^[1-9][0-9]{0,4}$ ]] && [ "$MERIDIAN_HOST_TIMEOUT_SECS" -ge 4 ] \
    || die "MERIDIAN_HOST_TIMEOUT_SECS is '$MERIDIAN_HOST_TIMEOUT_SECS'; give whole seconds, at least 4 (ZooKeeper's least session timeout; default 60)"
  mkdir -p "$STORM_HOME/conf" "$STORM_HOME/log4j2"
  render "$MERIDIAN_HOME/deploy/conf/storm.yaml.template" "$STORM_HOME/conf/storm.yaml" \
    "ZK_SERVERS_YAML=$(yaml_list "$MERIDIAN_ZK_SERVERS")" "ZK_PORT=$MERIDIAN_ZK_PORT" \
    "NIMBUS_SEEDS_YAML=$(yaml_list "$MERIDIAN_NIMBUS_SEEDS")" "NIMBUS_PORT=$MERIDIAN_NIMBUS_PORT" \
    "HOST=$MERIDIAN_HOST" "STORM_LOCAL_DIR=$STORM_LOCAL_DIR" "LOG_DIR=$LOG_DIR" \
    "SUPERVISOR_PORTS_YAML=$(yaml_list "$MERIDIAN_SUPERVISOR_PORTS")" "SUPERVISOR_THRIFT_PORT=$MERIDIAN_SUPERVISOR_THRIFT_PORT" \
    "SUPERVISOR_MEMORY_MB=$MERIDIAN_SUPERVISOR_MEMORY_MB" "WORKER_HEAP_MB=$MERIDIAN_WORKER_HEAP_MB" \
    "JVM_OPENS=$(jvm_opens)" "CLUSTER_DIR=$CLUSTER_DIR" \
    "HOST_TIMEOUT_SECS=$MERIDIAN_HOST_TIMEOUT_SECS" "HOST_TIMEOUT_MS=$((MERIDIAN_HOST_TIMEOUT_SECS * 1000))"
  cp "$MERIDIAN_HOME/deploy/conf/log4j2/cluster.xml" "$MERIDIAN_HOME/deploy/conf/log4j2/worker.xml" "$STORM_HOME/log4j2/"
}
