//! Perft: count leaf nodes of the legal move tree, the standard move generator test.

use crate::board::{Board, BoardError, move_to_uci_with, parse_epd_with};

/// A perft suite line that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PerftSuiteError {
    #[error("line {line}")]
    Epd {
        line: usize,
        #[source]
        source: BoardError,
    },
    #[error("line {line}: bad D{depth} (expected a node count)")]
    Count { line: usize, depth: u32 },
}

/// Number of leaf nodes at `depth` (bulk-counted at the last ply).
pub(crate) fn perft(board: &Board, depth: u32) -> u64 {
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

/// [`perft`] that gives up (`None`) once `stop` is set: checked at every node with at least
/// two plies below it, a relaxed load per thousands of leaves.
fn perft_stoppable(board: &Board, depth: u32, stop: &std::sync::atomic::AtomicBool) -> Option<u64> {
    if depth <= 2 {
        return Some(perft(board, depth));
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let mut total = Some(0u64);
    board.generate_moves(|pm| {
        for mv in pm {
            let mut child = board.clone();
            child.play_unchecked(mv);
            match (total, perft_stoppable(&child, depth - 1, stop)) {
                (Some(t), Some(n)) => total = Some(t + n),
                _ => {
                    total = None;
                    return true;
                }
            }
        }
        false
    });
    total
}

/// [`perft_divide_with`] for `go perft`: `None` if `stop` was set before it finished.
pub(crate) fn perft_divide_stoppable(
    board: &Board,
    depth: u32,
    chess960: bool,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<(Vec<(String, u64)>, u64)> {
    let mut lines = Vec::new();
    let mut total = 0;
    if depth == 0 {
        return Some((lines, 1));
    }
    for mv in crate::board::legal_moves(board) {
        let mut child = board.clone();
        child.play_unchecked(mv);
        let n = perft_stoppable(&child, depth - 1, stop)?;
        total += n;
        lines.push((move_to_uci_with(board, mv, chess960), n));
    }
    Some((lines, total))
}

/// Per-root-move counts (UCI move text) and the total, like Stockfish's `go perft`; castling
/// written king-takes-rook when `chess960`.
pub fn perft_divide_with(board: &Board, depth: u32, chess960: bool) -> (Vec<(String, u64)>, u64) {
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
        lines.push((move_to_uci_with(board, mv, chess960), n));
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
/// Returns all checks performed; a check failed when `got != expected`. The first line that
/// cannot be read is an error (see [`run_perft_suite_lenient`] to go on past it).
pub fn run_perft_suite(text: &str, max_depth: u32) -> Result<Vec<PerftCheck>, PerftSuiteError> {
    let (checks, mut bad) = run_perft_suite_lenient(text, max_depth);
    match bad.is_empty() {
        true => Ok(checks),
        false => Err(bad.remove(0)),
    }
}

/// [`run_perft_suite`], going on past lines that cannot be read: the checks of every good
/// line, and each bad line's error (one bad line does not hide the rest of the suite).
pub fn run_perft_suite_lenient(
    text: &str,
    max_depth: u32,
) -> (Vec<PerftCheck>, Vec<PerftSuiteError>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match check_line(line, i + 1, max_depth) {
            Ok(checks) => out.extend(checks),
            Err(e) => bad.push(e),
        }
    }
    (out, bad)
}

/// The checks of one suite line (line number `line`).
fn check_line(text: &str, line: usize, max_depth: u32) -> Result<Vec<PerftCheck>, PerftSuiteError> {
    // Chess960 castling fields read too (a standard position reads the same).
    let epd = parse_epd_with(text, true).map_err(|source| PerftSuiteError::Epd { line, source })?;
    let mut out = Vec::new();
    for d in 1..=max_depth {
        let Some(v) = epd.op(&format!("D{d}")) else {
            continue;
        };
        let expected: u64 = v
            .first()
            .and_then(|s| s.parse().ok())
            .ok_or(PerftSuiteError::Count { line, depth: d })?;
        out.push(PerftCheck {
            line,
            fen: crate::board::to_fen(&epd.board),
            depth: d,
            expected,
            got: perft(&epd.board, d),
        });
    }
    Ok(out)
}
