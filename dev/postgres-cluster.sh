#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster on loopback for the tests, runs the given command with
# SKIFF_TEST_POSTGRES_URL pointing at it, then stops the cluster and removes its folder, whatever
# the command's outcome (its exit status is passed on).
#
#   dev/postgres-cluster.sh swift test --filter Postgres
#
# With SKIFF_POSTGRES_PLAN_CHECK=1 (dev/test.sh sets it) every statement's plan is logged
# (auto_explain) with sequential scans disabled, so the planner uses an index wherever one serves the
# query; afterwards the run fails if any plan still scans a table of ours sequentially: some query shape
# the tests exercised has no index to answer it.
#
# Needs Debian's postgresql package (dev/test.sh installs it). The cluster runs as the `postgres`
# user when started by root (PostgreSQL refuses to run as root), trusts local connections, listens
# on 127.0.0.1 on a free port, and keeps its data in a temporary folder.
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ -z $bin || ! -x $bin/initdb ]]; then
    echo "dev/postgres-cluster.sh: PostgreSQL's server is not installed (apt-get install postgresql)" >&2
    exit 1
fi

folder=$(mktemp -d /tmp/skiff-postgres-XXXXXX)
chmod 755 "$folder"
run_as=()
if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$folder"
    run_as=(runuser -u postgres --)
fi

stop_cluster() {
    "${run_as[@]}" "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap stop_cluster EXIT

"${run_as[@]}" "$bin/initdb" -D "$folder/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 \
    || { cat "$folder/initdb.log" >&2; exit 1; }

# A free port: the kernel picks one for a socket bound to port 0.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Throw-away data: no fsync (the tests' durability checks are on SQLite). Enough connections for the
# tests' pools; a sockets folder of its own.
"${run_as[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $port -k $folder -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null || { cat "$folder/server.log" >&2; exit 1; }

export SKIFF_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "== a throw-away PostgreSQL cluster ($("$bin/postgres" --version)) at $SKIFF_TEST_POSTGRES_URL"
if [[ ${SKIFF_POSTGRES_PLAN_CHECK:-0} == 1 ]]; then
    "${run_as[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt \
        -c "LOAD 'auto_explain'" \
        -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
        -c "ALTER SYSTEM SET auto_explain.log_min_duration = 0" \
        -c "ALTER SYSTEM SET enable_seqscan = off" \
        -c "SELECT pg_reload_conf()" >/dev/null
fi
set +e
"$@"
status=$?
set -e
if [[ ${SKIFF_POSTGRES_PLAN_CHECK:-0} == 1 && $status -eq 0 ]]; then
    # Each logged plan starts with "Query Text:"; report the statements whose plan scans a table
    # sequentially (the migrations' own bookkeeping table aside).
    scans=$(awk '
        /Query Text:/ { query = $0; sub(/.*Query Text: /, "", query) }
        /Seq Scan on / && !/Seq Scan on skiff_migration/ { print "  " $0 "\n    in: " substr(query, 1, 300) }
    ' "$folder/server.log" | sort -u)
    plans=$(grep -c "Query Text:" "$folder/server.log" || true)
    if [[ -n $scans ]]; then
        echo "PostgreSQL plan check: statements the tests ran scan a table sequentially (no index serves them):"
        echo -e "$scans" | head -60
        status=1
    else
        echo "PostgreSQL plan check: $plans plans logged, none scans a table sequentially"
    fi
fi
exit $status
