//! Move-ordering memory: butterfly history, continuation history (1 and 2 plies back),
//! capture history, killers and counter moves. All tables are flat `Vec`s so that a
//! worker thread's stack stays small and nothing is allocated after construction.

use super::params::{HISTORY_MAX, MAX_PLY};
use crate::board::{Color, Move, NULL_MOVE, Piece};

/// Index of a (coloured piece, destination) pair, 0..768; used for continuation history.
pub type PieceTo = usize;
pub const NO_PIECE_TO: PieceTo = usize::MAX;

#[inline]
pub fn piece_to(color: Color, piece: Piece, to: usize) -> PieceTo {
    ((color as usize) * 6 + piece as usize) * 64 + to
}

pub struct History {
    butterfly: Vec<i16>,
    cont: Vec<i16>,
    capture: Vec<i16>,
    counter: Vec<Move>,
    pub killers: Vec<[Move; 2]>,
    /// Static-evaluation correction by pawn structure, per side to move, in 1/`CORR_GRAIN`
    /// centipawns (switch `corr`): what searches of positions with these pawns found the
    /// evaluation to miss, as a running average.
    corr: Vec<i32>,
    /// The same by each side's pieces other than pawns (switch `corr-all`): side to move ×
    /// whose pieces × key. The pawn table cannot see an evaluation error that follows the
    /// pieces (a bad bishop, a misjudged exchange imbalance); these can.
    corr_non_pawn: Vec<i32>,
    /// The same by the last two moves (switch `corr-all`): (piece, to) two plies back ×
    /// (piece, to) one ply back, `CORR_CONT_SIZE` entries. An error that follows a line of
    /// play rather than a structure (a recapture the evaluation does not see coming) is
    /// caught here.
    corr_cont: Vec<i32>,
}

/// What the correction tables are indexed by, computed once per node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CorrKeys {
    /// [`crate::eval::pawns::pawn_key`].
    pub pawn: u64,
    /// Each side's pieces other than pawns, [`non_pawn_key`] (zero when unused).
    pub non_pawn: [u64; 2],
    /// (piece, to) of the moves one and two plies back ([`NO_PIECE_TO`] after a null move or
    /// at the root).
    pub cont: [PieceTo; 2],
}

/// A key of `color`'s knights, bishops, rooks, queens and king (the squares of each kind),
/// for the non-pawn correction tables. Each bitboard times its own odd constant (a bijection),
/// the products xored and mixed once: a fifth of the cost of mixing each bitboard (five mixes a
/// side cost 4 % of the search's speed), and the table is indexed by the mix's high bits.
#[inline]
pub fn non_pawn_key(board: &crate::board::Board, color: Color) -> u64 {
    const ODD: [u64; 5] = [
        0x9E37_79B9_7F4A_7C15,
        0xBF58_476D_1CE4_E5B9,
        0x94D0_49BB_1331_11EB,
        0xD6E8_FEB8_6659_FD93,
        0xC2B2_AE3D_27D4_EB4F,
    ];
    let pieces = [
        Piece::Knight,
        Piece::Bishop,
        Piece::Rook,
        Piece::Queen,
        Piece::King,
    ];
    let mut k = color as u64;
    for (p, m) in pieces.into_iter().zip(ODD) {
        k ^= board.colored_pieces(color, p).0.wrapping_mul(m);
    }
    crate::board::mix64(k)
}

/// Entries of the correction table per side (a power of two: indexed by the key's high
/// bits).
pub const CORR_SIZE: usize = 16_384;
/// Fixed-point scale of the correction entries.
pub const CORR_GRAIN: i32 = 256;
/// Largest correction, centipawns.
pub const CORR_LIMIT: i32 = 128;
/// Weights of the corrections in `corr-all`, in eighths: the pawn table, each side's
/// non-pawn table, the table of the last two moves (four tables, a quarter each). Each table
/// learns the whole error on its own, so the weights sum to one: where every table has seen
/// the position the correction is the error, not a multiple of it; where one has not (new
/// pawns, a null move just played) the others still give their share.
pub const CORR_WEIGHTS: [i32; 3] = [2, 2, 2];
/// Entries of the table of the last two moves: the move two plies back is the side to
/// move's own, (piece, to) with its colour (768), the last one the opponent's, without it (384).
const CORR_CONT_SIZE: usize = 768 * 384;

impl Default for History {
    fn default() -> Self {
        Self {
            butterfly: vec![0; 2 * 64 * 64],
            cont: vec![0; 768 * 768],
            capture: vec![0; 768 * 6],
            counter: vec![NULL_MOVE; 768],
            killers: vec![[NULL_MOVE; 2]; MAX_PLY + 4],
            corr: vec![0; 2 * CORR_SIZE],
            // Empty until a search with `corr-all` asks for them
            // ([`History::prepare_correction_all`]): zeroing them at every clear cost the
            // engine 2.6 % of its speed in `bench` with the switch off.
            corr_non_pawn: Vec::new(),
            corr_cont: Vec::new(),
        }
    }
}

/// History gravity: entries saturate smoothly at ±HISTORY_MAX instead of overflowing.
#[inline]
fn gravity(entry: &mut i16, bonus: i32) {
    let e = *entry as i32;
    let b = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    *entry = (e + b - e * b.abs() / HISTORY_MAX) as i16;
}

impl History {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Allocate the tables of `corr-all` if they are not there yet; a search with the switch
    /// on calls this before its first node ([`History::correction`] with `all` needs them).
    pub fn prepare_correction_all(&mut self) {
        if self.corr_cont.is_empty() {
            self.corr_non_pawn = vec![0; 2 * 2 * CORR_SIZE];
            self.corr_cont = vec![0; CORR_CONT_SIZE];
        }
    }

    #[inline]
    fn corr_index(color: Color, pawn_key: u64) -> usize {
        // High bits: the pawn table's key has its lowest bit always set.
        (color as usize) * CORR_SIZE + ((pawn_key >> 32) as usize & (CORR_SIZE - 1))
    }

    #[inline]
    fn non_pawn_index(stm: Color, side: usize, key: u64) -> usize {
        ((stm as usize) * 2 + side) * CORR_SIZE + ((key >> 32) as usize & (CORR_SIZE - 1))
    }

    #[inline]
    fn cont_corr_index(cont: [PieceTo; 2]) -> Option<usize> {
        // cont[1] carries the side to move's colour, so the opponent's colour in cont[0] is
        // implied and dropped: half the table of a plain 768 × 768.
        (cont[0] != NO_PIECE_TO && cont[1] != NO_PIECE_TO).then(|| cont[1] * 384 + cont[0] % 384)
    }

    /// The correction for a position with these keys, `color` to move, centipawns: the
    /// pawn table alone, or (`all`) the tables' sum weighted by [`CORR_WEIGHTS`].
    #[inline]
    pub fn correction(&self, color: Color, keys: &CorrKeys, all: bool) -> i32 {
        let pawn = self.corr[Self::corr_index(color, keys.pawn)];
        if !all {
            return pawn / CORR_GRAIN;
        }
        let [wp, wn, wc] = CORR_WEIGHTS;
        let mut sum = pawn as i64 * wp as i64;
        for side in 0..2 {
            let np = self.corr_non_pawn[Self::non_pawn_index(color, side, keys.non_pawn[side])];
            sum += np as i64 * wn as i64;
        }
        if let Some(i) = Self::cont_corr_index(keys.cont) {
            sum += self.corr_cont[i] as i64 * wc as i64;
        }
        (sum / (8 * CORR_GRAIN as i64)) as i32
    }

    /// Move the correction toward `diff` (search result − raw evaluation, centipawns), by a
    /// weight that grows with the depth that found it; with `all`, every table learns it.
    #[inline]
    pub fn update_correction(
        &mut self,
        color: Color,
        keys: &CorrKeys,
        all: bool,
        depth: i32,
        diff: i32,
    ) {
        let target = diff.clamp(-CORR_LIMIT, CORR_LIMIT) * CORR_GRAIN;
        let w = (depth + 1).clamp(1, 16);
        let learn = |e: &mut i32| *e = (*e * (256 - w) + target * w) / 256;
        learn(&mut self.corr[Self::corr_index(color, keys.pawn)]);
        if !all {
            return;
        }
        for side in 0..2 {
            learn(&mut self.corr_non_pawn[Self::non_pawn_index(color, side, keys.non_pawn[side])]);
        }
        if let Some(i) = Self::cont_corr_index(keys.cont) {
            learn(&mut self.corr_cont[i]);
        }
    }

    #[inline]
    fn bf_index(color: Color, mv: Move) -> usize {
        (color as usize) * 4096 + (mv.from as usize) * 64 + mv.to as usize
    }

    /// Combined quiet-move score: butterfly + continuation histories.
    #[inline]
    pub fn quiet_score(&self, color: Color, mv: Move, pt: PieceTo, cont: [PieceTo; 2]) -> i32 {
        let mut s = self.butterfly[Self::bf_index(color, mv)] as i32;
        for c in cont {
            if c != NO_PIECE_TO {
                s += self.cont[c * 768 + pt] as i32;
            }
        }
        s
    }

    #[inline]
    pub fn capture_score(&self, pt: PieceTo, victim: Piece) -> i32 {
        self.capture[pt * 6 + victim as usize] as i32
    }

    #[inline]
    pub fn counter(&self, prev: PieceTo) -> Move {
        if prev == NO_PIECE_TO {
            NULL_MOVE
        } else {
            self.counter[prev]
        }
    }

    #[inline]
    pub fn update_quiet(
        &mut self,
        color: Color,
        mv: Move,
        pt: PieceTo,
        cont: [PieceTo; 2],
        bonus: i32,
    ) {
        gravity(&mut self.butterfly[Self::bf_index(color, mv)], bonus);
        for c in cont {
            if c != NO_PIECE_TO {
                gravity(&mut self.cont[c * 768 + pt], bonus);
            }
        }
    }

    #[inline]
    pub fn update_capture(&mut self, pt: PieceTo, victim: Piece, bonus: i32) {
        gravity(&mut self.capture[pt * 6 + victim as usize], bonus);
    }

    #[inline]
    pub fn set_killer(&mut self, ply: usize, mv: Move) {
        let k = &mut self.killers[ply];
        if k[0] != mv {
            k[1] = k[0];
            k[0] = mv;
        }
    }

    #[inline]
    pub fn set_counter(&mut self, prev: PieceTo, mv: Move) {
        if prev != NO_PIECE_TO {
            self.counter[prev] = mv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trains every table of `keys` toward `diff` until the running averages settle.
    fn train(h: &mut History, keys: &CorrKeys, all: bool, diff: i32) {
        for _ in 0..400 {
            h.update_correction(Color::White, keys, all, 15, diff);
        }
    }

    const A: CorrKeys = CorrKeys {
        pawn: 0x1234_5678_0000_0001,
        non_pawn: [0x0bad_cafe_0000_0000, 0x0dea_dbee_0000_0000],
        cont: [400, 12],
    };

    #[test]
    fn the_pawn_table_alone_learns_the_error_and_nothing_else() {
        let mut h = History::default();
        h.prepare_correction_all();
        train(&mut h, &A, false, 100);
        // The running average settles within a centipawn of the error (integer steps).
        assert!((99..=100).contains(&h.correction(Color::White, &A, false)));
        // The other tables were not touched: in `all` mode only the pawn share (2/8) shows.
        assert!((24..=25).contains(&h.correction(Color::White, &A, true)));
        // The other side to move has its own table.
        assert_eq!(h.correction(Color::Black, &A, false), 0);
    }

    #[test]
    fn with_all_tables_each_part_of_the_key_carries_its_weight() {
        let mut h = History::default();
        h.prepare_correction_all();
        train(&mut h, &A, true, 100);
        // Every table near 100 cp: the weights sum to one.
        assert!((99..=100).contains(&h.correction(Color::White, &A, true)));
        // New pawns: the pieces' and the moves' shares, 3 × 2/8.
        let other_pawns = CorrKeys {
            pawn: 0x7777_0000_0000_0001,
            ..A
        };
        assert!((74..=75).contains(&h.correction(Color::White, &other_pawns, true)));
        // Same pieces, new pawns and no known moves (after a null move): 2 × 2/8.
        let pieces_only = CorrKeys {
            pawn: 0x7777_0000_0000_0001,
            cont: [NO_PIECE_TO, 12],
            ..A
        };
        assert!((49..=50).contains(&h.correction(Color::White, &pieces_only, true)));
        // Only the moves in common: 2/8.
        let moves_only = CorrKeys {
            pawn: 0x7777_0000_0000_0001,
            non_pawn: [0x1111_0000_0000_0000, 0x2222_0000_0000_0000],
            cont: [400, 12],
        };
        assert!((24..=25).contains(&h.correction(Color::White, &moves_only, true)));
        // The pawn-only reading of the same table is the pawn table's value.
        assert!((99..=100).contains(&h.correction(Color::White, &A, false)));
    }

    #[test]
    fn the_tables_of_corr_all_exist_only_for_searches_that_use_them() {
        let mut h = History::default();
        assert!(h.corr_non_pawn.is_empty() && h.corr_cont.is_empty());
        h.prepare_correction_all();
        train(&mut h, &A, true, 100);
        // A second search of the same game keeps what the first learned...
        h.prepare_correction_all();
        assert!((99..=100).contains(&h.correction(Color::White, &A, true)));
        // ...a new game forgets it, and the next search starts from zero.
        h.clear();
        assert!(h.corr_cont.is_empty());
        h.prepare_correction_all();
        assert_eq!(h.correction(Color::White, &A, true), 0);
    }

    #[test]
    fn every_pair_of_last_two_moves_has_its_own_entry() {
        // Two plies back: the side to move's (piece, to); one ply back: the opponent's.
        let mut seen = vec![false; CORR_CONT_SIZE];
        for stm in [Color::White, Color::Black] {
            let own = (stm as usize) * 384..(stm as usize) * 384 + 384;
            let theirs = (!stm as usize) * 384..(!stm as usize) * 384 + 384;
            for two_back in own {
                for one_back in theirs.clone() {
                    let i = History::cont_corr_index([one_back, two_back]).unwrap();
                    assert!(!seen[i], "{two_back}, {one_back} share entry {i}");
                    seen[i] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn errors_beyond_the_limit_are_clamped() {
        let mut h = History::default();
        train(&mut h, &A, false, -10_000);
        let c = h.correction(Color::White, &A, false);
        assert!((-CORR_LIMIT..=-CORR_LIMIT + 1).contains(&c), "{c}");
    }

    #[test]
    fn the_non_pawn_key_sees_each_piece_and_ignores_pawns() {
        let start =
            crate::board::parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
                .unwrap();
        let pawn_moved =
            crate::board::parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
                .unwrap();
        let knight_moved =
            crate::board::parse_fen("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1")
                .unwrap();
        let w = |b| non_pawn_key(b, Color::White);
        assert_eq!(w(&start), w(&pawn_moved));
        assert_ne!(w(&start), w(&knight_moved));
        assert_eq!(
            non_pawn_key(&start, Color::Black),
            non_pawn_key(&knight_moved, Color::Black)
        );
        assert_ne!(
            non_pawn_key(&start, Color::White),
            non_pawn_key(&start, Color::Black)
        );
    }
}
