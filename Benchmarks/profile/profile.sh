#!/usr/bin/env bash
# Per-call costs of one side of the Skiff (or raw) hot path, counted exactly with perf uprobes, plus a
# perf call-graph sample of where the CPU time goes (see ../PROFILE.md).
#
#   profile/profile.sh server unary 1 [calls]     counts the server process, client native
#   profile/profile.sh client stream 16 [calls]   counts the client process, server native
#
# Counted per call: malloc (+ calloc, realloc, posix_memalign), swift_allocObject, swift_retain, task
# creations, task switches, enqueues onto the global concurrent executor, continuation resumes, syscalls,
# context switches, and CPU time (task-clock: noisy on a shared machine, unlike the counts).
# Server side: perf stat attaches to the running server for exactly the measured calls (after 200 warm-up
# calls). Client side: the client runs with N and 2N calls and the difference is divided by N, which removes
# start-up and connection set-up. Set RECORD=1 for a `perf record -g` of the same side (report in
# .build/profile/<label>/...). Needs the probes: profile/probes.sh add (root).
set -euo pipefail
cd "$(dirname "$0")/.."
side="$1" mode="$2" concurrency="$3" calls="${4:-}"
if [[ -z "$calls" ]]; then
    if [[ "$mode" == "stream" ]]; then calls=1000; else calls=20000; fi
fi
bin="${BENCH_BIN:-$(swift build -c release --show-bin-path)/bench}"
target="${TARGET:-skiff}"
out=".build/profile/${LABEL:-now}/$target-$side-$mode-$concurrency"
mkdir -p "$out"
events="probe_libc:malloc,probe_libc:calloc,probe_libc:realloc,probe_libc:posix_memalign"
events+=",probe_libswiftCore:swift_allocObject,probe_libswiftCore:swift_retain"
events+=",probe_libswift_Concurrency:swift_task_create,probe_libswift_Concurrency:swift_task_switch"
events+=",probe_libswift_Concurrency:swift_task_enqueueGlobal"
events+=",probe_libswift_Concurrency:swift_continuation_resume,probe_libswift_Concurrency:swift_continuation_throwingResume"
events+=",raw_syscalls:sys_enter,context-switches"
# CPU time is measured in a second run without the probes (each probe hit is a trap).
clean="task-clock,context-switches"

port_of() { sed -n 's/^listening .*port=\([0-9]*\).*/\1/p' "$1" | head -1; }
start_server() { # log
    "$bin" serve --target "$target" --port 0 > "$1" 2>&1 &
    spid=$!
    trap 'kill -KILL $spid 2>/dev/null || true' EXIT
    for _ in $(seq 1 300); do
        grep -q '^listening' "$1" 2>/dev/null && { port="$(port_of "$1")"; return 0; }
        sleep 0.1
    done
    echo "server did not start" >&2
    exit 1
}
load() { # calls
    "$bin" load --target "$target" --port "$port" --mode "$mode" --concurrency "$concurrency" --calls "$1"
}
# perf stat -x, lines: value,unit,event,...
summarise() { # stat-file divisor [stat-file-to-subtract]
    python3 - "$@" <<'PY'
import sys
def read(path):
    values = {}
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) < 3 or not parts[0] or parts[0].startswith("<"):
            continue
        try:
            values[parts[2]] = float(parts[0])
        except ValueError:
            pass
    return values
a = read(sys.argv[1])
n = float(sys.argv[2])
b = read(sys.argv[3]) if len(sys.argv) > 3 else {}
def per(key):
    return (a.get(key, 0) - b.get(key, 0)) / n
allocs = sum(per(k) for k in ["probe_libc:malloc", "probe_libc:calloc", "probe_libc:realloc", "probe_libc:posix_memalign"])
if "probe_libc:malloc" in a:
    print(f"allocations (malloc+calloc+realloc+posix_memalign)/call {allocs:.2f}")
for key in sorted(a):
    name = key.split(":")[-1]
    value = per(key)
    if key in ("probe_libc:calloc", "probe_libc:realloc", "probe_libc:posix_memalign") and value < 0.005:
        continue
    if key == "task-clock":
        print(f"cpu_us/call {value * 1000:.2f}")
    else:
        print(f"{name}/call {value:.2f}")
PY
}

if [[ "$side" == "server" ]]; then
    start_server "$out/server.log"
    load 200 > /dev/null
    perf stat -x, -e "$events" -p "$spid" -o "$out/stat.txt" &
    ppid=$!
    sleep 0.5
    load "$calls" > "$out/load.json"
    kill -INT "$ppid"
    wait "$ppid" || true
    perf stat -x, -e "$clean" -p "$spid" -o "$out/clean.txt" &
    ppid=$!
    sleep 0.5
    load "$calls" > /dev/null
    kill -INT "$ppid"
    wait "$ppid" || true
    if [[ "${RECORD:-0}" == 1 ]]; then
        perf record -g -o "$out/perf.data" -p "$spid" 2> /dev/null &
        rpid=$!
        sleep 0.5
        load "$calls" > /dev/null
        kill -INT "$rpid"
        wait "$rpid" || true
    fi
    echo "== $target server, $mode, $concurrency in flight: $calls calls"
    summarise "$out/stat.txt" "$calls"
    summarise "$out/clean.txt" "$calls" | grep cpu_us
else
    start_server "$out/server.log"
    load 200 > /dev/null
    for n in "$calls" "$((calls * 2))"; do
        perf stat -x, -e "$events" -o "$out/stat.$n.txt" -- \
            "$bin" load --target "$target" --port "$port" --mode "$mode" --concurrency "$concurrency" --calls "$n" \
            > "$out/load.$n.json"
        perf stat -x, -e "$clean" -o "$out/clean.$n.txt" -- \
            "$bin" load --target "$target" --port "$port" --mode "$mode" --concurrency "$concurrency" --calls "$n" \
            > /dev/null
    done
    if [[ "${RECORD:-0}" == 1 ]]; then
        perf record -g -o "$out/perf.data" -- "$bin" load --target "$target" --port "$port" --mode "$mode" \
            --concurrency "$concurrency" --calls "$((calls * 2))" > /dev/null 2>&1
    fi
    echo "== $target client, $mode, $concurrency in flight: ($((calls * 2)) calls) - ($calls calls)"
    summarise "$out/stat.$((calls * 2)).txt" "$calls" "$out/stat.$calls.txt"
    summarise "$out/clean.$((calls * 2)).txt" "$calls" "$out/clean.$calls.txt" | grep cpu_us
fi
kill -TERM "$spid" 2> /dev/null || true
