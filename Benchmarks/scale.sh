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
# PostgreSQL (issue 15): backend `postgres` runs the same steps against one release skiff-server on a
# throw-away PostgreSQL cluster (started here as dev/postgres-cluster.sh does, but with fsync,
# synchronous_commit and full_page_writes left ON, PostgreSQL's defaults, unless --pg-fsync off), and
# `postgres2` against two skiff-server processes on the same database, the load generator's connections
# split between them (`skiff-load --target a,b`); it seeds through the first server. Both use one database
# and one state file, so `postgres2` after `postgres` reuses the seeded data. For every mix run the script
# also records the machine's load average, the CPU used by the server(s), by PostgreSQL, by skiff-load and by
# other work on the machine, and on PostgreSQL the commits, rollbacks, write transactions (transaction ids
# assigned), WAL bytes and the costliest statements (pg_stat_statements, pg-statements-*.txt).
#
#   Benchmarks/scale.sh                                   # 10k and 100k listings, SQLite and memory, 15 s runs
#   Benchmarks/scale.sh --sizes 10000,100000,1000000      # the issue's full ladder (1M seeds for ~10 minutes)
#   Benchmarks/scale.sh --backends sqlite --duration 30
#   Benchmarks/scale.sh --mixes campus --votes-per-activity 10   # only the BucketList/LostFound mix
#   Benchmarks/scale.sh --hash-rounds 600000               # passwords hashed as in production (see below)
#   Benchmarks/scale.sh --sizes 100000 --backends sqlite,postgres,postgres2 --mixes marketplace   # issue 15
#
# skiff-load runs each closed-loop worker on one connection's event loop (`--worker-executor loop`, its default
# since 2026-11-28), so a call and its answer wake no other thread of the load generator, which shares the
# cores with the server.
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
# The servers log as in production (info), except the mail outbox, whose debug lines carry the verification
# tokens the seeding reads. Until 2026-11-28 every call was logged (`--log-level debug`): about 6 % of the
# server's CPU in the mix. `--log-level debug` brings that back.
log_level="info,skiff.mail=debug"
# PostgreSQL: the connection pool of each skiff-server (`?pool=N`), and durability as in production.
pg_pool=20
pg_fsync=on
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
        --log-level) log_level="$2"; shift 2 ;;
        --pg-pool) pg_pool="$2"; shift 2 ;;
        --pg-fsync) pg_fsync="$2"; shift 2 ;;
        *) echo "usage: $0 [--sizes N,N,…] [--backends sqlite,memory,postgres,postgres2] [--mixes marketplace,campus] [--votes-per-activity n] [--items-percent n] [--duration s] [--warmup s] [--users n] [--hash-rounds n] [--log-level level[,label=level…]] [--pg-pool n] [--pg-fsync on|off]" >&2; exit 64 ;;
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
server_pids=()
pg_folder=""
pg_bin=""
pg_port=""
run_as=()
cleanup() {
    for pid in "${server_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    if [[ -n "$pg_folder" ]]; then
        "${run_as[@]}" "$pg_bin/pg_ctl" -D "$pg_folder/data" -m immediate stop >/dev/null 2>&1 || true
        rm -rf "$pg_folder"
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || true

port=""
ports=()
start_server() { # storage log: starts one more server; its pid and port are appended to server_pids and ports
    : > "$2"
    "$bin/skiff-server" --port 0 --storage "$1" --rate-limit-scale 0 --password-hash-rounds "$hash_rounds" \
        --log-level "$log_level" 2> "$2" &
    server_pid=$!
    server_pids+=("$server_pid")
    for _ in $(seq 1 600); do
        port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\) tls.*/\1/p' "$2" | head -1)"
        if [[ -n "$port" ]]; then ports+=("$port"); return 0; fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "skiff-server did not start; see $2" >&2
    exit 1
}

stop_server() { # stops every server started
    for pid in "${server_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${server_pids[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    server_pid=""
    server_pids=()
    ports=()
}

# RSS of the servers, summed (one figure per server is in steps.jsonl).
rss_mb() {
    local total=0
    for pid in "${server_pids[@]}"; do
        total=$(awk -v t="$total" '/VmRSS/ { print t + $2 }' "/proc/$pid/status")
    done
    awk -v t="$total" 'BEGIN { printf "%.1f", t / 1024 }'
}

# CPU seconds (user + system) used so far by the given processes.
cpu_s() {
    local ticks=0 pid
    for pid in "$@"; do
        [[ -r "/proc/$pid/stat" ]] || continue
        ticks=$((ticks + $(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat")))
    done
    awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

# The PostgreSQL cluster's processes: the postmaster and its children.
pg_pids() {
    local main
    main=$(head -1 "$pg_folder/data/postmaster.pid")
    echo "$main" $(pgrep -P "$main")
}

load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# CPU seconds the whole machine has been busy (all cores; idle and I/O wait excluded). Minus what the
# server(s), PostgreSQL and skiff-load used, it is what other work on the machine took meanwhile: the
# load average alone misleads here, as every PostgreSQL backend with work counts in it.
machine_busy_s() {
    awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.2f", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}

# A throw-away PostgreSQL cluster, as dev/postgres-cluster.sh starts one (as the postgres user when run by
# root, trusted local connections, a free loopback port), but durable unless --pg-fsync off: fsync,
# synchronous_commit and full_page_writes keep PostgreSQL's defaults (on), as SQLite keeps synchronous=FULL.
start_postgres() {
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [[ -z $pg_bin || ! -x $pg_bin/initdb ]]; then
        echo "PostgreSQL's server is not installed (apt-get install postgresql)" >&2
        exit 1
    fi
    pg_folder=$(mktemp -d /tmp/skiff-scale-postgres-XXXXXX)
    chmod 755 "$pg_folder"
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres "$pg_folder"
        run_as=(runuser -u postgres --)
    fi
    "${run_as[@]}" "$pg_bin/initdb" -D "$pg_folder/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
        > "$pg_folder/initdb.log" 2>&1 || { cat "$pg_folder/initdb.log" >&2; exit 1; }
    pg_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # pg_stat_statements: where PostgreSQL's time goes, per statement, for each mix run.
    local durability="" stats="-c shared_preload_libraries=pg_stat_statements"
    [[ "$pg_fsync" == "off" ]] && durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    "${run_as[@]}" "$pg_bin/pg_ctl" -D "$pg_folder/data" -l "$pg_folder/server.log" -w -t 60 \
        -o "-h 127.0.0.1 -p $pg_port -k $pg_folder -c max_connections=300 -c shared_buffers=512MB $durability $stats" \
        start > /dev/null || { cat "$pg_folder/server.log" >&2; exit 1; }
    psql_at postgres -c "CREATE DATABASE skiff" > /dev/null
    psql_at skiff -c "CREATE EXTENSION pg_stat_statements" > /dev/null
    {
        echo "$("$pg_bin/postgres" --version)"
        psql_at skiff -c "SELECT name || '=' || setting FROM pg_settings WHERE name IN
            ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_connections',
             'default_transaction_isolation', 'wal_level') ORDER BY name"
    } > "$out/postgres-settings.txt"
    echo "== PostgreSQL at 127.0.0.1:$pg_port: $(tr '\n' ' ' < "$out/postgres-settings.txt")" >&2
}

psql_at() { # database, psql arguments…
    local db="$1"; shift
    "${run_as[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d "$db" -qAtX "$@"
}

# Counters of the benchmark database: commits, rollbacks, transaction ids assigned (write
# transactions; the query's own read-only transaction takes none), WAL bytes written, rows written.
pg_counters() {
    psql_at skiff -F ' ' -c "SELECT pg_stat_clear_snapshot()" -c "SELECT xact_commit, xact_rollback,
        pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
        pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
        tup_inserted + tup_updated + tup_deleted
        FROM pg_stat_database WHERE datname = 'skiff'" | tail -1
}

IFS=, read -r -a size_list <<< "$sizes"
IFS=, read -r -a backend_list <<< "$backends"
for backend in "${backend_list[@]}"; do
    storage="memory"
    servers=1
    state="$scratch/state-$backend.json"
    case "$backend" in
        memory) ;;
        sqlite) storage="sqlite:$scratch/skiff.sqlite" ;;
        postgres | postgres2)
            [[ -n "$pg_folder" ]] || start_postgres
            storage="postgres://postgres@127.0.0.1:$pg_port/skiff?pool=$pg_pool&sslmode=disable"
            [[ "$backend" == "postgres2" ]] && servers=2
            # One database and one state file for both: postgres2 after postgres reuses the seeded data.
            state="$scratch/state-postgres.json"
            ;;
        *) echo "unknown backend '$backend' (sqlite, memory, postgres, postgres2)" >&2; exit 64 ;;
    esac
    log="$out/server-$backend.log"
    start_server "$storage" "$log"
    for i in $(seq 2 "$servers"); do start_server "$storage" "$out/server-$backend-$i.log"; done
    port="${ports[0]}"
    targets=$(printf '127.0.0.1:%s,' "${ports[@]}")
    targets="${targets%,}"
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
                ((connections < servers)) && connections=$servers
                echo "== $backend $n: mix at $concurrency in flight over $targets (load $(load_average))" >&2
                load_before=$(load_average)
                busy=$(machine_busy_s)
                server_cpu=$(cpu_s "${server_pids[@]}")
                pg_cpu=0; pg_before=""
                if [[ -n "$pg_folder" && "$backend" == postgres* ]]; then
                    psql_at skiff -c "SELECT pg_stat_statements_reset()" > /dev/null
                    pg_cpu=$(cpu_s $(pg_pids))
                    pg_before=$(pg_counters)
                fi
                start_ns=$(date +%s%N)
                TIMEFORMAT='%U %S'
                { time "$bin/skiff-load" marketplace --target "$targets" --seed-users "$users" --seed-listings "$n" \
                    --state "$state" --concurrency "$concurrency" --connections "$connections" \
                    --duration "$duration" --warmup "$warmup" --quiet --allow-errors \
                    --json "$out/mix-$backend-$n-$concurrency.json" > "$out/mix-$backend-$n-$concurrency.txt" 2>&1 ; } \
                    2> "$out/mix-$backend-$n-$concurrency.time"
                wall=$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
                busy=$(awk -v a="$busy" -v b="$(machine_busy_s)" 'BEGIN { printf "%.2f", b - a }')
                server_cpu=$(awk -v a="$server_cpu" -v b="$(cpu_s "${server_pids[@]}")" 'BEGIN { printf "%.2f", b - a }')
                load_cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$out/mix-$backend-$n-$concurrency.time")
                pg_fields=""
                if [[ -n "$pg_before" ]]; then
                    pg_cpu=$(awk -v a="$pg_cpu" -v b="$(cpu_s $(pg_pids))" 'BEGIN { printf "%.2f", b - a }')
                    read -r c0 r0 x0 w0 t0 <<< "$pg_before"
                    read -r c1 r1 x1 w1 t1 <<< "$(pg_counters)"
                    # Where PostgreSQL's time went: the statements by total execution time.
                    psql_at skiff -F ' | ' -c "SELECT calls, round(total_exec_time)::bigint AS total_ms,
                        round(mean_exec_time::numeric, 3) AS mean_ms, rows,
                        regexp_replace(left(query, 200), '\\s+', ' ', 'g')
                        FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25" \
                        > "$out/pg-statements-$backend-$n-$concurrency.txt"
                    pg_fields=",\"pg_cpu_s\":$pg_cpu,\"pg_commits\":$((c1 - c0)),\"pg_rollbacks\":$((r1 - r0)),\"pg_xids\":$((x1 - x0)),\"pg_wal_bytes\":$((w1 - w0)),\"pg_rows_written\":$((t1 - t0))"
                fi
                echo "{\"backend\":\"$backend\",\"size\":$n,\"inflight\":$concurrency,\"connections\":$connections,\"servers\":$servers,\"wall_s\":$wall,\"server_cpu_s\":$server_cpu,\"load_cpu_s\":$load_cpu,\"load_before\":\"$load_before\",\"load_after\":\"$(load_average)\",\"machine_busy_s\":$busy$pg_fields}" >> "$out/steps.jsonl"
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
        server_pids=("$server_pid")
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
runs = [s for s in steps if "wall_s" in s]
if runs:
    print("\nCPU and PostgreSQL over each marketplace mix run (the skiff-load process's whole life: prepare, warm-up, measured window):\n")
    print("| backend | listings | in flight | servers × connections | load avg before → after | wall s | server CPU (cores) | PostgreSQL CPU (cores) | skiff-load CPU (cores) | other work on the machine (cores) | mix calls/s per server core | PG commits/s | PG write transactions/s | PG rollbacks/s | WAL MB/s | PG rows written/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for s in runs:
    path = os.path.join(out, f"mix-{s['backend']}-{s['size']}-{s['inflight']}.json")
    r = json.load(open(path)) if os.path.exists(path) else {"throughput": 0}
    w = s["wall_s"]
    server_cores = s["server_cpu_s"] / w
    per_core = f"{r['throughput'] / server_cores:.0f}" if server_cores > 0 else "–"
    ours = s["server_cpu_s"] + s["load_cpu_s"] + s.get("pg_cpu_s", 0)
    others = f"{max(0, s['machine_busy_s'] - ours) / w:.2f}" if "machine_busy_s" in s else "–"
    def rate(key, scale=1, digits=0):
        return f"{s[key] / w / scale:.{digits}f}" if key in s else "–"
    print(f"| {s['backend']} | {s['size']:,} | {s['inflight']} | {s['servers']} × {s['connections']} "
          f"| {s['load_before'].split()[0]} → {s['load_after'].split()[0]} | {w:.1f} | {server_cores:.2f} "
          f"| {rate('pg_cpu_s', digits=2)} | {s['load_cpu_s'] / w:.2f} | {others} | {per_core} | {rate('pg_commits')} "
          f"| {rate('pg_xids')} | {rate('pg_rollbacks')} | {rate('pg_wal_bytes', 1e6, 2)} | {rate('pg_rows_written')} |")
for s in steps:
    if "restart_to_serving_s" in s:
        print(f"\nRestart to serving on the largest SQLite file: {s['restart_to_serving_s']:.2f} s (exec → first answered SearchListings).")
PY
echo "results: $out" >&2
