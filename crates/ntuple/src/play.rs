//! The tables at play: as the fair search's leaf (`ntuple-dNsK`) and as a one-ply policy
//! averaging 7 stratified reveal samples (`ntuple-1ply`, also the training policy).

use std::sync::Arc;

use drop7::board::Board;
use drop7::game::{CENTER_ORDER, PublicState};
use drop7::policy::{Choice, Policy, PolicyFactory, SearchPolicy};
use drop7::rules::{MoveOutcome, is_settled, play_move, play_settled};
use drop7::search::{Leaf, SearchConfig, StratifiedReveals, scenario_seed};

use crate::features::{Active, active, active_into};
use crate::tables::Tables;

/// Points per rise unit: a table value × 17,000 is a leaf in points.
pub const VALUE_SCALE: f64 = 17_000.0;
/// Reveal samples per column in the one-ply policy.
pub const ONE_PLY_SAMPLES: u32 = 7;

/// State value in rise units.
#[inline]
pub fn value(t: &Tables, board: &Board, moves_remaining: u8) -> f32 {
    t.value(active(&t.layout, board, moves_remaining).as_slice())
}

/// The tables as a search leaf: 17,000 × value(board, moves until rise). The next disc is
/// not an input (an afterstate value), so the K children of a move that reveals nothing —
/// same board, different next discs — share one evaluation: a one-entry cache skips the 74
/// random table reads for the other K − 1.
#[derive(Clone)]
pub struct NTupleLeaf {
    pub tables: Arc<Tables>,
    last: Option<(Board, u8, f64)>,
    /// Reused extraction buffers (no fresh zeroed buffer per leaf): one per distinct board
    /// of a batch, and their values.
    actives: Vec<Active>,
    batch_values: Vec<f32>,
    /// Per leaf of a batch: its distinct board's index.
    slots: Vec<usize>,
}

impl NTupleLeaf {
    pub fn new(tables: Arc<Tables>) -> Self {
        Self {
            tables,
            last: None,
            actives: vec![Active::EMPTY],
            batch_values: Vec::new(),
            slots: Vec::new(),
        }
    }
}

impl Leaf for NTupleLeaf {
    #[inline]
    fn value(&mut self, board: &Board, _next: u8, moves_remaining: u8) -> f64 {
        if let Some((b, mr, v)) = self.last
            && b == *board
            && mr == moves_remaining
        {
            return v;
        }
        active_into(
            &self.tables.layout,
            board,
            moves_remaining,
            &mut self.actives[0],
        );
        let v = VALUE_SCALE * self.tables.value(self.actives[0].as_slice()) as f64;
        self.last = Some((*board, moves_remaining, v));
        v
    }

    /// The leaves below a depth-1 node: consecutive repeats of a board (the K samples of a
    /// move that reveals nothing) are extracted once, the distinct boards valued in one
    /// interleaved batch ([`Tables::values`]); bit-identical to one at a time.
    fn values(&mut self, leaves: &[(Board, u8, u8)], out: &mut [f64]) {
        let mut distinct = 0;
        self.slots.clear();
        let mut prev: Option<(Board, u8)> = None;
        for &(b, _, mr) in leaves {
            if prev != Some((b, mr)) {
                if self.actives.len() == distinct {
                    self.actives.push(Active::EMPTY);
                }
                active_into(&self.tables.layout, &b, mr, &mut self.actives[distinct]);
                distinct += 1;
                prev = Some((b, mr));
            }
            self.slots.push(distinct - 1);
        }
        self.batch_values.resize(distinct, 0.0);
        self.tables
            .values(&self.actives[..distinct], &mut self.batch_values);
        for (o, &i) in out.iter_mut().zip(&self.slots) {
            *o = VALUE_SCALE * self.batch_values[i] as f64;
        }
        self.last = None;
    }
}

/// Work space of the one-ply choice, reused across decisions so the hot loop allocates
/// nothing: the afterstates of every sampled move (at most 7 columns × 7 samples) are
/// extracted first and valued in one batch ([`Tables::values`]).
pub struct OnePlyScratch {
    /// Per sampled move: (column, reward in rise units, index into `actives` or `None` when
    /// the game ended), in scan order.
    samples: Vec<(usize, f32, Option<usize>)>,
    actives: Vec<Active>,
    values: Vec<f32>,
}

impl Default for OnePlyScratch {
    fn default() -> Self {
        let most = 7 * ONE_PLY_SAMPLES as usize;
        Self {
            samples: Vec::with_capacity(most),
            actives: vec![Active::EMPTY; most],
            values: vec![0.0; most],
        }
    }
}

/// Every sampled move of the one-ply choice for a canonical state, in its order: each legal
/// column in the order 3,2,4,1,5,0,6, then its 7 stratified reveal samples (only sample 0
/// when that one reveals nothing: the move is deterministic). `visit(column, afterstate,
/// outcome)`.
pub fn one_ply_samples(s: &PublicState, mut visit: impl FnMut(usize, &Board, &MoveOutcome)) {
    let seed = scenario_seed(&s.board, s.next, s.moves_remaining, 0);
    // a game's boards are settled; a caller's board is checked once (exact either way)
    let settled = is_settled(&s.board);
    for c in CENTER_ORDER {
        if !s.board.is_legal(c) {
            continue;
        }
        for k in 0..ONE_PLY_SAMPLES {
            let mut b = s.board;
            let mut rng = StratifiedReveals {
                seed,
                k,
                count: ONE_PLY_SAMPLES,
                event: 0,
            };
            let out = if settled {
                play_settled(&mut b, c, s.next, s.moves_remaining, &mut rng, &mut ())
            } else {
                play_move(&mut b, c, s.next, s.moves_remaining, &mut rng, &mut ())
            }
            .expect("a legal column");
            visit(c, &b, &out);
            if k == 0 && out.revealed == 0 {
                break;
            }
        }
    }
}

/// The one-ply choice (original coordinates): canonicalise; for each legal column in the
/// order 3,2,4,1,5,0,6 take the mean over 7 stratified reveal samples of reward +
/// V(afterstate) in rise units (a terminal afterstate contributes its reward only; a move
/// whose sample 0 reveals nothing is deterministic and sample 0 stands alone); the first
/// strictly greatest wins; un-mirror.
pub fn choose_one_ply(t: &Tables, s: &PublicState, scratch: &mut OnePlyScratch) -> Option<usize> {
    let (board, mirrored) = s.board.canonical();
    let cs = PublicState { board, ..*s };
    scratch.samples.clear();
    let mut extracted = 0;
    one_ply_samples(&cs, |c, b, out| {
        let reward = out.score_delta as f32 / VALUE_SCALE as f32;
        let slot = (!out.game_over).then(|| {
            active_into(
                &t.layout,
                b,
                out.moves_remaining,
                &mut scratch.actives[extracted],
            );
            extracted += 1;
            extracted - 1
        });
        scratch.samples.push((c, reward, slot));
    });
    t.values(
        &scratch.actives[..extracted],
        &mut scratch.values[..extracted],
    );
    let mut best: Option<(usize, f32)> = None;
    for group in scratch.samples.chunk_by(|a, b| a.0 == b.0) {
        let v_of = |&(_, reward, slot): &(usize, f32, Option<usize>)| match slot {
            Some(i) => reward + scratch.values[i],
            None => reward,
        };
        let v = if group.len() == 1 {
            v_of(&group[0])
        } else {
            let mut total = 0.0f32;
            for x in group {
                total += v_of(x);
            }
            total / ONE_PLY_SAMPLES as f32
        };
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((group[0].0, v));
        }
    }
    best.map(|(c, _)| if mirrored { 6 - c } else { c })
}

/// `ntuple-1ply`.
pub struct OnePly {
    /// The arm's name (with its model), as records carry it.
    pub name: String,
    pub tables: Arc<Tables>,
    pub scratch: OnePlyScratch,
}

impl Policy for OnePly {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, s: &PublicState) -> Choice {
        Choice {
            column: choose_one_ply(&self.tables, s, &mut self.scratch),
            work: 0,
            complete: true,
        }
    }
}

/// A factory for the one-ply policy (`search = None`) or the fair search with the n-tuple
/// leaf at `(depth, samples)` (`top`: see [`SearchConfig::final_top`]), over shared tables;
/// every instance is named `name`.
pub fn factory(
    search: Option<(u32, u32)>,
    top: Option<u32>,
    name: String,
    tables: Arc<Tables>,
) -> PolicyFactory {
    match search {
        None => Arc::new(move || {
            Box::new(OnePly {
                name: name.clone(),
                tables: tables.clone(),
                scratch: OnePlyScratch::default(),
            }) as Box<dyn Policy>
        }),
        Some((d, k)) => Arc::new(move || {
            Box::new(SearchPolicy::new(
                name.clone(),
                NTupleLeaf::new(tables.clone()),
                SearchConfig::fair(d, k).with_top(top),
            )) as Box<dyn Policy>
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::tables::OPTIMISTIC_TOTAL;
    use drop7::search::Searcher;

    /// The n-tuple leaf seen only through `value` (the trait's default one-by-one `values`).
    struct OneByOne(NTupleLeaf);

    impl Leaf for OneByOne {
        fn value(&mut self, board: &Board, next: u8, moves_remaining: u8) -> f64 {
            self.0.value(board, next, moves_remaining)
        }
    }

    fn scrambled_tables() -> Arc<Tables> {
        let t = Tables::new(
            Layout::parse("win23,phase=all").unwrap(),
            OPTIMISTIC_TOTAL,
            false,
        )
        .unwrap();
        for i in 0..t.layout.total {
            t.set_weight(
                i,
                (i.wrapping_mul(2_654_435_761) % 1000) as f32 / 997.0 - 0.5,
            );
        }
        Arc::new(t)
    }

    /// The search's batched depth-1 leaves give the same Q values (to the bit), work and
    /// node counts as valuing the leaves one at a time.
    #[test]
    fn batched_leaves_match_one_at_a_time() {
        let _heavy = crate::heavy_test();
        let t = scrambled_tables();
        let mut batched = Searcher::new(NTupleLeaf::new(t.clone()), SearchConfig::fair(2, 5));
        let mut single = Searcher::new(OneByOne(NTupleLeaf::new(t)), SearchConfig::fair(2, 5));
        for (s, _) in drop7::runner::sample_states(0x7777_0000, 60) {
            let a = batched.decide(&s);
            let b = single.decide(&s);
            let bits =
                |q: &[Option<f64>]| q.iter().map(|v| v.map(f64::to_bits)).collect::<Vec<_>>();
            assert_eq!(bits(&a.q), bits(&b.q), "{}", s.board);
            assert_eq!((a.column, a.work, a.nodes), (b.column, b.work, b.nodes));
        }
    }

    /// The one-ply choice is the first strictly best column by the mean of its samples.
    #[test]
    fn one_ply_matches_a_direct_computation() {
        let _heavy = crate::heavy_test();
        let t = scrambled_tables();
        let mut scratch = OnePlyScratch::default();
        for (s, _) in drop7::runner::sample_states(0x7878_0000, 200) {
            let (board, mirrored) = s.board.canonical();
            let seed = scenario_seed(&board, s.next, s.moves_remaining, 0);
            let mut best: Option<(usize, f32)> = None;
            for c in CENTER_ORDER {
                if !board.is_legal(c) {
                    continue;
                }
                let mut total = 0.0f32;
                let mut v0 = None;
                for k in 0..ONE_PLY_SAMPLES {
                    let mut b = board;
                    let mut rng = StratifiedReveals {
                        seed,
                        k,
                        count: ONE_PLY_SAMPLES,
                        event: 0,
                    };
                    let o =
                        play_move(&mut b, c, s.next, s.moves_remaining, &mut rng, &mut ()).unwrap();
                    let r = o.score_delta as f32 / VALUE_SCALE as f32;
                    let v = if o.game_over {
                        r
                    } else {
                        r + value(&t, &b, o.moves_remaining)
                    };
                    if k == 0 && o.revealed == 0 {
                        v0 = Some(v);
                        break;
                    }
                    total += v;
                }
                let v = v0.unwrap_or(total / ONE_PLY_SAMPLES as f32);
                if best.is_none_or(|(_, b)| v > b) {
                    best = Some((c, v));
                }
            }
            let want = best.map(|(c, _)| if mirrored { 6 - c } else { c });
            assert_eq!(choose_one_ply(&t, &s, &mut scratch), want, "{}", s.board);
        }
    }
}
