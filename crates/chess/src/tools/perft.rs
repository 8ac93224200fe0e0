//! Perft: count leaf nodes of the legal move tree, the standard move generator test.

use crate::board::{Board, move_to_uci, parse_epd};

/// Number of leaf nodes at `depth` (bulk-counted at the last ply).
pub fn perft(board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut total = 0;
    if depth == 1 {
        board.generate_moves(|pm| {
            total += pm.len() as u64;
            false
        });
        return total;
    }
    board.generate_moves(|pm| {
        for mv in pm {
            let mut child = board.clone();
            child.play_unchecked(mv);
            total += perft(&child, depth - 1);
        }
        false
    });
    total
}

/// Per-root-move counts (UCI move text) and the total, like Stockfish's `go perft`.
pub fn perft_divide(board: &Board, depth: u32) -> (Vec<(String, u64)>, u64) {
    let mut lines = Vec::new();
    let mut total = 0;
    if depth == 0 {
        return (lines, 1);
    }
    for mv in crate::board::legal_moves(board) {
        let mut child = board.clone();
        child.play_unchecked(mv);
        let n = perft(&child, depth - 1);
        total += n;
        lines.push((move_to_uci(board, mv), n));
    }
    (lines, total)
}

/// One line of a perft suite check.
pub struct PerftCheck {
    pub line: usize,
    pub fen: String,
    pub depth: u32,
    pub expected: u64,
    pub got: u64,
}

/// Check every position of a perft suite (`FEN ;D1 n ;D2 n ...`) up to `max_depth`.
/// Returns all checks performed; a check failed when `got != expected`.
pub fn run_perft_suite(text: &str, max_depth: u32) -> Result<Vec<PerftCheck>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let epd = parse_epd(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        for d in 1..=max_depth {
            let Some(v) = epd.op(&format!("D{d}")) else {
                continue;
            };
            let expected: u64 = v
                .first()
                .and_then(|s| s.parse().ok())
                .ok_or(format!("line {}: bad D{d}", i + 1))?;
            let got = perft(&epd.board, d);
            out.push(PerftCheck {
                line: i + 1,
                fen: crate::board::to_fen(&epd.board),
                depth: d,
                expected,
                got,
            });
        }
    }
    Ok(out)
}
