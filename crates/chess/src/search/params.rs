//! Every search margin and rule threshold, in one place.
//!
//! Later issues replace these fixed margins with measured tables (docs/design/chess-DESIGN.md §3); each
//! prune/reduce decision in `search/mod.rs` calls exactly one function here, so that
//! calibration can wrap, instrument or override it without touching the node function.
//!
//! The 16 constants that are UCI `tune` options (aspiration, RFP, null move, razoring, LMP,
//! futility, SEE pruning, LMR) hold the values of the SPSA tune of issue 33
//! (`docs/tune/spsa/values.txt`: 10,000 game pairs at 1+0.01, then an SPRT(0, 10) at 2+0.02
//! against the values before, which were those of `docs/tune/spsa/params.txt`). A test keeps
//! them equal to that file.

/// Deepest ply the search will ever reach (arrays are sized from it).
pub const MAX_PLY: usize = 128;

pub const INFINITE: i32 = 32_001;
pub const MATE: i32 = 32_000;
/// Scores beyond this are mates (with distance encoded as `MATE - ply`).
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32 * 2;
pub const DRAW: i32 = 0;

// --- Aspiration windows -------------------------------------------------------------
pub const ASPIRATION_MIN_DEPTH: i32 = 5;
pub const ASPIRATION_DELTA: i32 = 11;

// --- Reverse futility pruning (static null move) ------------------------------------
pub const RFP_MAX_DEPTH: i32 = 8;
pub const RFP_MARGIN_PER_DEPTH: i32 = 70;
pub const RFP_IMPROVING_BONUS: i32 = 62;

/// RFP margin by remaining depth and improving flag (the defaults; the search reads the
/// tunable values of [`super::prune::PruneConfig`]).
#[inline]
pub fn rfp_margin(depth: i32, improving: bool) -> i32 {
    rfp_margin_with(RFP_MARGIN_PER_DEPTH, RFP_IMPROVING_BONUS, depth, improving)
}

/// RFP margin with the given per-depth margin and improving bonus.
#[inline]
pub fn rfp_margin_with(per_depth: i32, bonus: i32, depth: i32, improving: bool) -> i32 {
    per_depth * depth - if improving { bonus } else { 0 }
}

/// The value RFP returns when it fires: Stockfish's blend biased toward beta (see
/// docs/design/seeds/extended-pruning-depth.md, "What return value RFP should use").
#[inline]
pub fn rfp_return(eval: i32, beta: i32) -> i32 {
    (661 * beta + 363 * eval) / 1024
}

// --- Null move ----------------------------------------------------------------------
pub const NMP_MIN_DEPTH: i32 = 3;
/// From this depth a null-move cutoff is verified by a reduced normal search.
pub const NMP_VERIFY_DEPTH: i32 = 12;

pub const NMP_BASE: i32 = 4;
pub const NMP_DEPTH_DIVISOR: i32 = 3;
pub const NMP_EVAL_DIVISOR: i32 = 200;

/// Null-move depth reduction: `base + depth / depth_div + clamp((eval − beta) / eval_div, 0, 3)`.
#[inline]
pub fn nmp_reduction(
    base: i32,
    depth_div: i32,
    eval_div: i32,
    depth: i32,
    eval: i32,
    beta: i32,
) -> i32 {
    base + depth / depth_div + ((eval - beta) / eval_div).clamp(0, 3)
}

// --- Razoring ------------------------------------------------------------------------
pub const RAZOR_MAX_DEPTH: i32 = 3;
/// Razoring margin `base + per_depth · depth` (292, 433, 574 cp at depths 1–3).
pub const RAZOR_BASE: i32 = 151;
pub const RAZOR_PER_DEPTH: i32 = 141;

// --- ProbCut (switch `probcut`) ------------------------------------------------------------
/// Shallowest depth ProbCut is tried at.
pub const PROBCUT_MIN_DEPTH: i32 = 5;
/// ProbCut's margin over beta, cp: a capture whose reduced search beats beta + this is taken
/// to beat beta at full depth.
pub const PROBCUT_MARGIN: i32 = 200;
/// How much shallower ProbCut's verification search is than the node.
pub const PROBCUT_REDUCTION: i32 = 4;

// --- History pruning (switch `hp`) ----------------------------------------------------------
/// Deepest LMR depth a quiet move may be pruned at for its history alone.
pub const HP_MAX_LMR_DEPTH: i32 = 3;
/// A quiet move whose history (butterfly + two continuation entries) is below
/// `−HP_MARGIN · depth` is pruned.
pub const HP_MARGIN: i32 = 2048;

// --- Capture ordering ----------------------------------------------------------------------
/// Capture history's divisor in a capture's ordering score (option `prune.caphist-div`).
pub const CAPHIST_DIV: i32 = 16;

// --- Singular extensions (switch `se`) ---------------------------------------------------
/// Shallowest depth a hash move is tested for being singular.
pub const SE_MIN_DEPTH: i32 = 8;
/// The hash entry must be at least this close to the node's depth.
pub const SE_TT_DEPTH_MARGIN: i32 = 3;
/// The test's window: the hash score less this much per ply of depth.
pub const SE_BETA_PER_DEPTH: i32 = 1;

// --- Internal iterative reduction ------------------------------------------------------
pub const IIR_MIN_DEPTH: i32 = 4;

// --- Late move pruning ---------------------------------------------------------------
pub const LMP_MAX_DEPTH: i32 = 8;

pub const LMP_BASE: i32 = 5;

/// Quiet moves searched before the rest are pruned: `base + depth²`, halved when not improving.
#[inline]
pub fn lmp_limit(base: i32, depth: i32, improving: bool) -> usize {
    let n = base + depth * depth;
    (if improving { n } else { n / 2 }) as usize
}

// --- Futility pruning (parent node, quiet moves) --------------------------------------
pub const FP_MAX_DEPTH: i32 = 7;
pub const FP_BASE: i32 = 95;
pub const FP_PER_DEPTH: i32 = 90;

#[inline]
pub fn futility_margin(base: i32, per_depth: i32, lmr_depth: i32) -> i32 {
    base + per_depth * lmr_depth
}

// --- SEE pruning in the main search ----------------------------------------------------
pub const SEE_PRUNE_MAX_DEPTH: i32 = 8;
pub const SEE_QUIET_MARGIN: i32 = -55;
pub const SEE_NOISY_MARGIN: i32 = -25;

// --- Quiescence ------------------------------------------------------------------------
/// Delta (futility) margin in quiescence: stand pat + victim + this cannot reach alpha.
pub const QS_FUTILITY_MARGIN: i32 = 150;

// --- Late move reductions --------------------------------------------------------------
pub const LMR_MIN_DEPTH: i32 = 3;
/// `reduction = base + ln(depth)·ln(move) / divisor`, both in hundredths.
pub const LMR_BASE_CENTI: i32 = 45;
pub const LMR_DIVISOR_CENTI: i32 = 254;
/// History score worth one ply of reduction.
pub const LMR_HISTORY_DIVISOR: i32 = 7093;

/// Log-based reduction table `[depth][move number]` for base and divisor in hundredths.
pub fn lmr_table(base_centi: i32, divisor_centi: i32) -> Box<[[u8; 64]; 64]> {
    let (base, div) = (
        f64::from(base_centi) / 100.0,
        f64::from(divisor_centi) / 100.0,
    );
    let mut t = Box::new([[0u8; 64]; 64]);
    for (d, row) in t.iter_mut().enumerate().skip(1) {
        for (m, r) in row.iter_mut().enumerate().skip(1) {
            *r = (base + (d as f64).ln() * (m as f64).ln() / div) as u8;
        }
    }
    t
}

// --- History -----------------------------------------------------------------------------
pub const HISTORY_MAX: i32 = 16_384;

#[inline]
pub fn history_bonus(depth: i32) -> i32 {
    (depth * depth * 16 + depth * 32).min(1_600)
}

// --- Time ----------------------------------------------------------------------------------
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;
/// How often (in nodes) the main thread looks at the clock.
pub const TIME_CHECK_NODES: u64 = 1024;
