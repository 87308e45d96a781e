#!/usr/bin/env bash
# Fails when the committed generated code under Sources/ and Clients/c/generated is not what dev/generate-code.sh
# produces today: regenerates, then lists any file that changed, appeared or disappeared.
#
# Environment: SKIFF_SCRATCH  the SwiftPM scratch path to build the generators in (default .build)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

"$here/generate-code.sh"

changes="$(git status --porcelain --untracked-files=all -- 'Sources/*.pb.swift' 'Sources/*.skiff.swift' \
    'Clients/c/generated')"
if [[ -n "$changes" ]]; then
    echo "error: generated code is out of date; run dev/generate-code.sh and commit the result:" >&2
    echo "$changes" >&2
    exit 1
fi
echo "Generated code is up to date."
