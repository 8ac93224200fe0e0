//! Fair expectimax ("dNsK"): N decision plies, K stratified chance samples per action
//! (docs/design/drop7-SPEC.md §6). Deterministic: the sampler's seeds come from the public state and a fixed
//! policy seed, never from the game seed.
//!
//! V(s, 0) = leaf(s); V(s, d) = max over legal columns (scan order 3,2,4,1,5,0,6) of
//! Q(s, c, d) = (Σₖ [scoreₖ + V(childₖ, d−1)]) / K, a sample that ends the game counting
//! `score − 1,000,000`. Children are canonicalised (mirrored when the mirror is smaller).

use crate::board::{Board, SIZE};
use crate::fair_leaf::{Prepared, board_part, prepare};
use crate::game::{CENTER_ORDER, PublicState};
use crate::rng::{GOLDEN, MURMUR_C, mix32};
use crate::rules::{RevealSource, is_settled, play_move, play_settled};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Value of a game-over in search (points).
pub const TERMINAL_UTILITY: f64 = -1_000_000.0;
/// The fixed policy seed of the fair search.
pub const POLICY_SEED: u32 = 0xd707_5eed;
/// Sampler domain of the child's next disc, ASCII "DISC".
pub const DOMAIN_DISC: u32 = 0x4449_5343;
/// Sampler domain of reveals, ASCII "REVL".
pub const DOMAIN_REVEAL: u32 = crate::rng::DOMAIN_REVEAL;
/// The reference's work budget for the s7 arms (far above the d3/d4 completion bounds).
pub const DEFAULT_MAX_WORK: u64 = 16_000_000;

/// A static evaluation of a live, canonical state (points, added 1:1 to score). `&mut self`
/// so a leaf can keep per-thread scratch (caches) — one leaf per searcher.
pub trait Leaf: Send {
    fn value(&mut self, board: &Board, next: u8, moves_remaining: u8) -> f64;

    /// Values of many leaves `(board, next, moves_remaining)` at once, equal to calling
    /// [`Leaf::value`] on each in order. The search hands over all leaves below a depth-1
    /// node together (up to 7 columns × K samples), so a leaf whose cost is memory latency
    /// (the n-tuple tables) can overlap them.
    fn values(&mut self, leaves: &[(Board, u8, u8)], out: &mut [f64]) {
        for (&(b, next, mr), o) in leaves.iter().zip(out) {
            *o = self.value(&b, next, mr);
        }
    }
}

/// The frozen 18-term fair leaf, with a one-board cache: the K samples of a move that
/// reveals nothing share one board and moves-until-rise and differ only in the next disc, so
/// the board terms and the rise pressure are computed once ([`Prepared`]; bit-identical: what
/// is cached is the reference's own partial sum).
#[derive(Debug, Clone, Copy, Default)]
pub struct FairLeaf {
    last: Option<(Board, f64, u8, Prepared)>,
}

impl Leaf for FairLeaf {
    #[inline]
    fn value(&mut self, board: &Board, next: u8, moves_remaining: u8) -> f64 {
        match &mut self.last {
            Some((b, _, mr, p)) if *b == *board && *mr == moves_remaining => p.value(next),
            Some((b, partial, mr, p)) if *b == *board => {
                *mr = moves_remaining;
                *p = prepare(*partial, board, moves_remaining);
                p.value(next)
            }
            _ => {
                let partial = board_part(board);
                let p = prepare(partial, board, moves_remaining);
                self.last = Some((*board, partial, moves_remaining, p));
                p.value(next)
            }
        }
    }
}

/// FNV-1a-style hash of a public state: cells as code + 1 in row-major order, then the
/// next disc, then moves-until-rise (no final multiply).
#[inline]
pub fn state_hash(board: &Board, next: u8, moves_remaining: u8) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for e in (0..SIZE).rev() {
        for c in 0..SIZE {
            let cell = (board.cols[c] >> (4 * e)) & 0xF;
            h ^= cell + 1;
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h ^= next as u32;
    h = h.wrapping_mul(0x0100_0193);
    h ^ moves_remaining as u32
}

/// The sampler seed of an action node with remaining depth `depth`; shared by every column
/// of the node (common random numbers across columns).
#[inline]
pub fn scenario_seed(board: &Board, next: u8, moves_remaining: u8, depth: u32) -> u32 {
    mix32(
        state_hash(board, next, moves_remaining) ^ POLICY_SEED ^ (depth + 1).wrapping_mul(MURMUR_C),
    )
}

/// Stratified unit draw for sample `k` of `count`, event `event` in `domain`: the rotation
/// spreads strata over samples so each event is marginally stratified.
#[inline]
pub fn stratified_unit(seed: u32, k: u32, count: u32, domain: u32, event: u32) -> f64 {
    let es = mix32(seed ^ domain ^ (event + 1).wrapping_mul(MURMUR_C));
    let stratum = (k + es % count) % count;
    let jitter = mix32(es ^ (k + 1).wrapping_mul(GOLDEN)) as f64 / 4_294_967_296.0;
    (stratum as f64 + jitter) / count as f64
}

/// `floor(7u) + 1`.
#[inline]
pub fn disc_from_unit(u: f64) -> u8 {
    (u * 7.0) as u8 + 1
}

/// The child's next disc for sample `k`.
#[inline]
pub fn sampled_next_disc(seed: u32, k: u32, count: u32) -> u8 {
    disc_from_unit(stratified_unit(seed, k, count, DOMAIN_DISC, 0))
}

/// Reveal values for sample `k`: a stratified draw per reveal event, events counted from 0.
#[derive(Debug, Clone, Copy)]
pub struct StratifiedReveals {
    pub seed: u32,
    pub k: u32,
    pub count: u32,
    pub event: u32,
}

impl RevealSource for StratifiedReveals {
    #[inline]
    fn reveal(&mut self) -> u8 {
        let u = stratified_unit(self.seed, self.k, self.count, DOMAIN_REVEAL, self.event);
        self.event += 1;
        disc_from_unit(u)
    }
}

/// `W(D, K) = Σ_{d=1..D} [Σ_{l=1..d} bˡ + bᵈ]`, b = 7K: the work of a full tree in which
/// every node has 7 legal columns and no sample ends the game. A budget at or above it
/// always completes.
pub fn completion_bound(depth: u32, samples: u32) -> u64 {
    let b = 7u64 * samples as u64;
    (1..=depth as u64)
        .map(|d| (1..=d).map(|l| b.pow(l as u32)).sum::<u64>() + b.pow(d as u32))
        .sum()
}

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchConfig {
    pub depth: u32,
    pub samples: u32,
    /// Abort (keeping the last completed depth) once this much work is done.
    pub max_work: u64,
    /// Transposition table.
    pub table: TableKind,
    /// Search only the best `k` root columns of the previous iteration at the last depth
    /// (`None`: every column, the fair search). A risky shortcut (issue 35, item 4): the
    /// column it drops might have been best at full depth; its price is measured, not assumed.
    pub final_top: Option<u32>,
}

/// Which transposition table a search uses. None changes any value or decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// No table: work equals the reference's cache-free count (`search.jsonl`).
    None,
    /// Direct-mapped, depth-preferred, cleared per decision by epoch (the Rust deployment
    /// table); the size is rounded up to a power of two.
    Direct(usize),
    /// An exact, never-evicting memo cleared per decision: reproduces the reference LRU's
    /// work counts at depth 3 (`games.jsonl`). Allocates; for parity checks.
    Exact,
}

impl SearchConfig {
    /// The same search with [`SearchConfig::final_top`] set.
    pub fn with_top(self, final_top: Option<u32>) -> Self {
        Self { final_top, ..self }
    }

    /// `fair-dNsK` with the reference's table sizes: 65,536 entries up to depth 3,
    /// 1,048,576 from depth 4, and the 16,000,000 work budget.
    pub fn fair(depth: u32, samples: u32) -> Self {
        let size = if depth >= 4 { 1 << 20 } else { 1 << 16 };
        Self {
            depth,
            samples,
            max_work: DEFAULT_MAX_WORK.max(completion_bound(depth, samples) + 1),
            table: TableKind::Direct(size),
            final_top: None,
        }
    }
}

/// Every column.
const ALL_COLUMNS: u8 = 0x7f;

/// The `k` columns with the highest Q (ties: the earlier in [`CENTER_ORDER`], as the search
/// itself breaks them), as a bit mask; every column when fewer than `k` have a Q.
fn top_columns(q: &[Option<f64>; SIZE], k: usize) -> u8 {
    let mut ranked: Vec<(usize, f64)> = CENTER_ORDER
        .iter()
        .filter_map(|&c| q[c].map(|v| (c, v)))
        .collect();
    if ranked.len() <= k {
        return ALL_COLUMNS;
    }
    // Stable sort keeps the center order among equal values.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked.iter().take(k).fold(0, |m, &(c, _)| m | 1 << c)
}

/// A decision and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Column to play in the original coordinates (`None` only with no legal column).
    pub column: Option<usize>,
    /// The chosen column in canonical coordinates.
    pub column_canonical: Option<usize>,
    /// Q values of the last completed depth in original coordinates (`None` = illegal).
    pub q: [Option<f64>; SIZE],
    pub q_canonical: [Option<f64>; SIZE],
    pub mirrored: bool,
    pub canonical_board: Board,
    pub work: u64,
    /// Cumulative work after each completed depth.
    pub work_by_depth: Vec<u64>,
    pub nodes: u64,
    pub completed_depth: u32,
}

impl Decision {
    pub fn completed(&self, depth: u32) -> bool {
        self.completed_depth == depth
    }
}

/// Work budget exhausted.
#[derive(Debug, Clone, Copy)]
struct OutOfWork;

/// Packed table key: the seven column words, next disc, moves-until-rise and depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Key([u64; 4]);

impl Key {
    #[inline]
    fn new(b: &Board, next: u8, mr: u8, depth: u32) -> Self {
        let c = &b.cols;
        Key([
            c[0] as u64 | (c[1] as u64) << 32,
            c[2] as u64 | (c[3] as u64) << 32,
            c[4] as u64 | (c[5] as u64) << 32,
            c[6] as u64 | (next as u64) << 32 | (mr as u64) << 40 | (depth as u64) << 48,
        ])
    }

    #[inline]
    fn hash(&self) -> u64 {
        #[inline]
        fn fmix(mut x: u64) -> u64 {
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            x ^= x >> 33;
            x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            x ^ (x >> 33)
        }
        let mut h = self.0[0];
        h = fmix(h ^ self.0[1].wrapping_add(0x9e37_79b9_7f4a_7c15));
        h = fmix(h ^ self.0[2].wrapping_add(0xbf58_476d_1ce4_e5b9));
        fmix(h ^ self.0[3].wrapping_add(0x94d0_49bb_1331_11eb))
    }
}

/// Bytes a direct-mapped table of `entries` takes (rounded up to a power of two, as
/// [`TableKind::Direct`] is): 48 per entry.
pub fn direct_table_bytes(entries: usize) -> u64 {
    entries.max(1).next_power_of_two() as u64 * std::mem::size_of::<Slot>() as u64
}

/// The largest direct-mapped table a [`TableChoice`] names: 2²⁶ entries, 3.2 GB (the
/// reference's largest is 2²⁰).
pub const MAX_DIRECT_ENTRIES: usize = 1 << 26;

/// A transposition table chosen by name (`drop7 search --table`): `default` (`None`: keep
/// the configuration's own table), `none`, `exact`, or a direct-mapped table of 1 to
/// [`MAX_DIRECT_ENTRIES`] entries. A size is refused while it is parsed if the memory it
/// takes and [`crate::memory::HEADROOM`] are not available, so that the refusal is one line
/// naming both instead of an allocation failure in the middle of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableChoice(pub Option<TableKind>);

/// A `--table` value that names no table, or one this machine cannot hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableChoiceError {
    #[error("`{0}` is not none, exact, default or an entry count")]
    Unknown(String),
    #[error("a table of {0} entries: use 1 to {MAX_DIRECT_ENTRIES}")]
    Size(String),
    #[error(
        "a table of {entries} entries needs {need_gb:.1} GB and only {free_gb:.1} GB is available"
    )]
    Memory {
        entries: String,
        need_gb: f64,
        free_gb: f64,
    },
}

impl std::str::FromStr for TableChoice {
    type Err = TableChoiceError;
    fn from_str(s: &str) -> Result<Self, TableChoiceError> {
        let kind = match s {
            "default" => return Ok(Self(None)),
            "none" => TableKind::None,
            "exact" => TableKind::Exact,
            n => {
                let entries: usize = n
                    .parse()
                    .map_err(|_| TableChoiceError::Unknown(n.to_owned()))?;
                if !(1..=MAX_DIRECT_ENTRIES).contains(&entries) {
                    return Err(TableChoiceError::Size(n.to_owned()));
                }
                let need = direct_table_bytes(entries);
                if let Some(free) = crate::memory::shortfall(need) {
                    return Err(TableChoiceError::Memory {
                        entries: n.to_owned(),
                        need_gb: need as f64 / 1e9,
                        free_gb: free as f64 / 1e9,
                    });
                }
                TableKind::Direct(entries)
            }
        };
        Ok(Self(Some(kind)))
    }
}

impl TableChoice {
    /// `cfg` with this table (unchanged for `default`).
    pub fn apply(self, cfg: SearchConfig) -> SearchConfig {
        match self.0 {
            Some(table) => SearchConfig { table, ..cfg },
            None => cfg,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: Key,
    value: f64,
    depth: u32,
    epoch: u32,
}

enum Table {
    None,
    Direct {
        slots: Vec<Slot>,
        mask: usize,
        epoch: u32,
    },
    Exact(std::collections::HashMap<Key, f64>),
}

impl Table {
    fn new(kind: TableKind) -> Self {
        match kind {
            TableKind::None => Table::None,
            TableKind::Direct(n) => {
                let n = n.max(1).next_power_of_two();
                Table::Direct {
                    slots: vec![Slot::default(); n],
                    mask: n - 1,
                    epoch: 0,
                }
            }
            TableKind::Exact => Table::Exact(Default::default()),
        }
    }

    fn clear(&mut self) {
        match self {
            Table::None => {}
            Table::Direct { slots, epoch, .. } => {
                *epoch = epoch.wrapping_add(1);
                if *epoch == 0 {
                    slots.iter_mut().for_each(|s| s.epoch = 0);
                    *epoch = 1;
                }
            }
            Table::Exact(m) => m.clear(),
        }
    }

    #[inline]
    fn get(&self, key: &Key) -> Option<f64> {
        match self {
            Table::None => None,
            Table::Direct { slots, mask, epoch } => {
                let s = &slots[key.hash() as usize & mask];
                (s.epoch == *epoch && s.key == *key).then_some(s.value)
            }
            Table::Exact(m) => m.get(key).copied(),
        }
    }

    #[inline]
    fn put(&mut self, key: Key, depth: u32, value: f64) {
        match self {
            Table::None => {}
            Table::Direct { slots, mask, epoch } => {
                let s = &mut slots[key.hash() as usize & *mask];
                if s.epoch != *epoch || depth >= s.depth {
                    *s = Slot {
                        key,
                        value,
                        depth,
                        epoch: *epoch,
                    };
                }
            }
            Table::Exact(m) => {
                m.insert(key, value);
            }
        }
    }
}

/// A reusable searcher (owns its table; one per thread).
pub struct Searcher<L: Leaf> {
    pub leaf: L,
    pub config: SearchConfig,
    table: Table,
    work: u64,
    nodes: u64,
    /// Depth-1 scratch: the leaves below the node, each sampled move's (column, points,
    /// leaf slot or `None` when the game ended), and the leaf values.
    frontier: Vec<(Board, u8, u8)>,
    outcomes: Vec<(usize, f64, Option<usize>)>,
    frontier_values: Vec<f64>,
    /// Whether the root board is settled (as every board between moves is): then every
    /// board of the search is, and moves take [`play_settled`]. Checked once a decision, so
    /// a caller's unsettled board still gets exact values.
    settled_root: bool,
    /// Raised by another thread to end the search early (a Python caller's Ctrl-C): read at
    /// nodes of depth 2 and more, a few thousand leaves apart, so the leaves pay nothing.
    stop: Option<Arc<AtomicBool>>,
}

impl<L: Leaf> Searcher<L> {
    pub fn new(leaf: L, config: SearchConfig) -> Self {
        Self {
            leaf,
            config,
            table: Table::new(config.table),
            work: 0,
            nodes: 0,
            frontier: Vec::new(),
            outcomes: Vec::new(),
            frontier_values: Vec::new(),
            settled_root: true,
            stop: None,
        }
    }

    /// The same searcher, ending its search early (keeping the last completed depth) once
    /// `stop` is raised.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Choose a column for a live public state.
    pub fn decide(&mut self, state: &PublicState) -> Decision {
        let (root, mirrored) = state.board.canonical();
        let (next, mr) = (state.next, state.moves_remaining);
        self.table.clear();
        self.work = 0;
        self.nodes = 0;
        self.settled_root = is_settled(&root);
        let mut decision = Decision {
            column: None,
            column_canonical: None,
            q: [None; SIZE],
            q_canonical: [None; SIZE],
            mirrored,
            canonical_board: root,
            work: 0,
            work_by_depth: Vec::new(),
            nodes: 0,
            completed_depth: 0,
        };
        for depth in 1..=self.config.depth {
            // At the last depth, perhaps only the previous iteration's best columns.
            let allowed = match self.config.final_top {
                Some(k) if depth == self.config.depth && decision.completed_depth + 1 == depth => {
                    top_columns(&decision.q_canonical, k as usize)
                }
                _ => ALL_COLUMNS,
            };
            match self.root_values(&root, next, mr, depth, allowed) {
                Ok((q, best)) => {
                    decision.q_canonical = q;
                    decision.column_canonical = best;
                    decision.completed_depth = depth;
                    decision.work_by_depth.push(self.work);
                }
                Err(OutOfWork) => break,
            }
        }
        if decision.column_canonical.is_none() {
            decision.column_canonical = crate::game::center_column(&root);
        }
        let unmirror = |c: usize| if mirrored { SIZE - 1 - c } else { c };
        decision.column = decision.column_canonical.map(unmirror);
        for c in 0..SIZE {
            decision.q[unmirror(c)] = decision.q_canonical[c];
        }
        decision.work = self.work;
        decision.nodes = self.nodes;
        decision
    }

    fn root_values(
        &mut self,
        root: &Board,
        next: u8,
        mr: u8,
        depth: u32,
        allowed: u8,
    ) -> Result<([Option<f64>; SIZE], Option<usize>), OutOfWork> {
        let mut q = [None; SIZE];
        let mut best: Option<(usize, f64)> = None;
        let seed = scenario_seed(root, next, mr, depth);
        for c in CENTER_ORDER {
            if !root.is_legal(c) || allowed & (1 << c) == 0 {
                continue;
            }
            let v = self.action_value(root, next, mr, c, depth, seed)?;
            q[c] = Some(v);
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
        Ok((q, best.map(|(c, _)| c)))
    }

    #[inline]
    fn budget(&self) -> Result<(), OutOfWork> {
        if self.work >= self.config.max_work {
            Err(OutOfWork)
        } else {
            Ok(())
        }
    }

    /// Q(state, c, depth).
    fn action_value(
        &mut self,
        board: &Board,
        next: u8,
        mr: u8,
        column: usize,
        depth: u32,
        seed: u32,
    ) -> Result<f64, OutOfWork> {
        let k_count = self.config.samples;
        let mut sum = 0.0f64;
        let mut shared = None;
        for k in 0..k_count {
            self.budget()?;
            let (score, child) = self.sample_child(board, next, mr, column, k, seed, &mut shared);
            sum += score
                + match child {
                    None => TERMINAL_UTILITY,
                    Some((b, n, m)) => self.state_value(&b, n, m, depth - 1)?,
                };
        }
        Ok(sum / k_count as f64)
    }

    /// Sample `k` of playing `column`: its points and, unless the game ended, the canonical
    /// child state with its sampled next disc. Counts one unit of work, as the reference does
    /// for every sample.
    ///
    /// The samples of a column differ only in the reveals they draw and in the next disc. A
    /// move that reveals nothing (about 80 % of them) is therefore the same move in every
    /// sample: the first sample's outcome is kept in `shared` (the caller's, one per column)
    /// and the other samples take it instead of simulating again. Exact: the same points,
    /// board and clock, hence the same values, decisions and work counts (issue 35, item 1).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn sample_child(
        &mut self,
        board: &Board,
        next: u8,
        mr: u8,
        column: usize,
        k: u32,
        seed: u32,
        shared: &mut Option<(f64, Option<(Board, u8)>)>,
    ) -> (f64, Option<(Board, u8, u8)>) {
        let k_count = self.config.samples;
        self.work += 1;
        let (score, after) = match *shared {
            Some(outcome) => outcome,
            None => {
                let mut child = *board;
                let mut reveals = StratifiedReveals {
                    seed,
                    k,
                    count: k_count,
                    event: 0,
                };
                let out = if self.settled_root {
                    play_settled(&mut child, column, next, mr, &mut reveals, &mut ())
                } else {
                    play_move(&mut child, column, next, mr, &mut reveals, &mut ())
                }
                .expect("search plays legal columns only");
                let score = out.score_delta as f64;
                let after = (!out.game_over).then(|| (child.canonical().0, out.moves_remaining));
                if reveals.event == 0 {
                    *shared = Some((score, after));
                }
                (score, after)
            }
        };
        let child_next = sampled_next_disc(seed, k, k_count);
        (score, after.map(|(b, m)| (b, child_next, m)))
    }

    /// V(state, depth) for a live canonical state.
    fn state_value(
        &mut self,
        board: &Board,
        next: u8,
        mr: u8,
        depth: u32,
    ) -> Result<f64, OutOfWork> {
        self.nodes += 1;
        self.budget()?;
        if depth >= 2 && self.stop.as_ref().is_some_and(|s| s.load(Relaxed)) {
            return Err(OutOfWork);
        }
        if depth == 0 {
            self.budget()?;
            self.work += 1;
            return Ok(self.leaf.value(board, next, mr));
        }
        let key = Key::new(board, next, mr, depth);
        if let Some(v) = self.table.get(&key) {
            return Ok(v);
        }
        let seed = scenario_seed(board, next, mr, depth);
        let mut best = f64::NEG_INFINITY;
        // A depth-1 node that cannot run out of work (each sampled move costs at most 2)
        // values all its leaves in one batch; otherwise move by move, checking the budget.
        let most = 2 * SIZE as u64 * self.config.samples as u64;
        if depth == 1 && self.work + most <= self.config.max_work {
            best = self.frontier_value(board, next, mr, seed);
        } else {
            for c in CENTER_ORDER {
                if board.is_legal(c) {
                    best = best.max(self.action_value(board, next, mr, c, depth, seed)?);
                }
            }
        }
        if !best.is_finite() {
            best = TERMINAL_UTILITY;
        }
        self.table.put(key, depth, best);
        Ok(best)
    }

    /// max over columns of Q(state, c, 1) exactly as [`Searcher::action_value`] and
    /// [`Searcher::state_value`] compute them (same sums in the same order, same work and
    /// node counts), with the leaves valued in one [`Leaf::values`] call. The caller has
    /// checked that the budget cannot run out here.
    fn frontier_value(&mut self, board: &Board, next: u8, mr: u8, seed: u32) -> f64 {
        let k_count = self.config.samples;
        self.frontier.clear();
        self.outcomes.clear();
        for c in CENTER_ORDER {
            if !board.is_legal(c) {
                continue;
            }
            let mut shared = None;
            for k in 0..k_count {
                let (score, child) = self.sample_child(board, next, mr, c, k, seed, &mut shared);
                let slot = child.map(|leaf| {
                    // what `state_value` counts for a depth-0 node
                    self.nodes += 1;
                    self.work += 1;
                    self.frontier.push(leaf);
                    self.frontier.len() - 1
                });
                self.outcomes.push((c, score, slot));
            }
        }
        self.frontier_values.resize(self.frontier.len(), 0.0);
        self.leaf.values(&self.frontier, &mut self.frontier_values);
        let mut best = f64::NEG_INFINITY;
        for group in self.outcomes.chunk_by(|a, b| a.0 == b.0) {
            let mut sum = 0.0f64;
            for &(_, score, slot) in group {
                sum += score
                    + match slot {
                        Some(i) => self.frontier_values[i],
                        None => TERMINAL_UTILITY,
                    };
            }
            best = best.max(sum / k_count as f64);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_stop_ends_the_search_at_the_next_deep_node() {
        let (s, _) = crate::runner::sample_states(0x2d700000, 1)[0];
        let cfg = SearchConfig::fair(3, 3);
        let full = Searcher::new(FairLeaf::default(), cfg).decide(&s);
        assert_eq!(full.completed_depth, 3);
        let lowered = Arc::new(AtomicBool::new(false));
        let same = Searcher::new(FairLeaf::default(), cfg)
            .with_stop(lowered)
            .decide(&s);
        assert_eq!((same.q, same.work), (full.q, full.work));
        // raised before the search: depths 1 and 2 have no node of depth 2 below the root
        let raised = Arc::new(AtomicBool::new(true));
        let stopped = Searcher::new(FairLeaf::default(), cfg)
            .with_stop(raised)
            .decide(&s);
        assert_eq!(stopped.completed_depth, 2);
        assert!(stopped.work < full.work);
    }

    #[test]
    fn top_columns_at_the_last_depth() {
        let states = crate::runner::sample_states(0x2d700000, 40);
        let mut fewer = 0;
        for (s, _) in &states {
            let full_cfg = SearchConfig::fair(3, 7);
            let full = Searcher::new(FairLeaf::default(), full_cfg).decide(s);
            // k = 7 is the fair search, bit for bit.
            let all = Searcher::new(
                FairLeaf::default(),
                SearchConfig {
                    final_top: Some(7),
                    ..full_cfg
                },
            )
            .decide(s);
            assert_eq!(all, full);
            // k = 2: at most two columns searched at depth 3, one of them chosen, for less work;
            // a column it keeps has the same Q as in the full search.
            let two = Searcher::new(
                FairLeaf::default(),
                SearchConfig {
                    final_top: Some(2),
                    ..full_cfg
                },
            )
            .decide(s);
            let searched = two.q_canonical.iter().filter(|q| q.is_some()).count();
            let legal = full.q_canonical.iter().filter(|q| q.is_some()).count();
            assert!(searched <= 2 || legal <= 2, "{searched}");
            assert!(two.work <= full.work);
            fewer += usize::from(two.work < full.work);
            for c in 0..SIZE {
                if let Some(v) = two.q_canonical[c] {
                    assert_eq!(Some(v.to_bits()), full.q_canonical[c].map(f64::to_bits));
                }
            }
            assert!(
                two.column_canonical
                    .is_some_and(|c| two.q_canonical[c].is_some())
            );
        }
        assert!(fewer > 30, "{fewer}");
        let q = [Some(1.0), None, Some(3.0), Some(3.0), Some(2.0), None, None];
        // Ties: column 3 (the center) before 2.
        assert_eq!(top_columns(&q, 1), 1 << 3);
        assert_eq!(top_columns(&q, 2), 1 << 3 | 1 << 2);
        assert_eq!(top_columns(&q, 4), ALL_COLUMNS);
    }

    /// `--table` names: the three words, a size within the bound, and the refusals with the
    /// messages the command line prints (`drop7 search --table`).
    #[test]
    fn table_choices_parse_or_are_refused() {
        let parse = |s: &str| s.parse::<TableChoice>();
        assert_eq!(parse("default"), Ok(TableChoice(None)));
        assert_eq!(parse("none"), Ok(TableChoice(Some(TableKind::None))));
        assert_eq!(parse("exact"), Ok(TableChoice(Some(TableKind::Exact))));
        let refusal = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(refusal("0"), "a table of 0 entries: use 1 to 67108864");
        assert_eq!(
            refusal("67108865"),
            "a table of 67108865 entries: use 1 to 67108864"
        );
        assert_eq!(
            refusal("18446744073709551615"),
            "a table of 18446744073709551615 entries: use 1 to 67108864"
        );
        assert_eq!(
            refusal("-5"),
            "`-5` is not none, exact, default or an entry count"
        );
        assert_eq!(
            refusal("1e3"),
            "`1e3` is not none, exact, default or an entry count"
        );
        assert_eq!(
            refusal(" none"),
            "` none` is not none, exact, default or an entry count"
        );
        let memory = TableChoiceError::Memory {
            entries: "67108864".into(),
            need_gb: 3.221225472,
            free_gb: 2.0,
        };
        assert_eq!(
            memory.to_string(),
            "a table of 67108864 entries needs 3.2 GB and only 2.0 GB is available"
        );
        // 48 bytes an entry: a machine without 1 GiB to spare refuses even one entry
        match parse("1") {
            Ok(choice) => assert_eq!(choice, TableChoice(Some(TableKind::Direct(1)))),
            Err(e) => assert!(matches!(e, TableChoiceError::Memory { .. }), "{e}"),
        }
        let deployment = SearchConfig::fair(3, 7);
        assert_eq!(TableChoice(None).apply(deployment), deployment);
        let exact = TableChoice(Some(TableKind::Exact)).apply(deployment);
        assert_eq!(exact.table, TableKind::Exact);
        assert_eq!((exact.depth, exact.samples), (3, 7));
    }

    proptest::proptest! {
        /// Any `--table` text: a choice or a refusal, never a panic; accepted sizes are
        /// within the bound.
        #[test]
        fn table_values_parse_or_are_refused(text in "\\PC{0,24}|[0-9]{1,22}") {
            if let Ok(TableChoice(Some(TableKind::Direct(n)))) = text.parse::<TableChoice>() {
                proptest::prop_assert!((1..=MAX_DIRECT_ENTRIES).contains(&n));
            }
        }
    }

    #[test]
    fn completion_bounds_match_spec() {
        assert_eq!(completion_bound(3, 5), 89_565);
        assert_eq!(completion_bound(3, 7), 242_697);
        assert_eq!(completion_bound(4, 5), 3_134_950);
        assert_eq!(completion_bound(4, 7), 11_892_398);
        assert_eq!(completion_bound(5, 7), 582_727_796);
        assert_eq!(completion_bound(1, 7), 98);
    }

    #[test]
    fn seven_strata_next_discs_are_a_permutation() {
        let seed = scenario_seed(&Board::start(), 7, 5, 3);
        let mut discs: Vec<u8> = (0..7).map(|k| sampled_next_disc(seed, k, 7)).collect();
        assert_eq!(discs, [7, 1, 2, 3, 4, 5, 6]);
        discs.sort();
        assert_eq!(discs, [1, 2, 3, 4, 5, 6, 7]);
        let k5: Vec<u8> = (0..5).map(|k| sampled_next_disc(seed, k, 5)).collect();
        let mut sorted = k5.clone();
        sorted.sort();
        assert_eq!(sorted, [1, 2, 4, 6, 7]);
    }
}
