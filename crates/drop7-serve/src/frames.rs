//! One move, frame by frame, for the page to animate: the drop, each wave's pops (with the
//! grays they hit), the board after the wave (cracks, reveals, gravity), the clear bonus, the
//! rise and its cascade. A plain cell-by-cell restatement of `drop7::rules::play_move` (the
//! library resolves a wave in word arithmetic and reports only its totals); every call is
//! checked against the library's own result, and the tests compare the two on whole games.
// Grid code reads best with explicit (column, elevation) indices.
#![allow(clippy::needless_range_loop)]

use drop7::board::{Board, CRACKED, SIZE, SOLID};
use drop7::rules::{CLEAR_BONUS, MOVES_PER_LEVEL, RISE_BONUS, RevealSource, chain_points};
use serde::Serialize;

/// One picture of the board during a move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// `drop`, `pop`, `wave`, `clear`, `rise`, `over`.
    pub kind: &'static str,
    /// What happens, in words.
    pub text: String,
    /// 49 digits, row-major from the top.
    pub board: String,
    /// Cells to mark, as indices into the 49 digits: the dropped disc, the discs that pop.
    pub marks: Vec<usize>,
    /// Gray cells hit by this wave's pops (cracked or revealed next).
    pub hits: Vec<usize>,
    /// Score of the move so far.
    pub points: u64,
}

/// The frames and totals of one move (the totals are compared with the library's).
#[derive(Debug, Clone)]
pub struct Animated {
    pub frames: Vec<Frame>,
    pub board: Board,
    pub score_delta: u64,
    pub waves: Vec<(u32, u32, u32, u32)>,
}

/// Cells by (column, elevation), elevation 0 at the bottom, as the library packs them.
type Grid = [[u8; SIZE]; SIZE];

fn grid(b: &Board) -> Grid {
    let mut g = [[0u8; SIZE]; SIZE];
    for (c, col) in g.iter_mut().enumerate() {
        for (e, cell) in col.iter_mut().enumerate() {
            *cell = b.cell_at(c, e);
        }
    }
    g
}

fn board(g: &Grid) -> Board {
    let mut b = Board::default();
    for c in 0..SIZE {
        b.cols[c] = (0..SIZE).map(|e| (g[c][e] as u32) << (4 * e)).sum();
    }
    b
}

/// Index of (column, elevation) in the 49-digit string (row-major from the top).
fn index(c: usize, e: usize) -> usize {
    (SIZE - 1 - e) * SIZE + c
}

fn height(g: &Grid, c: usize) -> usize {
    g[c].iter().take_while(|&&v| v != 0).count()
}

struct Builder {
    frames: Vec<Frame>,
    points: u64,
    waves: Vec<(u32, u32, u32, u32)>,
}

impl Builder {
    fn push(
        &mut self,
        kind: &'static str,
        text: String,
        g: &Grid,
        marks: Vec<usize>,
        hits: Vec<usize>,
    ) {
        self.frames.push(Frame {
            kind,
            text,
            board: board(g).to_string(),
            marks,
            hits,
            points: self.points,
        });
    }

    /// Waves until nothing pops; `depth` continues across the rise as in the library.
    fn resolve(&mut self, g: &mut Grid, depth: &mut u32, reveals: &mut impl RevealSource) {
        loop {
            let h: Vec<usize> = (0..SIZE).map(|c| height(g, c)).collect();
            let mut pop = [[false; SIZE]; SIZE];
            let mut any = false;
            for c in 0..SIZE {
                for e in 0..h[c] {
                    let v = g[c][e] as usize;
                    if !(1..=7).contains(&v) {
                        continue;
                    }
                    // the occupied run through (c, e) in its row
                    let mut lo = c;
                    while lo > 0 && g[lo - 1][e] != 0 {
                        lo -= 1;
                    }
                    let mut hi = c;
                    while hi + 1 < SIZE && g[hi + 1][e] != 0 {
                        hi += 1;
                    }
                    if v == h[c] || v == hi - lo + 1 {
                        pop[c][e] = true;
                        any = true;
                    }
                }
            }
            if !any {
                return;
            }
            let popped = |c: isize, e: isize| {
                (0..SIZE as isize).contains(&c)
                    && (0..SIZE as isize).contains(&e)
                    && pop[c as usize][e as usize]
            };
            let mut hits = [[0u8; SIZE]; SIZE];
            let (mut marks, mut hit_cells) = (Vec::new(), Vec::new());
            let mut cleared = 0u32;
            for c in 0..SIZE {
                for e in 0..SIZE {
                    if pop[c][e] {
                        cleared += 1;
                        marks.push(index(c, e));
                    }
                    if g[c][e] == SOLID || g[c][e] == CRACKED {
                        let (ci, ei) = (c as isize, e as isize);
                        hits[c][e] = [(ci - 1, ei), (ci + 1, ei), (ci, ei - 1), (ci, ei + 1)]
                            .into_iter()
                            .filter(|&(x, y)| popped(x, y))
                            .count() as u8;
                        if hits[c][e] > 0 {
                            hit_cells.push(index(c, e));
                        }
                    }
                }
            }
            marks.sort_unstable();
            hit_cells.sort_unstable();
            let wave_points = cleared * chain_points(*depth);
            self.push(
                "pop",
                format!(
                    "chain {}: {cleared} disc{} pop{}",
                    *depth,
                    if cleared == 1 { "" } else { "s" },
                    if hit_cells.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", {} gray{} hit",
                            hit_cells.len(),
                            if hit_cells.len() == 1 { "" } else { "s" }
                        )
                    }
                ),
                g,
                marks,
                hit_cells,
            );
            // cracks and reveals, row-major from the top as the library draws them
            let mut revealed = 0u32;
            let mut cracked = 0u32;
            for e in (0..SIZE).rev() {
                for c in 0..SIZE {
                    let k = hits[c][e];
                    if k == 0 {
                        continue;
                    }
                    if g[c][e] == SOLID && k == 1 {
                        g[c][e] = CRACKED;
                        cracked += 1;
                    } else {
                        g[c][e] = reveals.reveal();
                        revealed += 1;
                    }
                }
            }
            for c in 0..SIZE {
                let kept: Vec<u8> = (0..SIZE)
                    .filter(|&e| !pop[c][e] && g[c][e] != 0)
                    .map(|e| g[c][e])
                    .collect();
                g[c] = [0; SIZE];
                g[c][..kept.len()].copy_from_slice(&kept);
            }
            self.points += wave_points as u64;
            self.waves.push((*depth, cleared, revealed, wave_points));
            self.push(
                "wave",
                format!(
                    "chain {}: +{wave_points} ({cleared} × {}){}{}",
                    *depth,
                    chain_points(*depth),
                    if cracked > 0 {
                        format!(", {cracked} cracked")
                    } else {
                        String::new()
                    },
                    if revealed > 0 {
                        format!(", {revealed} revealed")
                    } else {
                        String::new()
                    }
                ),
                g,
                Vec::new(),
                Vec::new(),
            );
            *depth += 1;
        }
    }
}

/// Animate dropping `disc` into `column` with `rise` moves until the rise, reveals from
/// `reveals`. The caller has checked the move is legal.
pub fn animate(
    b: &Board,
    column: usize,
    disc: u8,
    rise: u8,
    reveals: &mut impl RevealSource,
) -> Animated {
    let mut g = grid(b);
    let mut f = Builder {
        frames: Vec::new(),
        points: 0,
        waves: Vec::new(),
    };
    let top = height(&g, column);
    g[column][top] = disc;
    f.push(
        "drop",
        format!("drop {disc} in column {column}"),
        &g,
        vec![index(column, top)],
        Vec::new(),
    );
    let mut depth = 1;
    f.resolve(&mut g, &mut depth, reveals);
    let empty = |g: &Grid| g.iter().all(|c| c[0] == 0);
    if empty(&g) {
        f.points += CLEAR_BONUS as u64;
        f.push(
            "clear",
            format!("board cleared: +{CLEAR_BONUS}"),
            &g,
            Vec::new(),
            Vec::new(),
        );
    }
    let mut game_over = false;
    if rise == 1 {
        if (0..SIZE).any(|c| g[c][SIZE - 1] != 0) {
            game_over = true;
            f.push(
                "over",
                "the rise finds the top row occupied: game over".into(),
                &g,
                Vec::new(),
                Vec::new(),
            );
        } else {
            for col in g.iter_mut() {
                col.copy_within(0..SIZE - 1, 1);
                col[0] = SOLID;
            }
            f.points += RISE_BONUS as u64;
            let row: Vec<usize> = (0..SIZE).map(|c| index(c, 0)).collect();
            f.push(
                "rise",
                format!("rise: a row of grays, +{RISE_BONUS}; {MOVES_PER_LEVEL} moves to the next"),
                &g,
                row,
                Vec::new(),
            );
            f.resolve(&mut g, &mut depth, reveals);
            if empty(&g) {
                f.points += CLEAR_BONUS as u64;
                f.push(
                    "clear",
                    format!("board cleared: +{CLEAR_BONUS}"),
                    &g,
                    Vec::new(),
                    Vec::new(),
                );
            }
        }
    }
    if !game_over && (0..SIZE).all(|c| g[c][SIZE - 1] != 0) {
        f.push(
            "over",
            "no legal column: game over".into(),
            &g,
            Vec::new(),
            Vec::new(),
        );
    }
    Animated {
        board: board(&g),
        score_delta: f.points,
        waves: f.waves,
        frames: f.frames,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drop7::game::{Game, TraceRandom};
    use drop7::rng::{Mulberry32, reveal_seed};
    use drop7::trace::Recorder;

    /// Whole reference-random games: every move's frames end on the library's board, score
    /// and waves.
    #[test]
    fn frames_agree_with_the_library() {
        let mut moves = 0;
        let (mut rises, mut reveals) = (0, 0);
        for seed in 0..60u32 {
            let mut game = Game::new(seed);
            let mut policy = TraceRandom::new(seed);
            while !game.finished() {
                let c = policy.choose(&game.board).unwrap();
                let before = game.public();
                let mut rng = Mulberry32::new(reveal_seed(seed, game.moves_played));
                let a = animate(
                    &before.board,
                    c,
                    before.next,
                    before.moves_remaining,
                    &mut rng,
                );
                let mut rec = Recorder::default();
                let out = game.play(c, &mut rec).unwrap();
                assert_eq!(
                    a.board, game.board,
                    "seed {seed} move {}",
                    game.moves_played
                );
                assert_eq!(a.score_delta, out.score_delta as u64);
                let waves: Vec<_> = rec
                    .waves
                    .iter()
                    .map(|w| (w.depth, w.cleared, w.revealed, w.points))
                    .collect();
                assert_eq!(a.waves, waves);
                assert_eq!(a.frames.last().unwrap().board, game.board.to_string());
                rises += out.level_advanced as u32;
                reveals += out.revealed;
                moves += 1;
            }
        }
        assert!(
            moves > 1000 && rises > 100 && reveals > 100,
            "{moves} {rises} {reveals}"
        );
    }

    #[test]
    fn a_drop_that_cracks() {
        let b = Board::start();
        let mut rng = Mulberry32::new(1);
        let a = animate(&b, 0, 1, 5, &mut rng);
        let kinds: Vec<_> = a.frames.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, ["drop", "pop", "wave"]);
        assert_eq!(a.frames[1].marks, vec![35]);
        assert_eq!(a.frames[1].hits, vec![42]);
        assert_eq!(
            a.frames[2].board,
            "0000000000000000000000000000000000000000009888888"
        );
        assert_eq!(a.score_delta, 7);
    }
}
