#!/usr/bin/env bash
# Skiff versus the anchors in one run: builds `bench` (release), then for every configuration starts a fresh server
# process per target (skiff; skiff-grpc, Skiff's gRPC endpoint driven by the grpc-swift-2 client; grpc; raw, raw-el: the raw server driven by the async or the event-loop client), drives it with `bench load` (the same closed loop for all, one
# connection), stops it, and prints a markdown table with the ratios Skiff/gRPC and Skiff/raw.
#
#   ./run.sh          1 run per configuration: 1 s warm-up + 5 s measured (about 2 minutes after the build)
#   ./run.sh --long   3 runs per configuration: 2 s warm-up + 10 s measured, medians (as in the anchors)
#
# Configurations: unary UnaryCall (250 B response) at 1, 16 and 64 in flight; server streaming
# StreamingOutputCall (100 × 250 B) at 16 in flight; 1,000 idle Skiff connections (server RSS only).
# Server RSS is VmHWM of the server process (/proc/PID/status) read after each run; --long prints the median.
# Per-run JSON lines and server logs are kept under .build/bench-results/.
#   ./run.sh --scale  the data-scale benchmark instead (services on 10k–1M rows): see scale.sh
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${1:-}" == "--scale" ]]; then
    shift
    exec ./scale.sh "$@"
fi

runs=1
duration=5
warmup=1
if [[ "${1:-}" == "--long" ]]; then
    runs=3
    duration=10
    warmup=2
fi

swift build -c release --product bench >&2
bin="$(swift build -c release --show-bin-path)/bench"
out=".build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
results="$out/results.jsonl"
: > "$results"
ulimit -n 65536 2>/dev/null || true

server_pid=""
server_port=""

start_server() { # target name
    local log="$out/server-$2.log"
    "$bin" serve --target "$1" --port 0 > "$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do
        if grep -q '^listening' "$log" 2>/dev/null; then
            server_port="$(sed -n 's/^listening .*port=\([0-9]*\).*/\1/p' "$log" | head -1)"
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server $1 did not start; see $log" >&2
    cat "$log" >&2
    exit 1
}

stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null || true' EXIT

configs=("unary 1" "unary 16" "unary 64" "stream 16")
for config in "${configs[@]}"; do
    read -r mode concurrency <<< "$config"
    for target in skiff skiff-grpc grpc raw raw-el; do
        name="$mode-$concurrency-$target"
        start_server "$target" "$name"
        for run in $(seq 1 "$runs"); do
            echo "== $name run $run/$runs (port $server_port, pid $server_pid)" >&2
            timeout 180 "$bin" load --target "$target" --port "$server_port" --mode "$mode" \
                --concurrency "$concurrency" --duration "$duration" --warmup "$warmup" \
                --server-pid "$server_pid" --label "$mode-$concurrency" \
                | tee -a "$results" >&2
        done
        stop_server
    done
done

echo "== 1000 idle skiff connections" >&2
start_server skiff idle-skiff
timeout 180 "$bin" idle --port "$server_port" --connections 1000 --hold 2 --server-pid "$server_pid" \
    | tee -a "$results" >&2 || echo "idle run failed" >&2
stop_server

python3 - "$results" "$runs" "$duration" "$warmup" <<'PY'
import json, statistics, sys
path, runs, duration, warmup = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = [json.loads(line) for line in open(path) if line.strip().startswith("{")]
def median(label, target, key):
    values = [r[key] for r in rows if r.get("label") == label and r.get("target") == target and r.get(key) is not None]
    return statistics.median(values) if values else None
def fmt(v, key):
    if v is None: return "–"
    if key.endswith("_mb") or key.endswith("_us"): return f"{v:.1f}"
    return f"{v:.0f}"
def ratio(a, b):
    if a is None or b is None or b == 0: return "–"
    return f"{a / b:.2f}×"
print(f"Median of {runs} run(s) per cell, {warmup} s warm-up + {duration} s measured, 1 connection, closed loop, "
      "client and server on the same machine.")
print()
print("| configuration | metric | Skiff | Skiff gRPC | gRPC | raw | raw-el | Skiff/gRPC | Skiff gRPC/gRPC | Skiff/raw | Skiff/raw-el |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
names = {"calls_per_s": "calls/s", "msgs_per_s": "msgs/s", "p50_us": "p50 µs", "p99_us": "p99 µs",
         "server_rss_mb": "server RSS MB", "errors": "errors"}
for label, title in [("unary-1", "unary, 1 in flight"), ("unary-16", "unary, 16 in flight"),
                     ("unary-64", "unary, 64 in flight"), ("stream-16", "stream 100×250 B, 16 in flight")]:
    keys = ["calls_per_s", "p50_us", "p99_us", "server_rss_mb", "errors"]
    if label.startswith("stream"):
        keys = ["msgs_per_s"] + keys
    for key in keys:
        s, sg, g, r, e = (median(label, t, key) for t in ("skiff", "skiff-grpc", "grpc", "raw", "raw-el"))
        ratios = ("", "", "", "") if key == "errors" else (ratio(s, g), ratio(sg, g), ratio(s, r), ratio(s, e))
        print(f"| {title} | {names[key]} | {fmt(s, key)} | {fmt(sg, key)} | {fmt(g, key)} | {fmt(r, key)} | {fmt(e, key)} "
              f"| {ratios[0]} | {ratios[1]} | {ratios[2]} | {ratios[3]} |")
idle = [r for r in rows if r.get("label") == "idle"]
if idle:
    i = idle[-1]
    print(f"| {i['connections']} idle Skiff connections | server RSS MB (VmHWM) | {fmt(i.get('server_rss_mb'), '_mb')} "
          f"| – | – | – | – | – | – | – | – |")
PY
echo "results: $results" >&2
