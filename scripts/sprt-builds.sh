#!/bin/sh
# A change priced in games: SPRT(0, 10) at 2+0.02 of this tree's engine (target/release/actuary,
# its defaults) against the engine built from an earlier commit BASE (its defaults), game pairs
# from 2moves_v1.epd in seeded random order, 2 games at a time, to a decision (at most 30,000
# games). For changes no UCI switch can turn off (move generation, speed); a change behind a
# switch is priced on one binary by scripts/pruning-experiments.sh.
#
# Usage (from the repository root, after cargo build --release -p actuary -p arbiter):
#   sh scripts/sprt-builds.sh OUT NAME BASE [TC] [SEED]
#   sh scripts/sprt-builds.sh --checkpoint OUT NAME BASE [TC] [SEED]
# BASE is a commit (e.g. HEAD~1 or a hash); it is exported with `git archive` and built once
# into target/sprt-base/COMMIT/ (about 3 minutes on 2 cores). TC defaults to 2+0.02, SEED to 70.
# OPTIONS (environment, optional): UCI options both engines get, as arbiter's engine keys,
# e.g. OPTIONS="option.Eval=hce" to price a change of the hand evaluation. NEW_OPTIONS: options
# for this tree's engine only (an option the older build does not have).
# GAMES (environment, optional): play exactly this many games instead of stopping at the
# SPRT's decision (the LLR is still reported), e.g. GAMES=1000 for a fixed-length comparison.
# Resumable: stop it at any time and run the same command again (arbiter --resume reads
# OUT/NAME.pgn back; a decided match plays nothing more).
#
# --checkpoint plays nothing: it writes docs/chess/sprt/NAME.pgn.gz and docs/chess/sprt/NAME.json
# (what was played and `arbiter --score`'s report), each replaced atomically; run it (and commit)
# before a sitting ends. To resume on another machine:
#   zcat docs/chess/sprt/NAME.pgn.gz > OUT/NAME.pgn, then the same command.
set -eu
MODE=play
if [ "${1:-}" = "--checkpoint" ]; then MODE=checkpoint; shift; fi
OUT=${1:?usage: sprt-builds.sh [--checkpoint] OUT NAME BASE [TC] [SEED]}
NAME=${2:?usage: sprt-builds.sh [--checkpoint] OUT NAME BASE [TC] [SEED]}
BASE=${3:?usage: sprt-builds.sh [--checkpoint] OUT NAME BASE [TC] [SEED]}
TC=${4:-2+0.02}
SEED=${5:-70}
SPRT="elo0=0 elo1=10"
OPTIONS=${OPTIONS:-}
NEW_OPTIONS=${NEW_OPTIONS:-}
GAMES=${GAMES:-}
case "$GAMES" in
  '') ;;
  *[!0-9]*|0) echo "sprt-builds: GAMES must be a positive whole number, got \`$GAMES\`" >&2; exit 2 ;;
esac
if [ -n "$GAMES" ]; then LENGTH="--games $GAMES"; else LENGTH="--games 30000 --sprt $SPRT"; fi
ROOT=$(pwd)
ACTUARY=$ROOT/target/release/actuary
ARBITER=$ROOT/target/release/arbiter
BOOK=$ROOT/data/chess/books/2moves_v1.epd
for f in "$ACTUARY" "$ARBITER" "$BOOK"; do
  [ -e "$f" ] || { echo "sprt-builds: $f is missing (run from the repository root after building)" >&2; exit 2; }
done
REV=$(git rev-parse --verify --quiet "$BASE^{commit}") ||
  { echo "sprt-builds: BASE \`$BASE\` is not a commit of this repository" >&2; exit 2; }
SHORT=$(printf '%s' "$REV" | cut -c1-12)
BASEDIR=$ROOT/target/sprt-base/$SHORT
BASEBIN=$BASEDIR/target/release/actuary
mkdir -p "$OUT"
PGN=$OUT/$NAME.pgn

if [ "$MODE" = checkpoint ]; then
  [ -s "$PGN" ] || { echo "sprt-builds: no games in $PGN" >&2; exit 2; }
  dest=$ROOT/docs/chess/sprt
  mkdir -p "$dest"
  gzip -9 -n -c "$PGN" > "$dest/$NAME.pgn.gz.tmp"
  score=$("$ARBITER" --score "$PGN" --sprt $SPRT) || { rm -f "$dest/$NAME.pgn.gz.tmp"; exit 1; }
  head=$(git rev-parse --short=12 HEAD)
  dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo ", with uncommitted changes" || true)
  {
    printf '{\n "format": "actuary-sprt-builds-v1",\n "name": "%s",\n' "$NAME"
    printf ' "candidate": "target/release/actuary built from %s%s (binary sha256 %s...)",\n' "$head" "$dirty" "$(sha256sum "$ACTUARY" | cut -c1-12)"
    printf ' "baseline": "the same built from %s",\n' "$SHORT"
    env="${OPTIONS:+OPTIONS=\\\"$OPTIONS\\\" }${NEW_OPTIONS:+NEW_OPTIONS=\\\"$NEW_OPTIONS\\\" }${GAMES:+GAMES=$GAMES }"
    printf ' "command": "%ssh scripts/sprt-builds.sh OUT %s %s %s %s  (arbiter ... --tc %s %s --concurrency 2 --book 2moves_v1.epd --book-order random --seed %s --resume)",\n' "$env" "$NAME" "$SHORT" "$TC" "$SEED" "$TC" "$LENGTH" "$SEED"
    printf ' "pgn": "docs/chess/sprt/%s.pgn.gz",\n' "$NAME"
    printf ' "resume": "zcat docs/chess/sprt/%s.pgn.gz > OUT/%s.pgn && %ssh scripts/sprt-builds.sh OUT %s %s %s %s",\n' "$NAME" "$NAME" "$env" "$NAME" "$SHORT" "$TC" "$SEED"
    printf ' "rescore": "zcat docs/chess/sprt/%s.pgn.gz > %s.pgn && arbiter --score %s.pgn --sprt elo0=0 elo1=10",\n' "$NAME" "$NAME" "$NAME"
    printf ' "score": %s\n}\n' "$score"
  } > "$dest/$NAME.json.tmp"
  mv "$dest/$NAME.pgn.gz.tmp" "$dest/$NAME.pgn.gz"
  mv "$dest/$NAME.json.tmp" "$dest/$NAME.json"
  echo "checkpoint: docs/chess/sprt/$NAME.pgn.gz, $NAME.json" >&2
  exit 0
fi

if [ ! -x "$BASEBIN" ]; then
  echo "sprt-builds: building the baseline $SHORT into $BASEDIR" >&2
  rm -rf "$BASEDIR/src"
  mkdir -p "$BASEDIR/src"
  git archive "$REV" | tar -x -C "$BASEDIR/src"
  (cd "$BASEDIR/src" && cargo build --release -p actuary --target-dir "$BASEDIR/target" >&2)
fi
echo "== $NAME: this tree's actuary${NEW_OPTIONS:+ with $NEW_OPTIONS} vs $SHORT, $TC, $LENGTH, seed $SEED${OPTIONS:+, both with $OPTIONS}" >&2
# shellcheck disable=SC2086
exec "$ARBITER" --engine name=new cmd="$ACTUARY" $OPTIONS $NEW_OPTIONS --engine name=base cmd="$BASEBIN" $OPTIONS \
  --tc "$TC" $LENGTH --concurrency 2 --book "$BOOK" \
  --book-order random --seed "$SEED" --pgn "$PGN" --report "$OUT/$NAME.json" --resume
