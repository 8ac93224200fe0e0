#!/usr/bin/env python3
"""UCI session test for the actuary binary, driven by python-chess.

Usage: uci_session.py /path/to/actuary
Checks: self-play games at a fast time control (legal moves, no time losses), `stop`
during `go infinite` (bestmove arrives promptly), `isready` during search, and survival
of malformed input. Prints "ALL OK" and exits 0 on success.
"""
import subprocess
import sys
import time

import chess
import chess.engine

ENGINE = sys.argv[1]
FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print("FAIL:", msg, flush=True)


def self_play(games=2, base=1.0, inc=0.01, max_plies=120):
    """Short games at 1+0.01 against itself; clocks kept here, including pipe latency."""
    engines = [chess.engine.SimpleEngine.popen_uci(ENGINE) for _ in range(2)]
    try:
        for e in engines:
            e.configure({"Hash": 16})
        for g in range(games):
            board = chess.Board()
            clocks = [base, base]
            for ply in range(max_plies):
                if board.is_game_over(claim_draw=True):
                    break
                side = 0 if board.turn == chess.WHITE else 1
                eng = engines[(side + g) % 2]
                limit = chess.engine.Limit(white_clock=clocks[0], black_clock=clocks[1],
                                           white_inc=inc, black_inc=inc)
                t0 = time.monotonic()
                res = eng.play(board, limit)
                spent = time.monotonic() - t0
                clocks[side] -= spent
                check(clocks[side] > 0, f"game {g} ply {ply}: time loss ({clocks[side]:.3f}s left)")
                clocks[side] += inc
                check(res.move is not None and res.move in board.legal_moves,
                      f"game {g} ply {ply}: illegal move {res.move} in {board.fen()}")
                if res.move is None or res.move not in board.legal_moves:
                    break
                board.push(res.move)
            print(f"game {g}: {board.result(claim_draw=True)} after {board.ply()} plies, "
                  f"clocks {clocks[0]:.2f}/{clocks[1]:.2f}", flush=True)
    finally:
        for e in engines:
            e.quit()


class Raw:
    """Plain pipe to the engine for protocol-level checks. A reader thread feeds a queue,
    so buffered output can never hide a line from a timed wait."""

    def __init__(self):
        import queue
        import threading
        self.p = subprocess.Popen([ENGINE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.q = queue.Queue()

        def pump():
            for line in self.p.stdout:
                self.q.put(line.strip())
            self.q.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def expect(self, prefix, timeout=5.0):
        """Read lines until one starts with prefix; return (line, all lines seen)."""
        import queue
        seen = []
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            seen.append(line)
            if line.startswith(prefix):
                return line, seen
        return None, seen

    def close(self):
        try:
            self.send("quit")
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()


def protocol_checks():
    r = Raw()
    try:
        r.send("uci")
        line, seen = r.expect("uciok")
        check(line is not None, "no uciok")
        check(any(l == "id name actuary" for l in seen), "missing 'id name actuary'")
        for opt in ("Hash", "Threads", "MultiPV", "Move Overhead"):
            check(any(l.startswith(f"option name {opt} ") for l in seen), f"missing option {opt}")

        # Malformed input: every line is answered with an error, engine stays alive.
        for junk in ["hello", "position fen not a fen", "position startpos moves e2e5",
                     "go depth banana", "setoption name Hash value -3", "position", "go wtime",
                     "\x00\x01\x02", "position startpos moves e2e4 e7e5 e1e8"]:
            r.send(junk)
            line, _ = r.expect("info string error", timeout=2)
            check(line is not None, f"no error reported for {junk!r}")
        r.send("isready")
        line, _ = r.expect("readyok")
        check(line is not None, "engine dead after malformed input")

        # Search after errors works and gives a legal move.
        r.send("position startpos moves e2e4")
        r.send("go depth 6")
        line, seen = r.expect("bestmove", timeout=20)
        check(line is not None, "no bestmove for go depth 6")
        if line:
            mv = chess.Move.from_uci(line.split()[1])
            b = chess.Board()
            b.push_uci("e2e4")
            check(mv in b.legal_moves, f"illegal bestmove {line}")
            check(any(" pv " in l and " score " in l and " nps " in l for l in seen), "no info lines")

        # stop during go infinite; isready answered while searching.
        r.send("position startpos")
        r.send("go infinite")
        time.sleep(0.5)
        r.send("isready")
        line, seen = r.expect("readyok", timeout=2)
        check(line is not None, "isready not answered during search")
        check(not any(l.startswith("bestmove") for l in seen), "bestmove before stop in infinite mode")
        t0 = time.monotonic()
        r.send("stop")
        line, _ = r.expect("bestmove", timeout=2)
        check(line is not None, "no bestmove after stop")
        check(time.monotonic() - t0 < 1.0, "stop took too long")

        # go perft
        r.send("position startpos")
        r.send("go perft 3")
        line, _ = r.expect("Nodes searched", timeout=10)
        check(line == "Nodes searched: 8902", f"perft 3 wrong: {line}")

        # sd / sn console commands
        r.send("sn 5000")
        r.send("go")
        line, _ = r.expect("bestmove", timeout=10)
        check(line is not None, "sn 5000 + go gave no bestmove")
        r.send("sn 0")
        r.send("isready")
        check(r.expect("readyok")[0] is not None, "dead after sn")
    finally:
        r.close()
    check(r.p.returncode == 0, f"engine exit code {r.p.returncode}")


def main():
    protocol_checks()
    self_play()
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        sys.exit(1)
    print("ALL OK")


if __name__ == "__main__":
    main()
