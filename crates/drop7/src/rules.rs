//! One move of Hardcore Drop7: drop, waves, gray damage, reveals, gravity, rise, scoring,
//! game over (docs/design/drop7-SPEC.md §2, §4, §5). Hot path: no allocation, word arithmetic per column.
// Grid code reads best with explicit (row, column) indices.
#![allow(clippy::needless_range_loop)]

use crate::board::{Board, FILL, NIBBLE_ONES, SIZE, column_height};
use crate::rng::Mulberry32;

/// Points for a board clear (checked after the placement cascade and after a rise cascade).
pub const CLEAR_BONUS: u32 = 70_000;
/// Points for a successful row rise.
pub const RISE_BONUS: u32 = 17_000;
/// Drops between rises.
pub const MOVES_PER_LEVEL: u8 = 5;
/// Research move cap: a game reaching it is censored.
pub const MOVE_CAP: u32 = 2_000;

/// Points per popped disc at chain depth d (index d), `floor(7·d^2.5)` as the reference
/// computes it in double precision (docs/design/drop7-SPEC.md §4 table). Depth 0 is unused.
pub const CHAIN_POINTS: [u32; 31] = [
    0, 7, 39, 109, 224, 391, 617, 907, 1267, 1701, 2213, 2809, 3491, 4265, 5133, 6099, 7168, 8341,
    9622, 11014, 12521, 14146, 15891, 17758, 19752, 21875, 24128, 26515, 29039, 31702, 34506,
];

/// Points per disc at any depth (the table, then the same formula beyond depth 30, which no
/// recorded game reaches).
#[inline]
pub fn chain_points(depth: u32) -> u32 {
    match CHAIN_POINTS.get(depth as usize) {
        Some(&p) => p,
        None => (7.0 * (depth as f64).powf(2.5)).floor() as u32,
    }
}

/// Where reveal values come from: the per-move Mulberry32 stream in headless games, the
/// stratified sampler inside the search, a fixed script in tests.
pub trait RevealSource {
    /// The value (1..=7) of the next revealed gray, in the order they are revealed.
    fn reveal(&mut self) -> u8;
}

impl RevealSource for Mulberry32 {
    #[inline]
    fn reveal(&mut self) -> u8 {
        self.next_disc()
    }
}

/// One chain step, as the reference trace prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wave {
    pub depth: u32,
    /// Numbered discs popped.
    pub cleared: u32,
    /// Gray cells turned into numbers.
    pub revealed: u32,
    pub points: u32,
}

/// Receives the details of a move as it is resolved. `()` ignores them (the fast path).
pub trait MoveObserver {
    #[inline]
    fn wave(&mut self, _wave: Wave) {}
    #[inline]
    fn revealed_value(&mut self, _value: u8) {}
}

impl MoveObserver for () {}

/// The totals of one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveOutcome {
    pub score_delta: u32,
    /// Moves until the next rise after this move: 1..=5 while live, 5 after a rise, 0 after
    /// a blocked rise.
    pub moves_remaining: u8,
    pub game_over: bool,
    pub cleared_board: bool,
    pub level_advanced: bool,
    /// Waves in the placement cascade, and in all (placement + rise).
    pub placement_waves: u32,
    pub waves: u32,
    /// Numbered discs popped and grays revealed over the whole move.
    pub cleared: u32,
    pub revealed: u32,
}

/// Why a move could not be played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveError {
    ColumnOutOfRange(usize),
    ColumnFull(usize),
    BadDisc(u8),
    BadRise(u8),
}

impl std::fmt::Display for MoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MoveError::ColumnOutOfRange(c) => write!(f, "illegal column {c}: columns are 0-6"),
            MoveError::ColumnFull(c) => write!(f, "illegal column {c}: the column is full"),
            MoveError::BadDisc(d) => write!(f, "bad disc {d}: discs are 1-7"),
            MoveError::BadRise(r) => write!(f, "bad rise {r}: moves until the rise is 1-5"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Play `disc` into `column` with `moves_remaining` (1..=5) moves until the rise.
///
/// Order (docs/design/drop7-SPEC.md §5): place; placement cascade from depth 1; +70,000 if the board is empty;
/// count down; on reaching 0 either game over (top row occupied; no bonus) or rise (+17,000,
/// a fresh solid row, cascade continuing the chain depth, +70,000 if empty); finally game
/// over if no column is legal.
#[inline]
pub fn play_move<R: RevealSource, O: MoveObserver>(
    board: &mut Board,
    column: usize,
    disc: u8,
    moves_remaining: u8,
    reveals: &mut R,
    observer: &mut O,
) -> Result<MoveOutcome, MoveError> {
    if column >= SIZE {
        return Err(MoveError::ColumnOutOfRange(column));
    }
    if !(1..=7).contains(&disc) {
        return Err(MoveError::BadDisc(disc));
    }
    if !(1..=MOVES_PER_LEVEL).contains(&moves_remaining) {
        return Err(MoveError::BadRise(moves_remaining));
    }
    if !board.is_legal(column) {
        return Err(MoveError::ColumnFull(column));
    }
    let w = board.cols[column];
    board.cols[column] = w | (disc as u32) << (4 * column_height(w));

    let mut out = MoveOutcome::default();
    let mut depth = 1u32;
    out.score_delta = resolve(board, &mut depth, reveals, observer, &mut out);
    out.placement_waves = out.waves;
    if board.is_empty() {
        out.score_delta += CLEAR_BONUS;
        out.cleared_board = true;
    }
    let mut mr = moves_remaining - 1;
    if mr == 0 {
        if board.top_row_occupied() {
            out.game_over = true;
        } else {
            for w in board.cols.iter_mut() {
                *w = (*w << 4) | crate::board::SOLID as u32;
            }
            out.score_delta += RISE_BONUS;
            out.level_advanced = true;
            mr = MOVES_PER_LEVEL;
            out.score_delta += resolve(board, &mut depth, reveals, observer, &mut out);
            if board.is_empty() {
                out.score_delta += CLEAR_BONUS;
                out.cleared_board = true;
            }
        }
    }
    if !out.game_over && board.legal_mask() == 0 {
        out.game_over = true;
    }
    out.moves_remaining = mr;
    Ok(out)
}

/// `nonzero_nibbles(x)`: bit 4k set iff nibble k of `x` is non-zero.
#[inline(always)]
fn nonzero_nibbles(x: u32) -> u32 {
    (x | x >> 1 | x >> 2 | x >> 3) & NIBBLE_ONES
}

/// Bit 3 of each of the seven nibbles.
const HIGH_BITS: u32 = NIBBLE_ONES << 3;

/// `nonzero_nibbles_high(x)`: bit 4k + 3 set iff nibble k of `x` (k < 7) is non-zero. Four
/// operations where [`nonzero_nibbles`] takes seven: the low three bits of a nibble plus 7
/// carry into its bit 3 exactly when one of them is set, and never into the next nibble.
#[inline(always)]
fn nonzero_nibbles_high(x: u32) -> u32 {
    (((x & 0x0777_7777) + 0x0777_7777) | x) & HIGH_BITS
}

/// The sum of the seven nibbles of `x`, each at most 7 (the pops of one elevation over the
/// seven columns). Why not `count_ones` on each column: without a target CPU the build has no
/// popcount instruction, and seven software popcounts cost more than the whole pass's test.
#[inline(always)]
fn nibble_sum(x: u32) -> u32 {
    // bytes ≤ 14, their sum ≤ 56: no carry leaves a byte
    let bytes = (x & 0x0F0F_0F0F) + ((x >> 4) & 0x0F0F_0F0F);
    bytes.wrapping_mul(0x0101_0101) >> 24
}

/// Stable compaction of a column's non-zero nibbles towards the bottom (gravity).
#[inline]
fn compact(mut w: u32) -> u32 {
    let mut out = 0u32;
    let mut shift = 0;
    while w != 0 {
        let nib = w & 0xF;
        if nib != 0 {
            out |= nib << shift;
            shift += 4;
        }
        w >>= 4;
    }
    out
}

/// Resolve waves until nothing pops; returns the chain points. `depth` is the depth of the
/// next wave and is left one past the last wave, so a rise cascade continues the chain.
#[inline]
fn resolve<R: RevealSource, O: MoveObserver>(
    board: &mut Board,
    depth: &mut u32,
    reveals: &mut R,
    observer: &mut O,
    out: &mut MoveOutcome,
) -> u32 {
    let mut points = 0u32;
    loop {
        let w = board.cols;
        let mut h = [0u32; SIZE];
        let mut fill = [0u32; SIZE];
        for c in 0..SIZE {
            h[c] = column_height(w[c]);
            fill[c] = FILL[h[c] as usize];
        }
        // Row runs: nibble e of left[c] = length of the occupied run ending at column c in
        // elevation e, counted from the left; right[c] likewise from the right.
        let mut left = [0u32; SIZE];
        let mut right = [0u32; SIZE];
        let mut acc = 0u32;
        for c in 0..SIZE {
            acc = (acc + NIBBLE_ONES) & fill[c];
            left[c] = acc;
        }
        acc = 0;
        for c in (0..SIZE).rev() {
            acc = (acc + NIBBLE_ONES) & fill[c];
            right[c] = acc;
        }
        let mut pop = [0u32; SIZE];
        let mut any = 0u32;
        for c in 0..SIZE {
            let occ = fill[c] & NIBBLE_ONES;
            let run = left[c] + right[c] - occ;
            // a disc pops when its value equals its row run or its column's height: flagged
            // in bit 3 of its nibble, then moved to bit 0
            let miss = nonzero_nibbles_high(run ^ w[c])
                & nonzero_nibbles_high(w[c] ^ (h[c] * NIBBLE_ONES));
            pop[c] = ((fill[c] & HIGH_BITS) & !miss) >> 3;
            any |= pop[c];
        }
        if any == 0 {
            return points;
        }
        let mut gray_hit = 0u32;
        let mut hits = [0u32; SIZE];
        let mut pops_by_elevation = 0u32;
        for c in 0..SIZE {
            pops_by_elevation += pop[c];
            let gray = (w[c] >> 3) & NIBBLE_ONES & fill[c];
            let mut k = (pop[c] << 4) + (pop[c] >> 4);
            if c > 0 {
                k += pop[c - 1];
            }
            if c + 1 < SIZE {
                k += pop[c + 1];
            }
            hits[c] = k & (gray * 0xF);
            gray_hit |= hits[c];
        }
        let cleared = nibble_sum(pops_by_elevation);
        let mut revealed = 0u32;
        let mut cols = w;
        if gray_hit != 0 {
            // Row-major from the top: elevation 6 down to 0, columns left to right. Only
            // the elevations some column is hit at are visited (bit 4e of `rows`): a wave
            // hits one or two rows, not seven.
            let mut rows = nonzero_nibbles(gray_hit);
            while rows != 0 {
                let shift = 31 - rows.leading_zeros();
                rows &= !(1 << shift);
                for c in 0..SIZE {
                    let k = (hits[c] >> shift) & 0xF;
                    if k == 0 {
                        continue;
                    }
                    let cell = (cols[c] >> shift) & 0xF;
                    if cell == crate::board::SOLID as u32 && k == 1 {
                        cols[c] += 1 << shift; // 8 → 9
                    } else {
                        let v = reveals.reveal();
                        observer.revealed_value(v);
                        cols[c] = (cols[c] & !(0xF << shift)) | (v as u32) << shift;
                        revealed += 1;
                    }
                }
            }
        }
        for c in 0..SIZE {
            if pop[c] != 0 {
                cols[c] = compact(cols[c] & !(pop[c] * 0xF));
            }
        }
        board.cols = cols;
        let wave_points = cleared * chain_points(*depth);
        observer.wave(Wave {
            depth: *depth,
            cleared,
            revealed,
            points: wave_points,
        });
        points += wave_points;
        out.waves += 1;
        out.cleared += cleared;
        out.revealed += revealed;
        *depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<u8>);
    impl RevealSource for Fixed {
        fn reveal(&mut self) -> u8 {
            self.0.remove(0)
        }
    }

    fn play(board: &str, column: usize, disc: u8, rise: u8) -> (Board, MoveOutcome) {
        let mut b = Board::parse(board).unwrap();
        let out = play_move(&mut b, column, disc, rise, &mut Fixed(vec![4; 64]), &mut ()).unwrap();
        (b, out)
    }

    #[test]
    fn initial_drop_one_cracks() {
        let (b, out) = play(crate::board::START_BOARD, 0, 1, 5);
        assert_eq!(out.score_delta, 7);
        assert_eq!(
            b.to_string(),
            "0000000000000000000000000000000000000000009888888"
        );
        assert_eq!(out.moves_remaining, 4);
    }

    #[test]
    fn level_up_chain_17046() {
        // a 3 at (row 5, col 0) on a full solid bottom row, rise pending, drop 1 in column 6
        let mut s = "0".repeat(35);
        s.push_str("3000000");
        s.push_str("8888888");
        let (_, out) = play(&s, 6, 1, 1);
        assert_eq!(out.score_delta, 17_046);
        assert!(out.level_advanced);
        assert_eq!((out.placement_waves, out.waves), (1, 2));
    }

    #[test]
    fn nibble_sum_adds_every_nibble() {
        let mut rng = crate::rng::Mulberry32::new(7);
        for _ in 0..100_000 {
            let x = rng.next_u32();
            // seven nibbles, each 0-7 (what seven columns' pops at one elevation can sum to)
            let v = x & 0x0777_7777;
            let want: u32 = (0..7).map(|k| (v >> (4 * k)) & 0xF).sum();
            assert_eq!(nibble_sum(v), want, "{v:#x}");
        }
        assert_eq!(nibble_sum(0x0777_7777), 49);
        assert_eq!(nibble_sum(0), 0);
    }

    #[test]
    fn nonzero_nibbles_high_flags_exactly_the_nonzero_nibbles() {
        let mut rng = crate::rng::Mulberry32::new(8);
        for _ in 0..100_000 {
            let x = rng.next_u32() & 0x0FFF_FFFF;
            // sparse nibbles too: clear a random half of them
            let x = x & (rng.next_u32() & 0x0101_0101).wrapping_mul(0xF) | x & 0x00F0_F0F0;
            let want: u32 = (0..7)
                .filter(|k| (x >> (4 * k)) & 0xF != 0)
                .map(|k| 8 << (4 * k))
                .sum();
            assert_eq!(nonzero_nibbles_high(x), want, "{x:#x}");
        }
    }

    #[test]
    fn chain_table_matches_formula() {
        for d in 1..=30u32 {
            assert_eq!(
                CHAIN_POINTS[d as usize],
                (7.0 * (d as f64).powf(2.5)).floor() as u32
            );
        }
        assert_eq!(chain_points(31), (7.0 * 31f64.powf(2.5)).floor() as u32);
    }

    #[test]
    fn rejects_bad_moves() {
        let mut b = Board::start();
        b.cols[2] = 0x111_1111; // a full column
        let e = play_move(&mut b, 2, 3, 3, &mut Fixed(vec![]), &mut ());
        assert_eq!(e, Err(MoveError::ColumnFull(2)));
        assert_eq!(
            play_move(&mut b, 7, 3, 3, &mut Fixed(vec![]), &mut ()),
            Err(MoveError::ColumnOutOfRange(7))
        );
        assert_eq!(
            play_move(&mut b, 0, 0, 3, &mut Fixed(vec![]), &mut ()),
            Err(MoveError::BadDisc(0))
        );
        assert_eq!(
            play_move(&mut b, 0, 1, 0, &mut Fixed(vec![]), &mut ()),
            Err(MoveError::BadRise(0))
        );
    }
}
