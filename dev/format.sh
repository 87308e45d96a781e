#!/usr/bin/env bash
# Formats the Swift sources (generated files excluded), or with --lint checks them strictly.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -d '' files < <(git ls-files -z --cached --others --exclude-standard -- '*.swift' ':(exclude)*.pb.swift' ':(exclude)*.skiff.swift' ':(exclude)*.grpc.swift' ':(exclude)Package.swift')
if [[ "${1:-}" == "--lint" ]]; then
    swift format lint --strict --parallel "${files[@]}"
    echo "Formatting is clean."
else
    swift format --in-place --parallel "${files[@]}"
fi
