#!/usr/bin/env python3
"""Pair two gauntlets game pair by game pair and print how much the score moved.

Two gauntlets played with the same book, order and seed (scripts/gauntlet.sh) meet the same
opening pairs in the same rounds, so the difference of two builds can be taken per pair
(the pair's two games' points, second file minus first), which removes the openings' own
spread from the comparison. Prints the number of pairs, the mean change per game and its
95 % interval (normal approximation over the pairs). Standard library only.

Usage: python3 scripts/paired-gauntlets.py OLD.pgn[.gz] NEW.pgn[.gz] [ENGINE]
ENGINE is the side whose points are counted (default: actuary).
"""
import gzip
import re
import sys

POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def pairs(path, engine):
    """Round number -> list of (opening FEN, points of ENGINE) for each finished game."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    out = {}
    for game in text.split("[Event ")[1:]:
        tag = lambda name: (re.search(r'\[%s "([^"]*)"\]' % name, game) or [None, None])[1]
        rnd, white, result, fen = tag("Round"), tag("White"), tag("Result"), tag("FEN")
        if rnd is None or result not in POINTS:
            continue
        points = POINTS[result] if white == engine else 1.0 - POINTS[result]
        out.setdefault(rnd.split(".")[0], []).append((fen, points))
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[-2])
    engine = sys.argv[3] if len(sys.argv) == 4 else "actuary"
    old, new = pairs(sys.argv[1], engine), pairs(sys.argv[2], engine)
    diffs, mismatched = [], 0
    for rnd, games in old.items():
        other = new.get(rnd)
        if len(games) != 2 or other is None or len(other) != 2:
            continue
        if games[0][0] != other[0][0]:
            mismatched += 1
            continue
        diffs.append(sum(p for _, p in other) - sum(p for _, p in games))
    if len(diffs) < 2:
        sys.exit("paired-gauntlets: fewer than 2 common game pairs (same book, order and seed?)")
    n = len(diffs)
    mean = sum(diffs) / n
    se = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5 / n**0.5
    print(f"pairs {n} (opening mismatches skipped: {mismatched})")
    print(f"score change per game {mean / 2:+.3f} [{(mean - 1.96 * se) / 2:+.3f}, {(mean + 1.96 * se) / 2:+.3f}] (95 %, normal)")


if __name__ == "__main__":
    main()
