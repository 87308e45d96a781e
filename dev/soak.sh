#!/usr/bin/env bash
# Soaks a release skiff-server with the attacks of issue 9 (slow reader, half-open streams,
# reconnect churn, tag bomb) and prints what each cost it. Run by hand, not in CI:
#   dev/soak.sh                  # every attack, 2 minutes each
#   dev/soak.sh --seconds 30 --attacks slow-reader,churn
# Environment: SKIFF_SCRATCH  the SwiftPM scratch path of the release build (default .build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scratch="${SKIFF_SCRATCH:-.build}"
swift build -c release --product skiff-server --scratch-path "$scratch"
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)"
exec python3 dev/soak.py --binary "$bin/skiff-server" "$@"
