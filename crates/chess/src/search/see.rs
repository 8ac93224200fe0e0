//! Static exchange evaluation: the material outcome of the capture sequence on one square,
//! each side recapturing with its least valuable attacker and free to stop.

use crate::board::{BitBoard, Board, Color, Move, Piece, Square, is_castle, is_en_passant};
use crate::eval::pst::SEE_VALUE;
use cozy_chess::{
    get_bishop_moves, get_king_moves, get_knight_moves, get_pawn_attacks, get_rook_moves,
};

/// All pieces (both colours) attacking `sq` given occupancy `occ`.
#[inline]
pub(crate) fn attackers_to(board: &Board, sq: Square, occ: BitBoard) -> BitBoard {
    let rooks = board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    let bishops = board.pieces(Piece::Bishop) | board.pieces(Piece::Queen);
    (get_pawn_attacks(sq, Color::White) & board.colored_pieces(Color::Black, Piece::Pawn))
        | (get_pawn_attacks(sq, Color::Black) & board.colored_pieces(Color::White, Piece::Pawn))
        | (get_knight_moves(sq) & board.pieces(Piece::Knight))
        | (get_king_moves(sq) & board.pieces(Piece::King))
        | (get_rook_moves(sq, occ) & rooks)
        | (get_bishop_moves(sq, occ) & bishops)
}

/// Value of what `mv` captures (plus promotion gain), the first term of the exchange.
#[inline]
pub(crate) fn move_gain(board: &Board, mv: Move) -> i32 {
    let mut v = if is_en_passant(board, mv) {
        SEE_VALUE[0]
    } else if is_castle(board, mv) {
        0
    } else {
        board.piece_on(mv.to).map_or(0, |p| SEE_VALUE[p as usize])
    };
    if let Some(p) = mv.promotion {
        v += SEE_VALUE[p as usize] - SEE_VALUE[0];
    }
    v
}

/// Does the exchange started by `mv` win at least `threshold` centipawns?
pub fn see_ge(board: &Board, mv: Move, threshold: i32) -> bool {
    if is_castle(board, mv) {
        return 0 >= threshold;
    }
    let from = mv.from;
    let to = mv.to;
    // Balance after our capture, assuming we lose the moved piece.
    let mut balance = move_gain(board, mv) - threshold;
    if balance < 0 {
        return false;
    }
    let moved = mv
        .promotion
        .unwrap_or_else(|| board.piece_on(from).unwrap_or(Piece::Pawn));
    balance -= SEE_VALUE[moved as usize];
    if balance >= 0 {
        return true;
    }
    let mut occ = board.occupied() ^ from.bitboard() | to.bitboard();
    if is_en_passant(board, mv) {
        let cap = Square::new(to.file(), from.rank());
        occ ^= cap.bitboard();
    }
    let rooks = board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    let bishops = board.pieces(Piece::Bishop) | board.pieces(Piece::Queen);
    let mut attackers = attackers_to(board, to, occ) & occ;
    let mut stm = !board.side_to_move();
    loop {
        let ours = attackers & board.colors(stm);
        if ours.is_empty() {
            break;
        }
        // Least valuable attacker.
        let mut found = None;
        for p in Piece::ALL {
            let bb = ours & board.pieces(p);
            if let Some(sq) = bb.next_square() {
                found = Some((p, sq));
                break;
            }
        }
        let Some((piece, sq)) = found else { break };
        stm = !stm;
        balance = -balance - 1 - SEE_VALUE[piece as usize];
        if balance >= 0 {
            // Capturing with the king into a defended square is illegal: the other side wins.
            if piece == Piece::King && !(attackers & board.colors(stm)).is_empty() {
                stm = !stm;
            }
            break;
        }
        occ ^= sq.bitboard();
        // Reveal x-ray attackers behind the piece that just captured.
        if matches!(piece, Piece::Pawn | Piece::Bishop | Piece::Queen) {
            attackers |= get_bishop_moves(to, occ) & bishops;
        }
        if matches!(piece, Piece::Rook | Piece::Queen) {
            attackers |= get_rook_moves(to, occ) & rooks;
        }
        attackers &= occ;
    }
    // The side to move at the end is the one that could not (profitably) continue: it lost.
    stm != board.side_to_move()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{parse_fen, uci_to_move};

    fn see(fen: &str, mv: &str, t: i32) -> bool {
        let b = parse_fen(fen).unwrap();
        let m = uci_to_move(&b, mv).unwrap();
        see_ge(&b, m, t)
    }

    #[test]
    fn see_cases() {
        // Pawn takes undefended pawn... a rook takes a pawn defended by nothing.
        assert!(see(
            "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1",
            "e1e5",
            100
        ));
        assert!(!see(
            "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1",
            "e1e5",
            101
        ));
        // Knight takes pawn defended by a knight: loses N for P.
        let fen = "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1";
        assert!(!see(fen, "d3e5", 0));
        assert!(see(fen, "d3e5", -220));
        // Queen takes a defended pawn: bad.
        assert!(!see("4k3/8/3p4/4p3/8/8/4Q3/4K3 w - - 0 1", "e2e5", 0));
        // Pawn takes a rook defended by a pawn: +400.
        assert!(see("4k3/8/5p2/4r3/3P4/8/8/4K3 w - - 0 1", "d4e5", 400));
        assert!(!see("4k3/8/5p2/4r3/3P4/8/8/4K3 w - - 0 1", "d4e5", 401));
        // X-ray: rook behind rook wins the exchange sequence on e5 (R x P, R x R, R x R).
        assert!(see("4r1k1/8/8/4p3/8/8/4R3/4R1K1 w - - 0 1", "e2e5", 0));
        // Quiet moves: to a safe square is neutral, to a pawn-attacked square loses the piece.
        assert!(see("4k3/8/3p4/8/8/8/8/2B1K3 w - - 0 1", "c1e3", 0));
        assert!(see(
            "4k3/8/8/8/3p4/8/8/3NK3 b - - 0 1"
                .replace(" b ", " w ")
                .as_str(),
            "d1f2",
            0
        ));
        assert!(!see("4k3/8/8/8/3p4/8/8/3NK3 w - - 0 1", "d1c3", 0));
        assert!(see("4k3/8/8/8/3p4/8/8/3NK3 w - - 0 1", "d1c3", -320));
        // En passant.
        assert!(see("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6", 100));
        // Castling is neutral.
        assert!(see("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", 0));
    }
}
