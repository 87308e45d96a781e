#!/usr/bin/env bash
# Regenerates Sources/BenchGRPC/Generated/ from ../Protos/skiff/testing/v1/test.proto: messages with
# protoc-gen-swift (swift-protobuf 1.39.0) and gRPC stubs with protoc-gen-grpc-swift-2 (grpc-swift-protobuf 2.4.1),
# both built from this package's pinned dependencies. The output is committed; run this only after changing the
# proto or the generator versions. Needs protoc (Debian: apt-get install -y protobuf-compiler).
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product protoc-gen-swift
swift build -c release --product protoc-gen-grpc-swift-2
bin="$(swift build -c release --show-bin-path)"
out=Sources/BenchGRPC/Generated
mkdir -p "$out"
protoc \
    --proto_path=../Protos \
    --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
    --plugin=protoc-gen-grpc-swift-2="$bin/protoc-gen-grpc-swift-2" \
    --swift_out="$out" \
    --swift_opt=Visibility=Public,FileNaming=DropPath \
    --grpc-swift-2_out="$out" \
    --grpc-swift-2_opt=Visibility=Public,Server=true,Client=true,FileNaming=DropPath \
    skiff/testing/v1/test.proto
ls -l "$out"
