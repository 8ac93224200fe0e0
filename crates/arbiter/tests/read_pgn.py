"""Check a PGN file with python-chess: every game parses, replays legally from its FEN,
and its Result tag is one of the four legal values. Prints `games N`."""
import sys

import chess.pgn

n = 0
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        if game.errors:
            sys.exit(f"game {n + 1}: {game.errors}")
        board = game.board()
        for move in game.mainline_moves():
            if move not in board.legal_moves:
                sys.exit(f"game {n + 1}: illegal move {move}")
            board.push(move)
        result = game.headers["Result"]
        if result not in ("1-0", "0-1", "1/2-1/2", "*"):
            sys.exit(f"game {n + 1}: bad result {result}")
        if board.is_checkmate():
            want = "0-1" if board.turn == chess.WHITE else "1-0"
            if result != want:
                sys.exit(f"game {n + 1}: checkmate but result {result}")
        n += 1
print(f"games {n}")
