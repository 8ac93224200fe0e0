//! The tables at play: as the fair search's leaf (`ntuple-dNsK`) and as a one-ply policy
//! averaging 7 stratified reveal samples (`ntuple-1ply`, also the training policy).

use std::sync::Arc;

use drop7::board::Board;
use drop7::game::{CENTER_ORDER, PublicState};
use drop7::policy::{Choice, Policy, PolicyFactory, SearchPolicy, parse_depth_samples};
use drop7::rules::play_move;
use drop7::search::{Leaf, SearchConfig, StratifiedReveals, scenario_seed};

use crate::features::active;
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
}

impl NTupleLeaf {
    pub fn new(tables: Arc<Tables>) -> Self {
        Self { tables, last: None }
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
        let v = VALUE_SCALE * value(&self.tables, board, moves_remaining) as f64;
        self.last = Some((*board, moves_remaining, v));
        v
    }
}

/// One-ply value of playing `column` in a canonical state: the mean over 7 stratified reveal
/// samples of reward + V(afterstate) in rise units (a terminal afterstate contributes its
/// reward only). A move whose sample 0 reveals nothing is deterministic: sample 0 is used as
/// is. `None` if the column is full.
pub fn column_value(t: &Tables, s: &PublicState, column: usize, seed: u32) -> Option<f32> {
    if !s.board.is_legal(column) {
        return None;
    }
    let mut total = 0.0f32;
    for k in 0..ONE_PLY_SAMPLES {
        let mut b = s.board;
        let mut rng = StratifiedReveals {
            seed,
            k,
            count: ONE_PLY_SAMPLES,
            event: 0,
        };
        let out = play_move(&mut b, column, s.next, s.moves_remaining, &mut rng, &mut ()).ok()?;
        let reward = out.score_delta as f32 / VALUE_SCALE as f32;
        let v = if out.game_over {
            reward
        } else {
            reward + value(t, &b, out.moves_remaining)
        };
        if k == 0 && out.revealed == 0 {
            return Some(v);
        }
        total += v;
    }
    Some(total / ONE_PLY_SAMPLES as f32)
}

/// The one-ply choice (original coordinates): canonicalise, scan 3,2,4,1,5,0,6, first
/// strictly greatest wins, un-mirror.
pub fn choose_one_ply(t: &Tables, s: &PublicState) -> Option<usize> {
    let (board, mirrored) = s.board.canonical();
    let cs = PublicState { board, ..*s };
    let seed = scenario_seed(&cs.board, cs.next, cs.moves_remaining, 0);
    let mut best: Option<(usize, f32)> = None;
    for c in CENTER_ORDER {
        if let Some(v) = column_value(t, &cs, c, seed)
            && best.is_none_or(|(_, b)| v > b)
        {
            best = Some((c, v));
        }
    }
    best.map(|(c, _)| if mirrored { 6 - c } else { c })
}

/// `ntuple-1ply`.
pub struct OnePly {
    pub tables: Arc<Tables>,
}

impl Policy for OnePly {
    fn name(&self) -> &str {
        "ntuple-1ply"
    }
    fn choose(&mut self, s: &PublicState) -> Choice {
        Choice {
            column: choose_one_ply(&self.tables, s),
            work: 0,
            complete: true,
        }
    }
}

/// A factory for `ntuple-1ply` or `ntuple-dNsK` over shared tables; `None` for other names.
pub fn factory(name: &str, tables: Arc<Tables>) -> Option<PolicyFactory> {
    if name == "ntuple-1ply" {
        return Some(Arc::new(move || {
            Box::new(OnePly {
                tables: tables.clone(),
            }) as Box<dyn Policy>
        }));
    }
    let (d, k) = parse_depth_samples(name.strip_prefix("ntuple-")?)?;
    let owned = name.to_owned();
    Some(Arc::new(move || {
        Box::new(SearchPolicy::new(
            owned.clone(),
            NTupleLeaf::new(tables.clone()),
            SearchConfig::fair(d, k),
        )) as Box<dyn Policy>
    }))
}
