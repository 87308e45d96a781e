#!/usr/bin/env bash
# Skiff versus the anchors in one run: builds `bench` (release) and, when Debian's libgrpc++-dev is installed
# (`pkg-config --exists grpc++`), the C++ gRPC anchor (cpp/), then for every configuration starts a fresh server
# process per target, drives it with one client process (the same closed loop for all), stops it, and prints a
# markdown table with ratios.
#
# Targets (server ← client):
#   skiff           Skiff's server, skiff/1 ← Skiff's generated client (one connection); at 1 in flight the
#                   calling task runs on the connection's event loop (ClientConnection.taskExecutor: no
#                   thread hop per call), elsewhere on the global executor (the client then uses both
#                   cores), the better of the two for each (RESULTS.md)
#   skiff-grpc      Skiff's server, gRPC over HTTP/2 alone (HTTP2Protocol) ← the grpc-swift-2 client
#   skiff-grpc-cpp  the same Skiff gRPC server ← the C++ gRPC client (cpp/client.cc)
#   skiff-connect   Skiff's server, HTTP/1.1 alone (HTTP1Protocol) ← Connect unary (application/proto) from a
#                   NIOHTTP1 client: N keep-alive connections for N in flight (HTTP/1.1 does not multiplex);
#                   unary configurations only
#   grpc            grpc-swift-2's server ← the grpc-swift-2 client
#                   grpc-swift-nio-transport's flush coalescing (100 µs) is off on both at 1 in flight and the
#                   library default elsewhere, the better of the two for each (grpc-baseline.sh; RESULTS.md);
#                   skiff-grpc's client gets the same setting
#   grpc-by-cpp     the same grpc-swift-2 server ← the C++ gRPC client
#   grpc-cpp        C++ gRPC (grpc++ async server, one completion-queue thread) ← the C++ gRPC client
#   skiff-c         Skiff's server, skiff/1 ← libskiff's load driver (Clients/c, skiff-load-c: one channel,
#                   one thread keeping the calls in flight), built by run.sh when make, cc and protobuf-c
#                   are installed; its JSON adds the client's CPU per call, as bench load's does
#   raw, raw-el     the raw SwiftNIO server ← the async or the event-loop raw client
# All clients use one connection except skiff-connect's.
#
#   ./run.sh          1 run per configuration: 1 s warm-up + 5 s measured (about 5 minutes after the build)
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
cpp_dir="$PWD/.build/cpp"
cpp=""
if pkg-config --exists grpc++ protobuf && command -v protoc > /dev/null && command -v grpc_cpp_plugin > /dev/null; then
    make -C cpp BUILD="$cpp_dir" >&2
    cpp="$cpp_dir"
else
    echo "C++ gRPC anchor skipped: needs libgrpc++-dev and protobuf-compiler-grpc (pkg-config grpc++, grpc_cpp_plugin)" >&2
fi
c_client=""
if make -s -C ../Clients/c build/skiff-load-c >&2; then
    c_client="$PWD/../Clients/c/build/skiff-load-c"
else
    echo "skiff-c skipped: building Clients/c's skiff-load-c needs cc, make and libprotobuf-c-dev" >&2
fi
out=".build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
results="$out/results.jsonl"
: > "$results"
ulimit -n 65536 2>/dev/null || true

server_pid=""
server_port=""

start_server() { # server name [grpc-swift-2 flush coalescing]
    local log="$out/server-$2.log"
    if [[ "$1" == "grpc-cpp" ]]; then
        "$cpp/bench-cpp-server" --port 0 > "$log" 2>&1 &
    else
        "$bin" serve --target "$1" --port 0 --flush-coalescing "${3:-library}" > "$log" 2>&1 &
    fi
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

targets=(skiff skiff-grpc skiff-connect grpc raw raw-el)
if [[ -n "$cpp" ]]; then
    targets=(skiff skiff-grpc skiff-grpc-cpp skiff-connect grpc grpc-by-cpp grpc-cpp raw raw-el)
fi
if [[ -n "$c_client" ]]; then targets+=(skiff-c); fi
# BENCH_TARGETS="skiff skiff-c" ./run.sh measures only those targets.
if [[ -n "${BENCH_TARGETS:-}" ]]; then read -r -a targets <<< "$BENCH_TARGETS"; fi
configs=("unary 1" "unary 16" "unary 64" "stream 16")
for config in "${configs[@]}"; do
    read -r mode concurrency <<< "$config"
    coalescing=library
    executor=pool
    [[ "$mode" == "unary" && "$concurrency" == "1" ]] && coalescing=off executor=loop
    for target in "${targets[@]}"; do
        [[ "$target" == "skiff-connect" && "$mode" != "unary" ]] && continue
        # The server each target runs, and whether its client is the C++ one.
        case "$target" in
            skiff-grpc-cpp) server=skiff-grpc client=cpp ;;
            grpc-by-cpp) server=grpc client=cpp ;;
            grpc-cpp) server=grpc-cpp client=cpp ;;
            skiff-c) server=skiff client=c ;;
            *) server="$target" client=bench ;;
        esac
        name="$mode-$concurrency-$target"
        start_server "$server" "$name" "$coalescing"
        for run in $(seq 1 "$runs"); do
            echo "== $name run $run/$runs (port $server_port, pid $server_pid)" >&2
            if [[ "$client" == "c" ]]; then
                timeout 180 "$c_client" --target "$target" --port "$server_port" --mode "$mode" \
                    --concurrency "$concurrency" --duration "$duration" --warmup "$warmup" \
                    --server-pid "$server_pid" --label "$mode-$concurrency" \
                    | tee -a "$results" >&2
            elif [[ "$client" == "cpp" ]]; then
                timeout 180 "$cpp/bench-cpp-client" --target "$target" --port "$server_port" --mode "$mode" \
                    --concurrency "$concurrency" --duration "$duration" --warmup "$warmup" \
                    --server-pid "$server_pid" --label "$mode-$concurrency" \
                    | tee -a "$results" >&2
            else
                timeout 180 "$bin" load --target "$target" --port "$server_port" --mode "$mode" \
                    --concurrency "$concurrency" --duration "$duration" --warmup "$warmup" \
                    --server-pid "$server_pid" --label "$mode-$concurrency" --flush-coalescing "$coalescing" \
                    --client-executor "$executor" \
                    | tee -a "$results" >&2
            fi
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
    if key.endswith("_mb") or key.endswith("_us") or key.endswith("_per_call"): return f"{v:.1f}"
    return f"{v:.0f}"
def ratio(a, b):
    if a is None or b is None or b == 0: return "–"
    return f"{a / b:.2f}×"
targets = [("skiff", "Skiff"), ("skiff-grpc", "Skiff gRPC"), ("skiff-grpc-cpp", "Skiff gRPC ← C++"),
           ("skiff-connect", "Skiff Connect h1"), ("grpc", "gRPC"), ("grpc-by-cpp", "gRPC ← C++"),
           ("grpc-cpp", "C++ gRPC"), ("raw", "raw"), ("raw-el", "raw-el"), ("skiff-c", "Skiff ← C")]
ratios = [("skiff-grpc", "grpc", "Skiff gRPC/gRPC"), ("skiff-grpc-cpp", "grpc-by-cpp", "Skiff gRPC/gRPC (C++ client)"),
          ("skiff", "grpc-cpp", "Skiff/C++ gRPC"), ("skiff-grpc-cpp", "grpc-cpp", "Skiff gRPC/C++ gRPC (C++ client)"),
          ("skiff", "raw-el", "Skiff/raw-el"), ("skiff-c", "skiff", "Skiff ← C/Skiff")]
print(f"Median of {runs} run(s) per cell, {warmup} s warm-up + {duration} s measured, closed loop, client and server "
      "on the same machine; 1 connection (Skiff Connect h1: one HTTP/1.1 connection per call in flight). "
      "`X ← C++`: server X driven by the C++ gRPC client.")
print()
print("| configuration | metric | " + " | ".join(t for _, t in targets) + " | " + " | ".join(r for _, _, r in ratios) + " |")
print("|---|---|" + "---|" * (len(targets) + len(ratios)))
names = {"calls_per_s": "calls/s", "msgs_per_s": "msgs/s", "p50_us": "p50 µs", "p99_us": "p99 µs",
         "server_rss_mb": "server RSS MB", "errors": "errors", "client_cpu_us_per_call": "client CPU µs/call"}
for label, title in [("unary-1", "unary, 1 in flight"), ("unary-16", "unary, 16 in flight"),
                     ("unary-64", "unary, 64 in flight"), ("stream-16", "stream 100×250 B, 16 in flight")]:
    keys = ["calls_per_s", "p50_us", "p99_us", "client_cpu_us_per_call", "server_rss_mb", "errors"]
    if label.startswith("stream"):
        keys = ["msgs_per_s"] + keys
    for key in keys:
        values = {t: median(label, t, key) for t, _ in targets}
        cells = [fmt(values[t], key) for t, _ in targets]
        rs = ["" if key == "errors" else ratio(values[a], values[b]) for a, b, _ in ratios]
        print(f"| {title} | {names[key]} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
idle = [r for r in rows if r.get("label") == "idle"]
if idle:
    i = idle[-1]
    print(f"| {i['connections']} idle Skiff connections | server RSS MB (VmHWM) | {fmt(i.get('server_rss_mb'), '_mb')} "
          + "| – " * (len(targets) - 1 + len(ratios)) + "|")
PY
echo "results: $results" >&2
