#!/usr/bin/env python3
"""Play a match between actuary and another UCI engine with python-chess.

Openings come from an EPD book (default: shared/chess/books/2moves_v1.epd); each opening
is played twice with colours swapped. Clocks are kept here, so GUI/pipe latency counts
against the engine exactly as in a real match. Reports score, crashes, illegal moves and
time losses; exits non-zero if any of the last three happened.

Example:
  python3 crates/chess/tools/match.py --engine target/release/actuary \
      --opponent /usr/games/toga2 --games 20 --tc 10+0.1
"""
import argparse
import os
import random
import sys
import time

import chess
import chess.engine
import chess.pgn

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BOOK = os.path.normpath(os.path.join(HERE, "../../../../shared/chess/books/2moves_v1.epd"))


def parse_tc(tc):
    base, _, inc = tc.partition("+")
    return float(base), float(inc or 0)


def load_openings(path, n, seed):
    with open(path) as f:
        fens = [" ".join(l.split()[:4]) + " 0 1" for l in f if l.strip()]
    rng = random.Random(seed)
    return rng.sample(fens, n)


def open_engine(cmd, options):
    eng = chess.engine.SimpleEngine.popen_uci(cmd.split())
    for k, v in options.items():
        # python-chess manages Ponder itself (off unless asked), so only set real options.
        if k in eng.options and not eng.options[k].is_managed():
            eng.configure({k: v})
    return eng


def play_game(engines, names, fen, base, inc, max_plies, log):
    """engines[0] plays White. Returns (result, reason, game)."""
    board = chess.Board(fen)
    clocks = [base, base]
    game = chess.pgn.Game()
    game.setup(board)
    game.headers["White"], game.headers["Black"] = names
    node = game
    for _ in range(max_plies):
        if board.is_game_over(claim_draw=True):
            break
        side = 0 if board.turn == chess.WHITE else 1
        limit = chess.engine.Limit(white_clock=clocks[0], black_clock=clocks[1], white_inc=inc, black_inc=inc)
        t0 = time.monotonic()
        try:
            res = engines[side].play(board, limit)
        except (chess.engine.EngineTerminatedError, chess.engine.EngineError) as e:
            return ("0-1" if side == 0 else "1-0"), f"crash:{names[side]}:{e}", game
        spent = time.monotonic() - t0
        clocks[side] -= spent
        if clocks[side] <= 0:
            return ("0-1" if side == 0 else "1-0"), f"time:{names[side]}", game
        clocks[side] += inc
        if res.move is None or res.move not in board.legal_moves:
            return ("0-1" if side == 0 else "1-0"), f"illegal:{names[side]}:{res.move}", game
        node = node.add_variation(res.move)
        board.push(res.move)
    if not board.is_game_over(claim_draw=True):
        return "1/2-1/2", "max plies", game
    outcome = board.outcome(claim_draw=True)
    return board.result(claim_draw=True), outcome.termination.name.lower() if outcome else "?", game


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="path to actuary")
    ap.add_argument("--opponent", default="/usr/games/toga2")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--tc", default="10+0.1", help="seconds+increment")
    ap.add_argument("--book", default=DEFAULT_BOOK)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hash", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-plies", type=int, default=400)
    ap.add_argument("--pgn", default=None, help="write games here")
    args = ap.parse_args()

    base, inc = parse_tc(args.tc)
    openings = load_openings(args.book, (args.games + 1) // 2, args.seed)
    opts = {"Hash": args.hash, "Threads": args.threads}
    a = open_engine(args.engine, opts)
    b = open_engine(args.opponent, opts)
    na, nb = "actuary", os.path.basename(args.opponent)
    score = {"w": 0, "d": 0, "l": 0}
    problems = {"crash": 0, "illegal": 0, "time": 0}
    pgn_out = open(args.pgn, "w") if args.pgn else None
    try:
        for g in range(args.games):
            fen = openings[g // 2]
            actuary_white = g % 2 == 0
            engines, names = ([a, b], [na, nb]) if actuary_white else ([b, a], [nb, na])
            result, reason, game = play_game(engines, names, fen, base, inc, args.max_plies, sys.stdout)
            game.headers["Result"] = result
            game.headers["Termination"] = reason
            if pgn_out:
                print(game, file=pgn_out, end="\n\n")
            for kind in problems:
                if reason.startswith(kind + ":"):
                    problems[kind] += 1
                    # A crashed engine must be restarted for the next game.
                    if kind == "crash":
                        if na in reason:
                            a = open_engine(args.engine, opts)
                        else:
                            b = open_engine(args.opponent, opts)
            if result == "1/2-1/2":
                score["d"] += 1
                tag = "draw"
            elif (result == "1-0") == actuary_white:
                score["w"] += 1
                tag = "win"
            else:
                score["l"] += 1
                tag = "loss"
            print(f"game {g + 1:>3}: actuary {'white' if actuary_white else 'black'} {result} "
                  f"({tag}, {reason}) opening {fen}", flush=True)
    finally:
        for e in (a, b):
            try:
                e.quit()
            except Exception:
                pass
    pts = score["w"] + 0.5 * score["d"]
    print(f"actuary vs {nb} at {args.tc}: +{score['w']} ={score['d']} -{score['l']} "
          f"score {pts}/{args.games} ({100 * pts / max(1, args.games):.1f}%)")
    print(f"crashes {problems['crash']} illegal moves {problems['illegal']} time losses {problems['time']}")
    sys.exit(1 if any(problems.values()) else 0)


if __name__ == "__main__":
    main()
