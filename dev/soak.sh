#!/usr/bin/env bash
# Soaks a release skiff-server with the attacks of issue 9 (slow reader, half-open streams,
# reconnect churn, tag bomb) and prints what each cost it. Run by hand, not in CI:
#   dev/soak.sh                  # every attack, 2 minutes each
#   dev/soak.sh --seconds 30 --attacks slow-reader,churn
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift build -c release --product skiff-server
exec python3 dev/soak.py --binary .build/release/skiff-server "$@"
