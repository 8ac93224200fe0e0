#!/bin/sh
# Issue 33's gauntlet: actuary (target/release/actuary, its defaults) at 10+0.1 against
# Ethereal 12 and Toga II (Debian: apt-get install ethereal-chess toga2), GAMES games against
# each (default 200), `Hash` 64 MB for every engine, 2 games at a time, game pairs from
# 2moves_v1.epd in seeded random order. Resumable: stop it at any time and run the same command
# again (arbiter --resume reads OUT/gauntlet.pgn back; a finished match plays nothing).
#
# Usage (from the repository root, after cargo build --release -p actuary -p arbiter):
#   sh scripts/gauntlet.sh OUT [GAMES]
#   sh scripts/gauntlet.sh --checkpoint OUT
# --checkpoint plays nothing: it writes docs/chess/gauntlet/gauntlet.pgn.gz (the PGN, gzipped)
# and docs/chess/gauntlet/gauntlet.json (`arbiter --score` of it), each replaced atomically, so
# a sitting's games survive the machine; run it (and commit) before a sitting ends. To resume on
# another machine: zcat docs/chess/gauntlet/gauntlet.pgn.gz > OUT/gauntlet.pgn first.
# ACTUARY=PATH plays another binary (e.g. a copy, so that a rebuild during the gauntlet does
# not change the engine between games).
# SET=stockfish plays issue 34's third opponent instead, in its own files (OUT/gauntlet-stockfish.pgn,
# docs/chess/gauntlet/gauntlet-stockfish.*): Stockfish (apt-get install stockfish) limited by
# UCI_LimitStrength to UCI_Elo $SF_ELO (default 2600), Hash 64, same control, book and seed.
# SET=ethereal plays Ethereal 12 alone (issue 34's 400 games), in OUT/gauntlet-ethereal.pgn and
# docs/chess/gauntlet/gauntlet-ethereal.*; same control, book, seed and Hash.
# SET=toga plays Toga II alone (issue 34's 200 games), in OUT/gauntlet-toga.pgn and
# docs/chess/gauntlet/gauntlet-toga.*; same control, book, seed and Hash.
# SET=ethereal-pext plays Ethereal 12.00 as its author builds it (issue 67): ETHEREAL_PEXT=PATH
# names the binary, built outside this repository with
#   git clone https://github.com/AndyGrant/Ethereal && cd Ethereal && git checkout V12.00 \
#     && cd src && make pext        # `uci` then answers "id name Ethereal 12.00 (PEXT)"
# in OUT/gauntlet-ethereal-pext.pgn and docs/chess/gauntlet/gauntlet-ethereal-pext.*.
# SET=threads plays actuary with Threads 2 against itself with Threads 1 (issue 67, item 4),
# one game at a time (the two threads take both cores), in OUT/gauntlet-threads.pgn.
# TAG=WORD appends -WORD to the files' name (e.g. TAG=actuary7: OUT/gauntlet-ethereal-actuary7.pgn,
# docs/chess/gauntlet/gauntlet-ethereal-actuary7.*), so a new build's gauntlet neither resumes
# nor overwrites an earlier build's games.
set -eu
MODE=play
if [ "${1:-}" = "--checkpoint" ]; then MODE=checkpoint; shift; fi
OUT=${1:?usage: gauntlet.sh [--checkpoint] OUT [GAMES]}
GAMES=${2:-200}
ROOT=$(pwd)
SET=${SET:-ethereal-toga}
case "$SET" in
ethereal-toga) NAME=gauntlet ;;
ethereal) NAME=gauntlet-ethereal ;;
ethereal-pext) NAME=gauntlet-ethereal-pext ;;
threads) NAME=gauntlet-threads ;;
toga) NAME=gauntlet-toga ;;
stockfish) NAME=gauntlet-stockfish ;;
*) echo "gauntlet: SET=$SET is not a set (ethereal-toga, ethereal, ethereal-pext, toga, stockfish or threads)" >&2; exit 2 ;;
esac
TAG=${TAG:-}
case "$TAG" in
*[!A-Za-z0-9_.-]*) echo "gauntlet: TAG=$TAG may hold only letters, digits, '.', '_' and '-'" >&2; exit 2 ;;
esac
NAME=$NAME${TAG:+-$TAG}
SF_ELO=${SF_ELO:-2600}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
ACTUARY=${ACTUARY:-$ROOT/target/release/actuary}
ARBITER=$ROOT/target/release/arbiter
BOOK=$ROOT/data/chess/books/2moves_v1.epd
ETHEREAL=${ETHEREAL:-/usr/games/ethereal-chess}
TOGA=${TOGA:-/usr/games/toga2}
for f in "$ACTUARY" "$ARBITER" "$BOOK"; do
  [ -e "$f" ] || { echo "gauntlet: $f is missing (run from the repository root after building)" >&2; exit 2; }
done
mkdir -p "$OUT"
if [ "$MODE" = checkpoint ]; then
  dest=$ROOT/docs/chess/gauntlet
  mkdir -p "$dest"
  [ -s "$OUT/$NAME.pgn" ] || { echo "gauntlet: no games in $OUT/$NAME.pgn" >&2; exit 2; }
  gzip -9 -n -c "$OUT/$NAME.pgn" > "$dest/$NAME.pgn.gz.tmp"
  "$ARBITER" --score "$OUT/$NAME.pgn" > "$dest/$NAME.json.tmp"
  mv "$dest/$NAME.pgn.gz.tmp" "$dest/$NAME.pgn.gz"
  mv "$dest/$NAME.json.tmp" "$dest/$NAME.json"
  echo "checkpoint: docs/chess/gauntlet/$NAME.pgn.gz, $NAME.json" >&2
  exit 0
fi
if [ "$SET" = stockfish ]; then
  [ -x "$STOCKFISH" ] || { echo "gauntlet: $STOCKFISH is missing (apt-get install stockfish)" >&2; exit 2; }
  exec "$ARBITER" \
    --engine name=actuary cmd="$ACTUARY" option.Hash=64 \
    --engine name="stockfish-elo$SF_ELO" cmd="$STOCKFISH" option.Hash=64 \
    option.UCI_LimitStrength=true option.UCI_Elo="$SF_ELO" \
    --tc 10+0.1 --games "$GAMES" --concurrency 2 --book "$BOOK" --book-order random --seed 20 \
    --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
fi
if [ "$SET" = ethereal ]; then
  [ -x "$ETHEREAL" ] || { echo "gauntlet: $ETHEREAL is missing (apt-get install ethereal-chess)" >&2; exit 2; }
  exec "$ARBITER" \
    --engine name=actuary cmd="$ACTUARY" option.Hash=64 \
    --engine name=ethereal-12 cmd="$ETHEREAL" option.Hash=64 \
    --tc 10+0.1 --games "$GAMES" --concurrency 2 --book "$BOOK" --book-order random --seed 20 \
    --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
fi
if [ "$SET" = ethereal-pext ]; then
  ETHEREAL_PEXT=${ETHEREAL_PEXT:?gauntlet: SET=ethereal-pext needs ETHEREAL_PEXT=PATH (Ethereal 12.00 built with make pext)}
  [ -x "$ETHEREAL_PEXT" ] || { echo "gauntlet: $ETHEREAL_PEXT is missing" >&2; exit 2; }
  exec "$ARBITER" \
    --engine name=actuary cmd="$ACTUARY" option.Hash=64 \
    --engine name=ethereal-12-pext cmd="$ETHEREAL_PEXT" option.Hash=64 \
    --tc 10+0.1 --games "$GAMES" --concurrency 2 --book "$BOOK" --book-order random --seed 20 \
    --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
fi
if [ "$SET" = threads ]; then
  exec "$ARBITER" \
    --engine name=actuary-threads2 cmd="$ACTUARY" option.Hash=64 option.Threads=2 \
    --engine name=actuary-threads1 cmd="$ACTUARY" option.Hash=64 option.Threads=1 \
    --tc 10+0.1 --games "$GAMES" --concurrency 1 --book "$BOOK" --book-order random --seed 21 \
    --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
fi
if [ "$SET" = toga ]; then
  [ -x "$TOGA" ] || { echo "gauntlet: $TOGA is missing (apt-get install toga2)" >&2; exit 2; }
  exec "$ARBITER" \
    --engine name=actuary cmd="$ACTUARY" option.Hash=64 \
    --engine name=toga2 cmd="$TOGA" option.Hash=64 \
    --tc 10+0.1 --games "$GAMES" --concurrency 2 --book "$BOOK" --book-order random --seed 20 \
    --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
fi
for f in "$ETHEREAL" "$TOGA"; do
  [ -x "$f" ] || { echo "gauntlet: $f is missing (apt-get install ethereal-chess toga2)" >&2; exit 2; }
done
exec "$ARBITER" \
  --engine name=actuary cmd="$ACTUARY" option.Hash=64 \
  --engine name=ethereal-12 cmd="$ETHEREAL" option.Hash=64 \
  --engine name=toga2 cmd="$TOGA" option.Hash=64 \
  --tc 10+0.1 --games "$GAMES" --concurrency 2 --book "$BOOK" --book-order random --seed 20 \
  --pgn "$OUT/$NAME.pgn" --report "$OUT/$NAME.json" --resume
