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
///
/// Exact on any board, settled or not (the step vectors include unsettled ones). Between moves
/// a board is always settled; [`play_settled`] is the faster equivalent for such boards.
#[inline]
pub fn play_move<R: RevealSource, O: MoveObserver>(
    board: &mut Board,
    column: usize,
    disc: u8,
    moves_remaining: u8,
    reveals: &mut R,
    observer: &mut O,
) -> Result<MoveOutcome, MoveError> {
    play::<false, R, O>(board, column, disc, moves_remaining, reveals, observer)
}

/// [`play_move`] for a **settled** board (no disc on it would pop: every board a game or a
/// search reaches between moves). The placement's first wave is then found from the drop's
/// column and row alone (nothing else changed), which is most of a move's work when the
/// drop pops nothing. On an unsettled board the result would miss the pops that were
/// already due; debug builds assert against the full detection pass on every call.
#[inline]
pub fn play_settled<R: RevealSource, O: MoveObserver>(
    board: &mut Board,
    column: usize,
    disc: u8,
    moves_remaining: u8,
    reveals: &mut R,
    observer: &mut O,
) -> Result<MoveOutcome, MoveError> {
    play::<true, R, O>(board, column, disc, moves_remaining, reveals, observer)
}

/// Whether no disc on `board` would pop (the fast form of [`Board::check_settled`]): callers
/// that take a board from outside check it once, then use [`play_settled`] below it.
#[inline]
pub fn is_settled(board: &Board) -> bool {
    detect(&board.cols).1 == 0
}

#[inline(always)]
fn play<const SETTLED: bool, R: RevealSource, O: MoveObserver>(
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
    let e = column_height(w);
    board.cols[column] = w | (disc as u32) << (4 * e);

    let mut out = MoveOutcome::default();
    let mut depth = 1u32;
    let first = if SETTLED {
        let p = placement_pops(&board.cols, column, e);
        debug_assert_eq!(
            p,
            detect(&board.cols),
            "play_settled on an unsettled board: {board} (before the drop in column {column})"
        );
        Some(p)
    } else {
        None
    };
    out.score_delta = resolve(board, &mut depth, reveals, observer, &mut out, first);
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
            let first = rise_pops(&board.cols);
            debug_assert_eq!(first, detect(&board.cols), "rise pops of {board}");
            out.score_delta += resolve(board, &mut depth, reveals, observer, &mut out, Some(first));
            if board.is_empty() {
                out.score_delta += CLEAR_BONUS;
                out.cleared_board = true;
            }
        }
    }
    if !out.game_over && !board.any_legal() {
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

/// Column word `w` with the nibbles flagged in `pop` (bit 4k for nibble k) removed and the
/// ones above moved down (gravity), lowest first. The first step has no branch and is a no-op
/// when nothing pops (the lowest flag of 0 is 0, so `low` is all ones): most columns lose none
/// or one disc a wave, at random, and a loop's exit mispredicted about once a move.
#[inline]
fn compact(mut w: u32, mut pop: u32) -> u32 {
    loop {
        let p = pop & pop.wrapping_neg();
        let low = p.wrapping_sub(1);
        w = (w & low) | ((w >> 4) & !low);
        // the flags above the removed disc move down with their discs
        pop = (pop ^ p) >> 4;
        if pop == 0 {
            return w;
        }
    }
}

/// The full detection pass: `pop[c]` flags (bit 4e) the numbered discs of column `c` that
/// pop now, on any board; the second value is their union (0: nothing pops).
#[inline(always)]
fn detect(w: &[u32; SIZE]) -> ([u32; SIZE], u32) {
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
        let miss =
            nonzero_nibbles_high(run ^ w[c]) & nonzero_nibbles_high(w[c] ^ (h[c] * NIBBLE_ONES));
        pop[c] = ((fill[c] & HIGH_BITS) & !miss) >> 3;
        any |= pop[c];
    }
    (pop, any)
}

/// The first wave after a rise (same result as [`detect`] then, on any board: the placement's
/// cascade left the board settled). Every row moved up whole, keeping its runs, and the new
/// bottom row is gray; only the column heights changed, each by one.
#[inline(always)]
fn rise_pops(w: &[u32; SIZE]) -> ([u32; SIZE], u32) {
    let mut pop = [0u32; SIZE];
    let mut any = 0u32;
    for c in 0..SIZE {
        let h = column_height(w[c]);
        pop[c] =
            (!nonzero_nibbles_high(w[c] ^ (h * NIBBLE_ONES)) & HIGH_BITS & FILL[h as usize]) >> 3;
        any |= pop[c];
    }
    (pop, any)
}

/// The first wave after a disc landed at elevation `e` of column `c` on a board that was
/// settled before (same result as [`detect`] then). Only two lines changed: column `c`, whose
/// height is now `e + 1`, and row `e`, where the new disc may have joined two runs; every
/// other disc kept its row run and its column height, and none of them popped before.
#[inline(always)]
fn placement_pops(w: &[u32; SIZE], c: usize, e: u32) -> ([u32; SIZE], u32) {
    let sh = 4 * e;
    let h = e + 1;
    // column c: discs equal to its new height (bit 3 of their nibble, then bit 0)
    let col_pop =
        (!nonzero_nibbles_high(w[c] ^ (h * NIBBLE_ONES)) & HIGH_BITS & FILL[h as usize]) >> 3;
    // row e as one word, column j in nibble j
    let mut row = 0u32;
    for j in 0..SIZE {
        row |= ((w[j] >> sh) & 0xF) << (4 * j);
    }
    // the run through column c: empty columns flagged at bit 4j + 3, a sentinel empty column
    // 7 at bit 31 and, one nibble up, a sentinel empty column -1 at bit 3
    let empty = (!nonzero_nibbles_high(row) & HIGH_BITS) | 1 << 31;
    let first_empty_right = (empty >> (4 * c) << (4 * c)).trailing_zeros() / 4; // b + 1
    let below = ((empty << 4) | 8) & ((16u32 << (4 * c)) - 1);
    let run_start = (31 - below.leading_zeros()) / 4; // a
    let run_len = first_empty_right - run_start;
    let run_cells = FILL[first_empty_right as usize] & !FILL[run_start as usize];
    let row_pop = !nonzero_nibbles_high(row ^ (run_len * NIBBLE_ONES)) & HIGH_BITS & run_cells;
    let mut pop = [0u32; SIZE];
    if (row_pop | col_pop) == 0 {
        return (pop, 0);
    }
    let mut any = 0u32;
    for j in 0..SIZE {
        pop[j] = ((row_pop >> (4 * j + 3)) & 1) << sh;
    }
    pop[c] |= col_pop;
    for j in 0..SIZE {
        any |= pop[j];
    }
    (pop, any)
}

/// Resolve waves until nothing pops; returns the chain points. `depth` is the depth of the
/// next wave and is left one past the last wave, so a rise cascade continues the chain.
/// `first`: the first wave's pops when the caller found them already ([`placement_pops`]).
#[inline(always)]
fn resolve<R: RevealSource, O: MoveObserver>(
    board: &mut Board,
    depth: &mut u32,
    reveals: &mut R,
    observer: &mut O,
    out: &mut MoveOutcome,
    mut first: Option<([u32; SIZE], u32)>,
) -> u32 {
    let mut points = 0u32;
    loop {
        let w = board.cols;
        let (pop, any) = match first.take() {
            Some(p) => p,
            None => detect(&w),
        };
        if any == 0 {
            return points;
        }
        // Gray discs next to a popped one: a solid disc (8) hit by exactly one pop cracks (9);
        // any other hit gray disc (cracked, or solid and hit by two or more) is revealed. Both
        // sets come from masks, with one test a wave (any hit? any revealed?) instead of a
        // branch per hit row and cell: which discs are hit is as random as the board, and
        // those branches mispredicted about twice a move (callgrind --branch-sim).
        let mut pops_by_elevation = 0u32;
        let mut hits = [0u32; SIZE];
        let mut gray_hit = 0u32;
        for c in 0..SIZE {
            pops_by_elevation += pop[c];
            // bit 3 of a nibble: gray (8) or cracked (9); empty nibbles are 0
            let gray = (w[c] >> 3) & NIBBLE_ONES;
            let mut k = (pop[c] << 4) + (pop[c] >> 4);
            if c > 0 {
                k += pop[c - 1];
            }
            if c + 1 < SIZE {
                k += pop[c + 1];
            }
            // popped neighbours of each gray disc, 0-4 in its nibble
            hits[c] = k & (gray * 0xF);
            gray_hit |= hits[c];
        }
        let cleared = nibble_sum(pops_by_elevation);
        let mut revealed = 0u32;
        let mut cols = w;
        if gray_hit != 0 {
            let mut reveal = [0u32; SIZE];
            let mut reveal_any = 0u32;
            for c in 0..SIZE {
                let h = hits[c];
                let once = h & !(h >> 1) & !(h >> 2) & NIBBLE_ONES;
                // bit 0 of a gray nibble is clear for solid (8), set for cracked (9)
                let crack = once & !w[c];
                cols[c] += crack; // 8 → 9
                reveal[c] = nonzero_nibbles(h) & !crack;
                reveal_any |= reveal[c];
            }
            if reveal_any != 0 {
                // Each revealed disc draws the next value, in the reference's order: row-major
                // from the top (elevation 6 down to 0), columns left to right. Only the
                // elevations some disc is revealed at are visited (bit 4e of `rows`).
                let mut rows = reveal_any;
                while rows != 0 {
                    let shift = 31 - rows.leading_zeros();
                    rows &= !(1 << shift);
                    let mut across = 0u32;
                    for c in 0..SIZE {
                        across |= ((reveal[c] >> shift) & 1) << c;
                    }
                    while across != 0 {
                        let c = across.trailing_zeros() as usize;
                        across &= across - 1;
                        let v = reveals.reveal();
                        observer.revealed_value(v);
                        cols[c] = (cols[c] & !(0xF << shift)) | (v as u32) << shift;
                        revealed += 1;
                    }
                }
            }
        }
        for c in 0..SIZE {
            cols[c] = compact(cols[c], pop[c]);
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

    /// A random bottom-packed column word: height 0-7, cells 1-9.
    fn random_column(rng: &mut Mulberry32) -> u32 {
        let h = rng.next_u32() % 8;
        (0..h).fold(0, |w, e| w | (1 + rng.next_u32() % 9) << (4 * e))
    }

    #[test]
    fn compact_removes_exactly_the_flagged_discs() {
        // the oracle: clear the flagged nibbles, then rebuild the column nibble by nibble
        let plain = |w: u32, pop: u32| {
            let mut rest = w & !(pop * 0xF);
            let (mut out, mut shift) = (0u32, 0);
            while rest != 0 {
                if rest & 0xF != 0 {
                    out |= (rest & 0xF) << shift;
                    shift += 4;
                }
                rest >>= 4;
            }
            out
        };
        let mut rng = Mulberry32::new(9);
        for _ in 0..100_000 {
            let w = random_column(&mut rng);
            let pop = rng.next_u32() & FILL[column_height(w) as usize] & NIBBLE_ONES;
            assert_eq!(compact(w, pop), plain(w, pop), "{w:#x} {pop:#x}");
        }
        assert_eq!(compact(0x123_4567, 0x101_0101), 0x246);
    }

    #[test]
    fn is_settled_agrees_with_the_cell_by_cell_check() {
        let mut rng = Mulberry32::new(10);
        let (mut settled, mut unsettled) = (0, 0);
        for _ in 0..50_000 {
            let mut b = Board::default();
            for c in 0..SIZE {
                b.cols[c] = random_column(&mut rng);
            }
            let want = b.check_settled().is_ok();
            assert_eq!(is_settled(&b), want, "{b}");
            if want { settled += 1 } else { unsettled += 1 }
        }
        // both answers were exercised
        assert!(settled > 100 && unsettled > 100, "{settled} {unsettled}");
    }

    /// `play_settled` against `play_move` (the full detection pass every wave) from every
    /// position of 300 reference-random games: every legal column, every disc, the game's
    /// clock and a pending rise, the same reveal stream. (Debug builds also assert each
    /// shortcut's pops against the full pass inside every call.)
    #[test]
    fn settled_play_equals_the_full_detection() {
        let (mut moves, mut rises, mut waves) = (0u32, 0u32, 0u32);
        for seed in 0..300u32 {
            crate::runner::play_trace_random(0x5e77_0000 + seed, |g, _| {
                for column in 0..SIZE {
                    if !g.board.is_legal(column) {
                        continue;
                    }
                    for disc in 1..=7u8 {
                        for mr in [g.moves_remaining, 1] {
                            let reveal_seed = seed ^ (column as u32) << 8 ^ (disc as u32) << 12;
                            let (mut a, mut b) = (g.board, g.board);
                            let full = play_move(
                                &mut a,
                                column,
                                disc,
                                mr,
                                &mut Mulberry32::new(reveal_seed),
                                &mut (),
                            );
                            let fast = play_settled(
                                &mut b,
                                column,
                                disc,
                                mr,
                                &mut Mulberry32::new(reveal_seed),
                                &mut (),
                            );
                            assert_eq!(
                                fast, full,
                                "{} column {column} disc {disc} rise {mr}",
                                g.board
                            );
                            assert_eq!(b, a, "{} column {column} disc {disc} rise {mr}", g.board);
                            let out = full.unwrap();
                            moves += 1;
                            rises += out.level_advanced as u32;
                            waves += out.waves;
                        }
                    }
                }
                std::ops::ControlFlow::Continue(())
            });
        }
        // the comparison covered cascades and rises, not only quiet drops
        assert!(
            moves > 100_000 && rises > 10_000 && waves > moves / 2,
            "{moves} {rises} {waves}"
        );
    }

    #[test]
    fn chain_table_matches_formula() {
        for d in 1..=30u32 {
            assert_eq!(
                CHAIN_POINTS[d as usize],
                (7.0 * (d as f64).powf(2.5)).floor() as u32
            );
        }
        // beyond the table: floor(7 * 31^2.5) = floor(37454.35), floor(7 * 40^2.5) = floor(70835.02)
        assert_eq!(chain_points(31), 37_454);
        assert_eq!(chain_points(40), 70_835);
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

    /// One move by the rules as the spec states them, cell by cell on a grid and slow: a disc
    /// pops when its value equals its column's height or the length of its row's run; each
    /// gray disc next to popped ones cracks (solid, one popped neighbour) or is revealed (any
    /// other hit), revealed values drawn row by row from the top, left to right; popped discs
    /// leave and the ones above fall; waves repeat; then the rise. Returns the board and
    /// (points, waves, discs revealed).
    fn plain_move(
        board: &Board,
        column: usize,
        disc: u8,
        mr: u8,
        reveals: &mut impl RevealSource,
    ) -> (Board, (u32, u32, u32)) {
        let mut g = [[0u8; SIZE]; SIZE]; // g[e][c], e = 0 at the bottom
        for (c, e) in (0..SIZE).flat_map(|c| (0..SIZE).map(move |e| (c, e))) {
            g[e][c] = board.cell_at(c, e);
        }
        let height = |g: &[[u8; SIZE]; SIZE], c: usize| (0..SIZE).filter(|&e| g[e][c] != 0).count();
        let e0 = height(&g, column);
        g[e0][column] = disc;
        // points, waves, discs revealed, depth of the next wave
        let mut t = (0u32, 0u32, 0u32, 1u32);
        let resolve = |g: &mut [[u8; SIZE]; SIZE],
                       t: &mut (u32, u32, u32, u32),
                       reveals: &mut dyn FnMut() -> u8| loop {
            let mut popped = [[false; SIZE]; SIZE];
            let mut any = false;
            for e in 0..SIZE {
                for c in 0..SIZE {
                    let v = g[e][c] as usize;
                    if !(1..=7).contains(&v) {
                        continue;
                    }
                    let (mut a, mut b) = (c, c);
                    while a > 0 && g[e][a - 1] != 0 {
                        a -= 1;
                    }
                    while b + 1 < SIZE && g[e][b + 1] != 0 {
                        b += 1;
                    }
                    if v == height(g, c) || v == b - a + 1 {
                        popped[e][c] = true;
                        any = true;
                    }
                }
            }
            if !any {
                return;
            }
            let mut cleared = 0;
            for e in (0..SIZE).rev() {
                for c in 0..SIZE {
                    cleared += popped[e][c] as u32;
                    if g[e][c] < 8 {
                        continue;
                    }
                    let near = [
                        (e + 1, c),
                        (e.wrapping_sub(1), c),
                        (e, c + 1),
                        (e, c.wrapping_sub(1)),
                    ];
                    let k = near
                        .iter()
                        .filter(|&&(y, x)| y < SIZE && x < SIZE && popped[y][x])
                        .count();
                    if k == 1 && g[e][c] == 8 {
                        g[e][c] = 9;
                    } else if k >= 1 {
                        g[e][c] = reveals();
                        t.2 += 1;
                    }
                }
            }
            for c in 0..SIZE {
                let kept: Vec<u8> = (0..SIZE)
                    .filter(|&e| g[e][c] != 0 && !popped[e][c])
                    .map(|e| g[e][c])
                    .collect();
                for e in 0..SIZE {
                    g[e][c] = kept.get(e).copied().unwrap_or(0);
                }
            }
            t.0 += cleared * chain_points(t.3);
            t.1 += 1;
            t.3 += 1;
        };
        let mut draw = || reveals.reveal();
        resolve(&mut g, &mut t, &mut draw);
        let empty = |g: &[[u8; SIZE]; SIZE]| g.iter().flatten().all(|&v| v == 0);
        if empty(&g) {
            t.0 += CLEAR_BONUS;
        }
        if mr == 1 && g[SIZE - 1].iter().all(|&v| v == 0) {
            for e in (1..SIZE).rev() {
                g[e] = g[e - 1];
            }
            g[0] = [8; SIZE];
            t.0 += RISE_BONUS;
            resolve(&mut g, &mut t, &mut draw);
            if empty(&g) {
                t.0 += CLEAR_BONUS;
            }
        }
        let mut out = Board::default();
        for c in 0..SIZE {
            for e in 0..SIZE {
                out.cols[c] |= (g[e][c] as u32) << (4 * e);
            }
        }
        (out, (t.0, t.1, t.2))
    }

    #[test]
    fn moves_equal_the_rules_played_cell_by_cell() {
        let mut rng = Mulberry32::new(11);
        let (mut moves, mut cracked, mut revealed, mut rises) = (0u32, 0u32, 0u32, 0u32);
        while moves < 30_000 {
            let mut b = Board::default();
            for c in 0..SIZE {
                b.cols[c] = random_column(&mut rng);
            }
            let column = (rng.next_u32() % 7) as usize;
            if !b.is_legal(column) {
                continue;
            }
            let disc = 1 + (rng.next_u32() % 7) as u8;
            let mr = 1 + (rng.next_u32() % 5) as u8;
            let seed = rng.next_u32();
            let (want, (points, waves, shown)) =
                plain_move(&b, column, disc, mr, &mut Mulberry32::new(seed));
            let mut got = b;
            let out = play_move(
                &mut got,
                column,
                disc,
                mr,
                &mut Mulberry32::new(seed),
                &mut (),
            )
            .unwrap();
            assert_eq!(got, want, "{b} column {column} disc {disc} rise {mr}");
            assert_eq!(
                (out.score_delta, out.waves, out.revealed),
                (points, waves, shown),
                "{b} column {column} disc {disc} rise {mr}"
            );
            let nines = |x: &Board| {
                (0..SIZE)
                    .flat_map(|c| (0..SIZE).map(move |e| (c, e)))
                    .filter(|&(c, e)| x.cell_at(c, e) == 9)
                    .count()
            };
            cracked += (nines(&got) > nines(&b)) as u32;
            revealed += out.revealed;
            rises += out.level_advanced as u32;
            moves += 1;
        }
        // the comparison saw cracks, reveals and rises, not only plain pops
        assert!(
            cracked > 1_000 && revealed > 1_000 && rises > 1_000,
            "{cracked} {revealed} {rises}"
        );
    }
}
