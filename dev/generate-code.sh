#!/usr/bin/env bash
# Regenerates the Swift code for the protos under Protos/, as listed in Protos/generate-code.conf.
#
# Builds protoc-gen-swift and protoc-gen-skiff with SwiftPM, then runs protoc. Generated files in
# each output directory (*.pb.swift, *.skiff.swift) are removed first, so files of deleted protos
# go away too.
#
# Environment: SKIFF_SCRATCH  the SwiftPM scratch path to build the generators in (default .build)
#              PROTOC         the protoc to use (default: protoc on PATH)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

scratch="${SKIFF_SCRATCH:-.build}"
protoc="${PROTOC:-protoc}"
config="Protos/generate-code.conf"
options="FileNaming=PathToUnderscores"

if ! command -v "$protoc" > /dev/null 2>&1; then
    echo "error: protoc not found on PATH; install it (apt-get install protobuf-compiler) or set PROTOC." >&2
    exit 1
fi

for product in protoc-gen-swift protoc-gen-skiff; do
    swift build --scratch-path "$scratch" --product "$product" >&2
done
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"

# Read the table: proto directory, output directory, visibility.
entries=()
while read -r proto_dir out_dir visibility _; do
    [[ -z "$proto_dir" || "$proto_dir" == \#* ]] && continue
    entries+=("$proto_dir|$out_dir|$visibility")
done < "$config"

# Clear every output directory once, before any generation into it.
declare -A cleared=()
for entry in "${entries[@]}"; do
    IFS='|' read -r _ out_dir _ <<< "$entry"
    if [[ -z "${cleared[$out_dir]:-}" ]]; then
        mkdir -p "$out_dir"
        find "$out_dir" -maxdepth 1 -type f \( -name '*.pb.swift' -o -name '*.skiff.swift' \) -delete
        cleared[$out_dir]=1
    fi
done

for entry in "${entries[@]}"; do
    IFS='|' read -r proto_dir out_dir visibility <<< "$entry"
    shopt -s nullglob
    protos=(Protos/"$proto_dir"/*.proto)
    shopt -u nullglob
    if (( ${#protos[@]} == 0 )); then
        echo "error: no .proto files in Protos/$proto_dir (listed in $config)." >&2
        exit 1
    fi
    echo "Generating ${protos[*]} -> $out_dir (Visibility=$visibility)" >&2
    "$protoc" \
        --proto_path=Protos \
        --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
        --swift_out="$out_dir" \
        --swift_opt="Visibility=$visibility,$options,UseAccessLevelOnImports=true" \
        --plugin=protoc-gen-skiff="$bin/protoc-gen-skiff" \
        --skiff_out="$out_dir" \
        --skiff_opt="Visibility=$visibility,$options" \
        "${protos[@]}"
done

# The C client (Clients/c/generated): messages from protoc-c (Debian's protobuf-c-compiler) and typed
# functions from protoc-gen-skiff (Language=C), for the services apps call and the well-known types
# they use. protoc-c 1.4 predates proto3 `optional`, so it reads a copy of the protos in which each
# `optional T name = N;` is the one-field `oneof name_presence { T name = N; }` that optional is on
# the wire and in descriptors: the same messages, with presence as a oneof case in C.
if ! command -v protoc-c > /dev/null 2>&1; then
    echo "error: protoc-c not found on PATH; install it (apt-get install protobuf-c-compiler)." >&2
    exit 1
fi
c_out="Clients/c/generated"
c_protos=(
    skiff/accounts/v1/accounts.proto skiff/bids/v1/bids.proto skiff/bucketlist/v1/bucketlist.proto
    skiff/chat/v1/chat.proto skiff/health/v1/health.proto skiff/listings/v1/listings.proto
    skiff/lostfound/v1/lostfound.proto skiff/testing/v1/test.proto
)
c_copy="$(mktemp -d)"
trap 'rm -rf "$c_copy"' EXIT
cp -R Protos/. "$c_copy/"
find "$c_copy" -name '*.proto' -exec sed -E -i \
    's/^([[:space:]]*)optional[[:space:]]+([A-Za-z0-9_.]+)[[:space:]]+([A-Za-z0-9_]+)[[:space:]]*=[[:space:]]*([0-9]+);/\1oneof \3_presence { \2 \3 = \4; }/' {} +
rm -rf "$c_out"
mkdir -p "$c_out"
echo "Generating ${c_protos[*]} (and google/protobuf/{timestamp,field_mask}.proto) -> $c_out (C)" >&2
(cd "$c_copy" && protoc-c --proto_path=. --c_out="$root/$c_out" "${c_protos[@]}")
protoc-c --c_out="$c_out" google/protobuf/timestamp.proto google/protobuf/field_mask.proto
"$protoc" --proto_path="$c_copy" --plugin=protoc-gen-skiff="$bin/protoc-gen-skiff" --skiff_out="$c_out" \
    --skiff_opt=Language=C "${c_protos[@]/#/$c_copy/}"
