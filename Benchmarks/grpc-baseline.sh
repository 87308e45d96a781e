#!/usr/bin/env bash
# The grpc-swift-2 baseline's configuration A/B (issue 13): flush coalescing (grpc-swift-nio-transport ≥ 2.8 delays
# every flush by up to 100 µs by default, on both the client and the server transport) on or off, for grpc-swift-2's
# server and Skiff's gRPC endpoint, each driven by the grpc-swift-2 client, and by the C++ gRPC client when
# cpp/ is built (run.sh builds it). Rounds alternate the variants so that the machine's drift hits all of them.
#
#   ./grpc-baseline.sh [rounds=2] [seconds=3]
# Prints one JSON line per run (server_flush_coalescing added) and a markdown table of medians.
set -euo pipefail
cd "$(dirname "$0")"
rounds="${1:-2}"
duration="${2:-3}"
swift build -c release --product bench >&2
bin="$(swift build -c release --show-bin-path)/bench"
cpp=".build/cpp/bench-cpp-client"
out=".build/bench-results/grpc-baseline-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
results="$out/results.jsonl"
: > "$results"
server_pid=""
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null || true' EXIT

start_server() { # target flush-coalescing
    local log="$out/server.log"
    "$bin" serve --target "$1" --port 0 --flush-coalescing "$2" > "$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        grep -q '^listening' "$log" 2>/dev/null && break
        sleep 0.1
    done
    server_port="$(sed -n 's/^listening .*port=\([0-9]*\).*/\1/p' "$log" | head -1)"
}
stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# server target, server coalescing (grpc only), client: library/off (grpc-swift-2 client) or cpp
variants=("grpc library library" "grpc library off" "grpc off off" "skiff-grpc - library" "skiff-grpc - off")
if [[ -x "$cpp" ]]; then
    variants+=("grpc library cpp" "grpc off cpp" "skiff-grpc - cpp")
fi
for round in $(seq 1 "$rounds"); do
    for variant in "${variants[@]}"; do
        read -r target server_fc client <<< "$variant"
        start_server "$target" "${server_fc/-/off}"
        for concurrency in 1 64; do
            echo "== round $round: $target server=$server_fc client=$client, $concurrency in flight" >&2
            if [[ "$client" == "cpp" ]]; then
                line="$("$cpp" --target "$target" --port "$server_port" --concurrency "$concurrency" \
                    --duration "$duration" --warmup 1 --server-pid "$server_pid" --label "unary-$concurrency")"
            else
                line="$("$bin" load --target "$target" --port "$server_port" --concurrency "$concurrency" \
                    --duration "$duration" --warmup 1 --server-pid "$server_pid" --label "unary-$concurrency" \
                    --flush-coalescing "$client")"
            fi
            python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["server_flush_coalescing"] = sys.argv[2]; r["client"] = sys.argv[3]; print(json.dumps(r, sort_keys=True))' \
                "$line" "$server_fc" "$client" | tee -a "$results" >&2
        done
        stop_server
    done
done

python3 - "$results" "$rounds" "$duration" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"Median of {sys.argv[2]} round(s), 1 s warm-up + {sys.argv[3]} s measured, unary 250 B, 1 connection.")
print()
print("| server | server flush coalescing | client (flush coalescing) | in flight | calls/s | p50 µs | p99 µs |")
print("|---|---|---|---|---|---|---|")
seen = []
for r in rows:
    key = (r["target"], r["server_flush_coalescing"], r["client"], r["concurrency"])
    if key not in seen: seen.append(key)
for key in sorted(seen, key=lambda k: (k[3], seen.index(k))):
    rs = [r for r in rows if (r["target"], r["server_flush_coalescing"], r["client"], r["concurrency"]) == key]
    med = lambda f: statistics.median(r[f] for r in rs)
    server = "grpc-swift-2" if key[0] == "grpc" else "Skiff gRPC"
    client = "C++ gRPC" if key[2] == "cpp" else f"grpc-swift-2 ({key[2]})"
    fc = "–" if key[1] == "-" else key[1]
    print(f"| {server} | {fc} | {client} | {key[3]} | {med('calls_per_s'):.0f} | {med('p50_us'):.1f} | {med('p99_us'):.1f} |")
PY
