#!/usr/bin/env bash
# The README's test command: installs what the tests need and a fresh Debian 12 machine lacks
# (protoc for the CLI's --proto tests and code generation, SQLite's headers, openssl for the TLS
# tests, curl and Python with the stock grpcio and connectrpc clients, grpcio-tools,
# grpcio-health-checking and grpcio-reflection for the gRPC, gRPC-Web and Connect interop tests,
# headless Chromium for the browser test of gRPC-Web and Connect through CORS, a C compiler, make,
# protobuf-c and OpenSSL's headers for the C client runtime, PostgreSQL's server for the PostgreSQL
# backend's tests), then runs the C runtime's tests (plain, under
# AddressSanitizer and UndefinedBehaviorSanitizer, and a bounded libFuzzer run with the Swift
# toolchain's clang) and the whole Swift suite one test at a time. Extra arguments go to
# `swift test` alone (e.g. `dev/test.sh --filter SkiffCoreTests`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3 python3-pip)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v protoc-c >/dev/null 2>&1 || need+=(protobuf-c-compiler)
dpkg -s libprotobuf-c-dev >/dev/null 2>&1 || need+=(libprotobuf-c-dev)
dpkg -s libssl-dev >/dev/null 2>&1 || need+=(libssl-dev)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
dpkg -s postgresql-contrib >/dev/null 2>&1 || need+=(postgresql-contrib)
if ((${#need[@]})); then
    echo "Installing: ${need[*]}"
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq "${need[@]}"
fi

# Stock third-party clients from PyPI, for the interop tests.
# connectrpc is pinned to its 0.13 series: its generic client API (MethodInfo, execute_unary…) is pre-1.0.
python_packages=(grpcio grpcio-tools grpcio-health-checking grpcio-reflection 'connectrpc>=0.13,<0.14')
if ! python3 -c 'import grpc, grpc_tools, grpc_health.v1, grpc_reflection.v1alpha, connectrpc, pyqwest' \
    >/dev/null 2>&1; then
    echo "Installing: ${python_packages[*]} (pip)"
    python3 -m pip install -q "${python_packages[@]}" 2>/dev/null \
        || python3 -m pip install -q --break-system-packages "${python_packages[@]}"
fi

if (($# == 0)); then
    echo "== the C client runtime (Clients/c): make check check-sanitize check-fuzz"
    make -s -C Clients/c check check-sanitize check-fuzz
fi

# The PostgreSQL backend's tests run against a throw-away cluster on loopback (started and removed
# by dev/postgres-cluster.sh); without SKIFF_TEST_POSTGRES_URL they fail rather than skip. Every
# statement they run is planned with sequential scans off and checked afterwards: a query shape no
# index serves fails the run.
export SKIFF_POSTGRES_PLAN_CHECK=1
exec dev/postgres-cluster.sh swift test --no-parallel "$@"
