# shellcheck shell=bash
# `scripts/bench translate`: a restore planned onto a replica cluster with --translate timestamp
# (the record after the last consumed one, found by its timestamp and fingerprint), at 2,000,
# 6,000 and 20,000 partitions of one group: wall time and peak RSS under /usr/bin/time -v, the
# requests the target's brokers received, and each translated offset against the exact position
# known from the seeding, checked against the bound stated on `at_time` in
# src/mirror/translate.rs (the mode fails when one is outside it).
#
# Sourced by scripts/bench, whose helpers it uses (measure, begin_mode, end_mode, shown_command,
# snapshot_id, port_open, say, die, and $ov_bin, $seed_bin, $work, $results_dir, $csv).
#
# Two clusters of the mode's own, each started by scripts/test-env in the scratch directory (port
# offsets OV_BENCH_TR_SOURCE_PORT_OFFSET=1000 and OV_BENCH_TR_TARGET_PORT_OFFSET=1100, heap
# OV_BENCH_TR_KAFKA_HEAP=1g), plus, with OV_BENCH_TR_NODES=2 (the default), a second broker in each
# (broker only, node 2, on port 19092 + offset + 50): a broker holds one open file per partition,
# and this machine's limit of 20,000 open files per process does not leave room for 20,000
# partitions on one. All are stopped at the end.
#
# The replica is made by `bench_seed replica` (examples/bench_seed.rs): the same topics on both
# clusters, the records of the source copied with their timestamps, keys and values, its offsets
# shifted per partition (it began later, had records of its own first, or lost a record); one
# group commits an offset on every partition of the source. Then, per size: a snapshot of the
# group on the source (--with-timestamps), and
#   restore ID --allow-other-cluster --replication-policy identity --translate timestamp
# on the target (a dry run), OV_BENCH_TR_RUNS=3 times. Requests: one more run, not timed, with the
# target brokers' request log (kafka.request.logger at DEBUG) on; its lines of the PLAINTEXT
# listener are counted by API.
#
#   OV_BENCH_TR_PARTITIONS="2000 6000 20000" (each size adds topics of 100 partitions to the last)
#   OV_BENCH_TR_RECORDS=12 (records per source partition)

tr_port() { echo $((19092 + $1)); }

# Starts the cluster $1 (src or tgt) at port offset $2: scripts/test-env's broker, then node 2.
tr_cluster_up() {
  local name="$1" offset="$2" port node2_port dir id
  port="$(tr_port "$offset")"
  node2_port=$((port + 50))
  dir="$work/tr-$name"
  port_open "$port" && die "translate: port $port is taken: set OV_BENCH_TR_${name^^}_PORT_OFFSET to a free offset"
  env OV_PORT_OFFSET="$offset" OV_TEST_ENV_DIR="$dir" OV_KAFKA_HEAP="$tr_heap" \
    scripts/test-env start kafka >"$work/tr-$name-broker.log" 2>&1 \
    || { cat "$work/tr-$name-broker.log" >&2; die "translate: the $name cluster's broker did not start"; }
  tr_started+=("$name:$offset")
  say "translate: $name cluster on 127.0.0.1:$port (heap $tr_heap, scratch $dir)"
  ((tr_nodes > 1)) || return 0
  port_open "$node2_port" && die "translate: port $node2_port (node 2 of $name) is taken"
  id="$(awk -F= '$1 == "cluster.id" { print $2 }' "$dir/kafka-data/meta.properties")"
  mkdir -p "$dir/node2-data"
  # The cluster's settings as scripts/test-env rendered them for node 1 (the brokers of a cluster
  # must agree on some, e.g. offsets.topic.num.partitions), with node 2's role, id, listener and
  # data directory.
  {
    grep -vE '^(process\.roles|node\.id|listeners|advertised\.listeners|listener\.|inter\.broker\.listener\.name|log\.dirs|controller\.)' \
      "$dir/conf/server.properties"
    cat <<PROPS
process.roles=broker
node.id=2
controller.quorum.bootstrap.servers=127.0.0.1:$((19093 + offset))
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$node2_port
advertised.listeners=PLAINTEXT://127.0.0.1:$node2_port
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/node2-data
PROPS
  } >"$dir/node2.properties"
  java -Xmx256m -cp "$OV_KAFKA_LIBS/*" -Dlog4j2.configurationFile="$OV_FIXTURES_DIR/log4j2-tools.properties" \
    kafka.tools.StorageTool format --config "$dir/node2.properties" --cluster-id "$id" \
    >"$dir/node2-format.log" 2>&1 || { cat "$dir/node2-format.log" >&2; die "translate: formatting node 2 of $name failed"; }
  setsid java "-Xms$tr_heap" "-Xmx$tr_heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$OV_FIXTURES_DIR/log4j2-service.properties" -Dov.log.file="$dir/node2.log" \
    -cp "$OV_KAFKA_LIBS/*" kafka.Kafka "$dir/node2.properties" </dev/null >"$dir/node2.out" 2>&1 &
  tr_node2_pids+=("$!")
  local i
  for i in $(seq 120); do
    grep -q 'Kafka Server started' "$dir/node2.log" 2>/dev/null && port_open "$node2_port" && break
    kill -0 "${tr_node2_pids[-1]}" 2>/dev/null || { tail -n 30 "$dir/node2.log" "$dir/node2.out" >&2; die "translate: node 2 of $name exited"; }
    sleep 1
  done
  port_open "$node2_port" || die "translate: node 2 of $name did not start within 120 s"
  say "translate: $name cluster's node 2 on 127.0.0.1:$node2_port (pid ${tr_node2_pids[-1]})"
}

# Stops what tr_cluster_up started: the node 2 processes (by their pids), then the brokers
# scripts/test-env started in the scratch directories.
tr_clusters_down() {
  local pid entry
  for pid in "${tr_node2_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${tr_node2_pids[@]}"; do
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  tr_node2_pids=()
  for entry in "${tr_started[@]}"; do
    env OV_PORT_OFFSET="${entry#*:}" OV_TEST_ENV_DIR="$work/tr-${entry%%:*}" \
      scripts/test-env stop kafka >>"$work/tr-${entry%%:*}-broker.log" 2>&1 || true
  done
  tr_started=()
}

# The target brokers' request log: kafka.request.logger at level $1 on every node.
tr_request_log() {
  local node
  for node in $(seq "$tr_nodes"); do
    "$repo_dir/scripts/kafka-configs" --bootstrap-server "$tr_target" --entity-type broker-loggers \
      --entity-name "$node" --alter --add-config "kafka.request.logger=$1" >>"$work/tr-configs.log" 2>&1 \
      || { tail -n 5 "$work/tr-configs.log" >&2; die "translate: could not set kafka.request.logger=$1 on node $node"; }
  done
}

tr_target_logs() {
  echo "$work/tr-tgt/logs/kafka.log"
  ((tr_nodes > 1)) && echo "$work/tr-tgt/node2.log"
  return 0
}

# Requests of the PLAINTEXT listener in the target brokers' logs since the sizes in $1 (a file of
# "LOG SIZE" lines): "API=COUNT ..." and the total.
tr_count_requests() {
  local f size
  while read -r f size; do
    tail -c +"$((size + 1))" "$f"
  done <"$1" | grep -a 'Completed request:' | grep -a '"listener":"PLAINTEXT"' \
    | grep -ao '"requestApiKeyName":"[A-Z_]*"' | cut -d'"' -f4 | sort | uniq -c \
    | awk '{ n += $1; s = s (s ? " " : "") $2 "=" $1 } END { printf "%d %s\n", n, s }'
}

tr_log_sizes() {
  local f
  for f in $(tr_target_logs); do echo "$f $(stat -c %s "$f")"; done
}

# The translated offsets of the plan in $work/out against the exact positions of truth file $1;
# prints one CSV line: translated,exact,inexact,refused,max_error,mean_error,bound_exceeded,
# and the partitions outside the bound to standard error.
tr_check() {
  python3 - "$1" "$work/out" <<'PY'
import csv, json, sys
truth = {(r["topic"], int(r["partition"])): r for r in csv.DictReader(open(sys.argv[1]))}
try:
    doc = json.load(open(sys.argv[2]))
except ValueError:
    doc = {}
plan = doc.get("plan", doc)
errors, refused, outside, exact = [], 0, [], 0
seen = 0
if "groups" not in plan:
    print(f"no plan: {str(doc.get('error', doc))[:300]}", file=sys.stderr)
for g in plan.get("groups", []):
    for p in g["partitions"]:
        key = (p["topic"], p["partition"])
        if key not in truth:
            continue
        seen += 1
        t = truth[key]
        method = (p.get("translation") or {}).get("method")
        if p.get("target") is None or method != "timestamp":
            refused += 1
            outside.append(f"{key}: no target by timestamp ({method}): {p.get('note')}")
            continue
        # The bound of at_time: never past the exact position; exact unless an identical record
        # precedes the last consumed one, then at most n - 1 before it (n records at its time).
        e = int(t["exact"]) - p["target"]
        n, identical = int(t["same_time"]), int(t["identical_before"])
        bound = 0 if identical == 0 else n - 1
        if e < 0 or e > bound:
            outside.append(f"{key}: translated {p['target']}, exact {t['exact']}, error {e}, bound {bound}")
        errors.append(e)
        exact += e == 0
missing = len(truth) - seen
if missing:
    outside.append(f"{missing} partitions of the seeding are not in the plan")
for line in outside[:20]:
    print(line, file=sys.stderr)
mean = sum(errors) / len(errors) if errors else 0
print(f"{len(errors)},{exact},{len(errors) - exact},{refused},{max(errors, default=0)},{mean:.4f},{len(outside)}")
PY
}

run_translate() {
  tr_sizes="${OV_BENCH_TR_PARTITIONS:-2000 6000 20000}"
  tr_heap="${OV_BENCH_TR_KAFKA_HEAP:-1g}"
  tr_nodes="${OV_BENCH_TR_NODES:-2}"
  local records="${OV_BENCH_TR_RECORDS:-12}" tr_runs="${OV_BENCH_TR_RUNS:-3}"
  local src_offset="${OV_BENCH_TR_SOURCE_PORT_OFFSET:-1000}" tgt_offset="${OV_BENCH_TR_TARGET_PORT_OFFSET:-1100}"
  local prefix="ovbench-$stamp-tr" store="$work/tr-store" size prev=0 id i line requests base
  local checks="$results_dir/translate-checks.csv" failed=0
  tr_started=()
  tr_node2_pids=()
  # The groups are on brokers of the mode's own: begin_mode and end_mode leave other brokers alone.
  own_broker_offset="$tgt_offset"
  own_broker_heap="$tr_heap"
  tr_source="127.0.0.1:$(tr_port "$src_offset")"
  tr_target="127.0.0.1:$(tr_port "$tgt_offset")"
  direct="$tr_target"
  trap 'tr_rc=$?; tr_clusters_down; (exit $tr_rc); cleanup_all' EXIT
  : >"$work/notes"
  tr_cluster_up src "$src_offset"
  tr_cluster_up tgt "$tgt_offset"
  begin_mode translate
  if [[ -z "${OV_BENCH_APPEND:-}" || ! -f "$checks" ]]; then
    echo "partitions,translated,exact,inexact,refused,max_error,mean_error,outside_bound,requests,requests_by_api" >"$checks"
  fi
  base=$((($(date +%s) - 3600) * 1000))
  for size in $tr_sizes; do
    say "translate: seeding $size partitions (source and replica)"
    printf '%s\n' "$(shown_command env OV_BOOTSTRAP="$tr_source" "$seed_bin" replica --prefix "$prefix" --partitions "$size" \
      --first-partition "$prev" --records "$records" --base-ms "$base" --target "$tr_target" --truth "$work/truth-$size.csv")" >>"$work/seed-commands"
    OV_BOOTSTRAP="$tr_source" "$seed_bin" replica --prefix "$prefix" --partitions "$size" --first-partition "$prev" \
      --records "$records" --base-ms "$base" --target "$tr_target" --truth "$work/truth-$size.csv" >/dev/null \
      || die "translate: seeding $size partitions failed"
    prev="$size"
    "$ov_bin" -q -b "$tr_source" --store "$store" --output json snapshot --group "$prefix-n$size" --with-timestamps \
      >"$work/out" 2>>"$work/stderr.log" || { tail -n 5 "$work/stderr.log" >&2; die "translate: snapshot of $size partitions failed"; }
    id="$(snapshot_id)"
    # (shown_command would shorten the --group argument)
    printf '%s\n' "$(shown_command "$ov_bin" -q -b "$tr_source" --store "$store" --output json snapshot) --group $prefix-n$size --with-timestamps" >>"$work/seed-commands"
    local restore=("$ov_bin" -q -b "$tr_target" --store "$store" --output json restore "$id"
      --allow-other-cluster --replication-policy identity --translate timestamp)
    for ((i = 0; i < tr_runs; i++)); do
      measure offset-vault "restore --translate timestamp (dry run)" 0 1 "$size" -- "${restore[@]}"
    done
    line="$(tr_check "$work/truth-$size.csv")"
    # The requests: one more run, with the target brokers' request log on.
    tr_request_log DEBUG
    tr_log_sizes >"$work/log-sizes"
    # (its exit code is the plan's, checked above)
    "${restore[@]}" >/dev/null 2>>"$work/stderr.log" || true
    sleep 1
    requests="$(tr_count_requests "$work/log-sizes")"
    tr_request_log WARN
    echo "$size,$line,${requests%% *},${requests#* }" >>"$checks"
    say "translate: $size partitions: translated,exact,inexact,refused,max,mean,outside = $line; requests ${requests%% *} (${requests#* })"
    [[ "$(echo "$line" | cut -d, -f7)" == 0 ]] || failed=1
    rm -rf "$store"
  done
  {
    echo "- clusters: source $tr_source, target $tr_target, each $tr_nodes node(s) (node 2 on port + 50, broker only), heap $tr_heap per node"
    echo "- seeding (examples/bench_seed.rs \`replica\`): topics of 100 partitions on both clusters, $records records per source partition (1, 2 or 3 records per timestamp; every fifth partition writes each record twice in a row); the replica began later (first 1 to 4 records not copied), or had 1 to 5 records of its own first, or lost the record two before the last consumed one, by partition; one group P-nSIZE commits offset $((records / 2)) to $((records / 2 + 3)) per partition on the source"
    echo "- requests: the target brokers' request log (kafka.request.logger at DEBUG) during one more, untimed run, lines of the PLAINTEXT listener counted by API; results in benches/results/translate-checks.csv"
    echo "- seeding and snapshot (not timed):"
    echo
    echo '```'
    cat "$work/seed-commands"
    echo '```'
  } >>"$work/notes"
  end_mode "$(cat "$work/notes")"
  ((failed == 0)) || die "translate: translated offsets outside the stated bound (see above and $checks)"
}
