#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster on loopback for the tests, runs the given command with
# SKIFF_TEST_POSTGRES_URL pointing at it, then stops the cluster and removes its folder, whatever
# the command's outcome (its exit status is passed on).
#
#   dev/postgres-cluster.sh swift test --filter Postgres
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
set +e
"$@"
status=$?
set -e
exit $status
