#!/bin/sh
# Positions per core-hour of `actuary datagen --corpus` under several settings, measured in turn
# (round 1: every setting, round 2: every setting, ...) in one sitting, as issue 67 asks: an
# absolute rate on a shared machine is not a result, the ratio between settings run alternately
# is. Every run plays the same game ids (--first-id 1000000000, so the same openings) into a
# throwaway corpus; the rate is the run's positions over its games' summed wall time (the
# manifest's `core_seconds`: one search thread per game, so one core each).
#
#   scripts/datagen-rate.sh ROUNDS GAMES 'SETTINGS A' 'SETTINGS B' ...
#   scripts/datagen-rate.sh 3 100 '--nodes 5000' '--soft-nodes 1250 --nodes 25000'
#
# Prints `setting round games positions core_seconds Mpositions/core-hour` per run, then each
# setting's median and its ratio to the first setting's median. Stop other work first
# (scripts/datagen-background.sh stop): this is a timing.
set -eu
[ $# -ge 3 ] || { sed -n 2,14p "$0"; exit 2; }
ROUNDS=$1 GAMES=$2
shift 2
BIN=${ACTUARY:-target/release/actuary}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  i=0
  for opts in "$@"; do
    i=$((i + 1))
    d=$TMP/$i-$r
    # shellcheck disable=SC2086  # the settings are words
    "$BIN" datagen --corpus "$d" --first-id 1000000000 --games "$GAMES" $opts >/dev/null 2>&1
    python3 - "$d/manifest.jsonl" "$i" "$r" >>"$TMP/rows" <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
rate = e["positions"] / e["core_seconds"] * 3600 / 1e6
print(sys.argv[2], sys.argv[3], e["games"], e["positions"], round(e["core_seconds"], 2), round(rate, 3))
PY
    tail -n 1 "$TMP/rows"
  done
done
python3 - "$TMP/rows" "$@" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
names = sys.argv[2:]
med = [statistics.median(float(r[5]) for r in rows if r[0] == str(i + 1)) for i in range(len(names))]
for i, n in enumerate(names):
    print(f"setting {i + 1} ({n}): median {med[i]:.3f} M positions/core-hour, {med[i] / med[0]:.2f}x setting 1")
PY
