//! The arbiter's rules (`arbiter::rules`) and the engine's board code (`chess::board`) are
//! written apart on purpose (an arbiter that used the engine's code would share its bugs);
//! here they must agree, on tens of thousands of positions from random playouts and random
//! sparse endings: the SAN and UCI text of every legal move, UCI parsing (both castling
//! notations), SAN parsing, and draws by insufficient material.

use arbiter::rules;
use chess::board as engine;
use cozy_chess::{Board, Color, Move, Piece};

use crate::common::book;

/// splitmix64: a seeded, reproducible stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The positions of the opening book.
fn book_positions() -> Vec<Board> {
    let path = book();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| rules::parse_position(l).unwrap())
        .collect()
}

/// Every check on one position; returns whether it is a draw by insufficient material.
fn agree(b: &Board) -> bool {
    let fen = b.to_string();
    let moves = rules::legal_moves(b);
    assert_eq!(moves, engine::legal_moves(b), "{fen}");
    for &mv in &moves {
        let san = rules::san(b, mv);
        assert_eq!(san, engine::to_san(b, mv), "SAN of {mv} in {fen}");
        assert_eq!(engine::parse_san(b, &san).ok(), Some(mv), "{san} in {fen}");
        let uci = rules::to_uci(b, mv);
        assert_eq!(uci, engine::move_to_uci(b, mv), "UCI of {mv} in {fen}");
        assert_eq!(rules::from_uci(b, &uci).ok(), Some(mv), "{uci} in {fen}");
        assert_eq!(
            engine::uci_to_move(b, &uci).ok(),
            Some(mv),
            "{uci} in {fen}"
        );
        // cozy-chess's own castling notation (king takes rook) is accepted by both alike.
        let raw = mv.to_string();
        assert_eq!(
            rules::from_uci(b, &raw).ok(),
            engine::uci_to_move(b, &raw).ok(),
            "{raw} in {fen}"
        );
    }
    // Castling as a king's two-square move, legal or not: both accept it or both refuse.
    for text in ["e1g1", "e1c1", "e8g8", "e8c8"] {
        assert_eq!(
            rules::from_uci(b, text).ok(),
            engine::uci_to_move(b, text).ok(),
            "{text} in {fen}"
        );
    }
    let dead = rules::insufficient_material(b);
    assert_eq!(dead, engine::insufficient_material(b), "{fen}");
    // The search's cheaper test never calls a draw that is not one.
    assert!(!engine::is_drawish_material(b) || dead, "{fen}");
    dead
}

#[test]
fn random_playouts_agree() {
    let openings = book_positions();
    let mut rng = Rng(12);
    let (mut positions, mut dead, mut castles, mut promotions) = (0, 0, 0, 0);
    for _ in 0..120 {
        let mut b = openings[rng.below(openings.len())].clone();
        let mut dead_plies = 0;
        for _ in 0..400 {
            positions += 1;
            if agree(&b) {
                dead += 1;
                dead_plies += 1;
                if dead_plies > 4 {
                    break;
                }
            }
            let moves = rules::legal_moves(&b);
            if moves.is_empty() || b.halfmove_clock() >= 100 {
                break;
            }
            // Captures, castling and promotions (to any piece) first, most of the time: games
            // reach the minor-piece endings where the rules differ in detail.
            let sharp: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|m| b.color_on(m.to).is_some() || m.promotion.is_some())
                .collect();
            let mv = if !sharp.is_empty() && rng.below(10) < 7 {
                sharp[rng.below(sharp.len())]
            } else {
                moves[rng.below(moves.len())]
            };
            castles += (b.color_on(mv.to) == Some(b.side_to_move())) as u32;
            promotions += mv.promotion.is_some() as u32;
            b.play(mv);
        }
    }
    assert!(positions > 10_000, "{positions}");
    assert!(
        dead > 20 && castles > 20 && promotions > 20,
        "{dead} {castles} {promotions}"
    );
}

/// Kings and a few minor pieces (now and then a pawn or a rook) on random squares.
fn sparse_position(rng: &mut Rng) -> Option<Board> {
    let mut grid = [None::<(Color, Piece)>; 64];
    let mut place = |rng: &mut Rng, c: Color, p: Piece| loop {
        let sq = rng.below(64);
        if grid[sq].is_none() {
            grid[sq] = Some((c, p));
            return;
        }
    };
    place(rng, Color::White, Piece::King);
    place(rng, Color::Black, Piece::King);
    for _ in 0..rng.below(5) {
        let piece = match rng.below(20) {
            0 => Piece::Pawn,
            1 => Piece::Rook,
            k if k < 12 => Piece::Bishop,
            _ => Piece::Knight,
        };
        let colour = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        place(rng, colour, piece);
    }
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match grid[rank * 8 + file] {
                None => empty += 1,
                Some((c, p)) => {
                    if empty > 0 {
                        fen.push_str(&empty.to_string());
                        empty = 0;
                    }
                    let ch: char = p.into();
                    fen.push(if c == Color::White {
                        ch.to_ascii_uppercase()
                    } else {
                        ch
                    });
                }
            }
        }
        if empty > 0 {
            fen.push_str(&empty.to_string());
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    let side = if rng.below(2) == 0 { "w" } else { "b" };
    fen.push_str(&format!(" {side} - - 0 1"));
    // Pawns on the back ranks, the side not to move in check or (cozy-chess does not check
    // this one) touching kings: not a position.
    let b = Board::from_fen(&fen, false).ok()?;
    let (w, k) = (b.king(Color::White), b.king(Color::Black));
    let apart = |x: usize, y: usize| x.abs_diff(y) > 1;
    (apart(w.file() as usize, k.file() as usize) || apart(w.rank() as usize, k.rank() as usize))
        .then_some(b)
}

#[test]
fn random_minor_piece_endings_agree() {
    let mut rng = Rng(7);
    let (mut positions, mut dead, mut multi_bishop_dead) = (0, 0, 0);
    while positions < 30_000 {
        let Some(b) = sparse_position(&mut rng) else {
            continue;
        };
        positions += 1;
        if agree(&b) {
            dead += 1;
            let bishops = |c: Color| (b.colored_pieces(c, Piece::Bishop)).len();
            if bishops(Color::White) >= 2 || bishops(Color::Black) >= 2 {
                multi_bishop_dead += 1;
            }
        }
    }
    // The cases that tell the two rules apart must have come up, not only bare kings.
    assert!(dead > 3_000, "{dead}");
    assert!(multi_bishop_dead > 100, "{multi_bishop_dead}");
}

#[test]
fn known_insufficient_material_cases() {
    for (fen, dead) in [
        ("8/8/4k3/8/8/4K3/8/8 w - - 0 1", true),
        ("8/8/4k3/8/8/3NK3/8/8 w - - 0 1", true),
        ("8/8/2b1k3/8/8/3BK3/8/8 w - - 0 1", true),
        // Two light-squared bishops (one an underpromotion) against a bare king: no mate.
        ("8/4k3/8/8/8/1B1BK3/8/8 w - - 0 1", true),
        ("8/4k3/2b5/8/8/1B1BK3/8/8 w - - 0 1", true),
        ("8/8/1b2k3/8/8/3BK3/8/8 w - - 0 1", false),
        ("8/8/4k3/8/8/2NNK3/8/8 w - - 0 1", false),
        ("8/8/2n1k3/8/8/3BK3/8/8 w - - 0 1", false),
        ("8/8/4k3/8/8/4K3/4P3/8 w - - 0 1", false),
    ] {
        let b = rules::parse_position(fen).unwrap();
        assert_eq!(rules::insufficient_material(&b), dead, "{fen}");
        assert_eq!(engine::insufficient_material(&b), dead, "{fen}");
    }
}
