#!/usr/bin/env bash
# The data-scale benchmark (issue 10): how the services behave as the data grows.
#
# For each backend, one release `skiff-server` (on a scratch SQLite file, or in memory) is seeded through the
# public RPCs by `skiff-load marketplace` up to each size in turn (100 users; listings), and at each size the
# marketplace mix runs at 1 call in flight (1 connection) and at 64 in flight (4 connections). Reported per size:
# the seeding rate of the step, the mix's calls/s, p50 and p99, each RPC's p50/p99 (SearchListings, GetListing,
# CreateListing, PlaceBid, SendMessage, …) and the server's RSS. Then `skiff-load campus` seeds as many
# activities and lost-and-found items (and up-votes) and runs the BucketList/LostFound mix the same two ways
# (nearby, trending, votes, lost-and-found search, reports, matches). On SQLite, the server is then restarted
# on the largest file and the time from exec to the first answered search is reported.
#
#   Benchmarks/scale.sh                                   # 10k and 100k listings, SQLite and memory, 15 s runs
#   Benchmarks/scale.sh --sizes 10000,100000,1000000      # the issue's full ladder (1M seeds for ~10 minutes)
#   Benchmarks/scale.sh --backends sqlite --duration 30
#   Benchmarks/scale.sh --mixes campus --votes-per-activity 10   # only the BucketList/LostFound mix
#   Benchmarks/scale.sh --hash-rounds 600000               # passwords hashed as in production (see below)
#
# Scratch data goes to $SKIFF_SCRATCH (default: a temporary directory), removed at the end; results (JSON per
# run, server logs, the markdown table) to Benchmarks/.build/scale-results/<time>/. The load generator shares
# the machine's cores with the server, as in the issue's "before" table. Run by hand; nothing here runs in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="10000,100000"
backends="sqlite,memory"
duration=15
warmup=3
users=100
# The mix signs up and logs in (2 %), each hashing a password: at the default 600,000 PBKDF2 rounds (~80 ms
# of CPU each) that alone caps the mix near 600 operations/s on 2 cores, whatever the storage does. To measure
# the storage, the server hashes with 1,000 rounds unless --hash-rounds says otherwise.
hash_rounds=1000
# The campus mix (BucketList and LostFound) seeds, per listing size N, N activities, N lost-and-found items
# and votes × N up-votes (the issue's proportion is 10 votes per activity; 2 keeps a 100k run near 10
# minutes, as votes are seeded through the RPCs).
mixes="marketplace,campus"
votes=2
# Lost-and-found items per 100 listings (the issue's proportion is 100): each report scores up to 500
# candidates inside the one writer, so 100k items seed for a quarter of an hour on SQLite.
items_percent=100
while [[ $# -gt 0 ]]; do
    case "$1" in
        --mixes) mixes="$2"; shift 2 ;;
        --votes-per-activity) votes="$2"; shift 2 ;;
        --items-percent) items_percent="$2"; shift 2 ;;
        --sizes) sizes="$2"; shift 2 ;;
        --backends) backends="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --warmup) warmup="$2"; shift 2 ;;
        --users) users="$2"; shift 2 ;;
        --hash-rounds) hash_rounds="$2"; shift 2 ;;
        *) echo "usage: $0 [--sizes N,N,…] [--backends sqlite,memory] [--mixes marketplace,campus] [--votes-per-activity n] [--items-percent n] [--duration s] [--warmup s] [--users n] [--hash-rounds n]" >&2; exit 64 ;;
    esac
done

swift build -c release --scratch-path .build-release --product skiff-server >&2
swift build -c release --scratch-path .build-release --product skiff-load >&2
swift build -c release --scratch-path .build-release --product skiff >&2
bin=".build-release/release"
out="Benchmarks/.build/scale-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
scratch="$(mktemp -d "${SKIFF_SCRATCH:-${TMPDIR:-/tmp}}/skiff-scale.XXXXXX")"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || true

port=""
start_server() { # storage log
    : > "$2"
    "$bin/skiff-server" --port 0 --storage "$1" --rate-limit-scale 0 --password-hash-rounds "$hash_rounds" \
        --log-level debug 2> "$2" &
    server_pid=$!
    for _ in $(seq 1 600); do
        port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\) tls.*/\1/p' "$2" | head -1)"
        [[ -n "$port" ]] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "skiff-server did not start; see $2" >&2
    exit 1
}

stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

rss_mb() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$server_pid/status"; }

IFS=, read -r -a size_list <<< "$sizes"
IFS=, read -r -a backend_list <<< "$backends"
for backend in "${backend_list[@]}"; do
    storage="memory"
    [[ "$backend" == "sqlite" ]] && storage="sqlite:$scratch/skiff.sqlite"
    log="$out/server-$backend.log"
    start_server "$storage" "$log"
    state="$scratch/state-$backend.json"
    for n in "${size_list[@]}"; do
        echo "== $backend: seeding to $n listings (port $port)" >&2
        "$bin/skiff-load" marketplace --target "127.0.0.1:$port" --seed-users "$users" --seed-listings "$n" \
            --state "$state" --mail-log "$log" --seed-concurrency 64 --concurrency 1 --max-calls 1 \
            --duration 1 --warmup 0 2> "$out/seed-$backend-$n.log" > /dev/null
        seeded="$(grep -o 'seeded [0-9]* listings in [0-9.]* s ([0-9]* listings/s' "$out/seed-$backend-$n.log" | tail -1 || true)"
        echo "$seeded" >&2
        echo "{\"backend\":\"$backend\",\"size\":$n,\"seeding\":\"$seeded\",\"rss_mb\":$(rss_mb)}" >> "$out/steps.jsonl"
        if [[ ",$mixes," == *",marketplace,"* ]]; then
            for config in "1 1" "64 4"; do
                read -r concurrency connections <<< "$config"
                echo "== $backend $n: mix at $concurrency in flight" >&2
                "$bin/skiff-load" marketplace --target "127.0.0.1:$port" --seed-users "$users" --seed-listings "$n" \
                    --state "$state" --concurrency "$concurrency" --connections "$connections" \
                    --duration "$duration" --warmup "$warmup" --quiet --allow-errors \
                    --json "$out/mix-$backend-$n-$concurrency.json" > "$out/mix-$backend-$n-$concurrency.txt" 2>&1
            done
        fi
        if [[ ",$mixes," == *",campus,"* ]]; then
            items=$((n * items_percent / 100))
            echo "== $backend: seeding campus data to $n activities, $items items, $((n * votes)) votes" >&2
            campus_start=$(date +%s%N)
            "$bin/skiff-load" campus --target "127.0.0.1:$port" --seed-users "$users" --seed-activities "$n" \
                --seed-items "$items" --seed-votes "$((n * votes))" --state "$state" --mail-log "$log" \
                --seed-concurrency 64 --concurrency 1 --max-calls 1 --duration 1 --warmup 0 \
                2> "$out/seed-campus-$backend-$n.log" > /dev/null
            campus_s=$(( ($(date +%s%N) - campus_start) / 1000000 ))
            echo "{\"backend\":\"$backend\",\"size\":$n,\"campus_seed_ms\":$campus_s}" >> "$out/steps.jsonl"
            for config in "1 1" "64 4"; do
                read -r concurrency connections <<< "$config"
                echo "== $backend $n: campus mix at $concurrency in flight" >&2
                "$bin/skiff-load" campus --target "127.0.0.1:$port" --seed-users "$users" --seed-activities "$n" \
                    --seed-items "$items" --seed-votes "$((n * votes))" --state "$state" \
                    --concurrency "$concurrency" --connections "$connections" \
                    --duration "$duration" --warmup "$warmup" --quiet --allow-errors \
                    --json "$out/campus-$backend-$n-$concurrency.json" > "$out/campus-$backend-$n-$concurrency.txt" 2>&1
            done
        fi
        echo "{\"backend\":\"$backend\",\"size\":$n,\"after_rss_mb\":$(rss_mb)}" >> "$out/steps.jsonl"
    done
    stop_server
    if [[ "$backend" == "sqlite" ]]; then
        # Restart on the largest file: exec → first answered search.
        start_ns=$(date +%s%N)
        : > "$out/restart.log"
        "$bin/skiff-server" --port 0 --storage "$storage" --rate-limit-scale 0 2> "$out/restart.log" &
        server_pid=$!
        for _ in $(seq 1 2000); do
            port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\) tls.*/\1/p' "$out/restart.log" | head -1)"
            if [[ -n "$port" ]] && "$bin/skiff" call "127.0.0.1:$port" skiff.listings.v1.Listings/SearchListings \
                '{"query":"jacket"}' > /dev/null 2>&1; then
                break
            fi
            sleep 0.01
        done
        end_ns=$(date +%s%N)
        echo "{\"backend\":\"sqlite\",\"restart_to_serving_s\":$(( (end_ns - start_ns) / 1000000 ))e-3}" >> "$out/steps.jsonl"
        stop_server
    fi
done

python3 - "$out" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
steps = [json.loads(l) for l in open(os.path.join(out, "steps.jsonl")) if l.strip()]
print("| backend | listings | seeding | in flight | mix calls/s | mix p50 | mix p99 | SearchListings p50 / p99 | GetListing p50 / p99 | CreateListing p50 / p99 | PlaceBid p50 / p99 | SendMessage p50 / p99 | errors | server RSS MB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
def ms(us): return f"{us / 1000:.2f} ms" if us < 1_000_000 else f"{us / 1e6:.2f} s"
def pair(lat, name):
    l = (lat or {}).get("rpc " + name)
    return f"{ms(l['p50'])} / {ms(l['p99'])}" if l else "–"
for path in sorted(glob.glob(os.path.join(out, "mix-*.json")), key=lambda p: (p.split("-")[-3], int(p.split("-")[-2]), int(p.split("-")[-1][:-5]))):
    _, backend, size, inflight = os.path.basename(path)[:-5].split("-")
    r = json.load(open(path))
    seed = next((s.get("seeding", "") for s in steps if s.get("backend") == backend and s.get("size") == int(size) and "seeding" in s), "")
    m = re.search(r"\((\d+) listings/s", seed or "")
    rss = next((s.get("after_rss_mb") for s in steps if s.get("backend") == backend and s.get("size") == int(size) and "after_rss_mb" in s), None)
    lat, sl = r["latency"], r.get("scenarioLatencies")
    errors = sum(r.get("errors", {}).values())
    print(f"| {backend} | {int(size):,} | {m.group(1) + '/s' if m else '–'} | {inflight} | {r['throughput']:.0f} | {ms(lat['p50'])} | {ms(lat['p99'])} "
          f"| {pair(sl, 'SearchListings')} | {pair(sl, 'GetListing')} | {pair(sl, 'CreateListing')} | {pair(sl, 'PlaceBid')} "
          f"| {pair(sl, 'SendMessage')} | {errors} | {rss if rss is not None else '–'} |")
campus = sorted(glob.glob(os.path.join(out, "campus-*.json")), key=lambda p: (p.split("-")[-3], int(p.split("-")[-2]), int(p.split("-")[-1][:-5])))
if campus:
    print("\nCampus mix (BucketList and LostFound):\n")
    print("| backend | size | campus seeding | in flight | mix calls/s | mix p50 | mix p99 | FindNearbyActivities p50 / p99 | ListTrendingActivities p50 / p99 | VoteActivity p50 / p99 | SearchItems p50 / p99 | ReportItem p50 / p99 | ListMatches p50 / p99 | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for path in campus:
    _, backend, size, inflight = os.path.basename(path)[:-5].split("-")
    r = json.load(open(path))
    seed = next((s["campus_seed_ms"] for s in steps if s.get("backend") == backend and s.get("size") == int(size) and "campus_seed_ms" in s), None)
    lat, sl = r["latency"], r.get("scenarioLatencies")
    errors = sum(r.get("errors", {}).values())
    print(f"| {backend} | {int(size):,} | {f'{seed / 1000:.0f} s' if seed is not None else '–'} | {inflight} | {r['throughput']:.0f} | {ms(lat['p50'])} | {ms(lat['p99'])} "
          f"| {pair(sl, 'FindNearbyActivities')} | {pair(sl, 'ListTrendingActivities')} | {pair(sl, 'VoteActivity')} "
          f"| {pair(sl, 'SearchItems')} | {pair(sl, 'ReportItem')} | {pair(sl, 'ListMatches')} | {errors} |")
for s in steps:
    if "restart_to_serving_s" in s:
        print(f"\nRestart to serving on the largest SQLite file: {s['restart_to_serving_s']:.2f} s (exec → first answered SearchListings).")
PY
echo "results: $out" >&2
