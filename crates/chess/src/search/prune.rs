//! Forward pruning priced by measured tables (docs/design/chess-DESIGN.md §3, docs/design/seeds/extended-pruning-depth.md).
//!
//! Three things live here, so the node function only asks questions:
//!
//! * [`PruneConfig`]: every mechanism's switch and variant (UCI options and the tools' `--set`
//!   flags map onto it), so an experiment is a command line, not a code edit;
//! * the bucketings of the two measured tables: the **alpha-side** joint fail-high table
//!   (does this quiet move raise alpha? by remaining depth, hung material, gap to alpha,
//!   lateness and the mover's improvement) and the **beta-side** table (does a node whose
//!   static eval already clears beta still fail high? by gap above beta, depth, improving and
//!   "the opponent left something hanging");
//! * [`PruneTables`]: the generated data files `data/chess/fh-table.txt` and
//!   `data/chess/rfp-table.txt` (written by `actuary collect`), embedded at build time and
//!   read into flat arrays, so a lookup on the hot path is one index computation.
//!
//! Why two tables and not one re-sliced: the alpha-side table collapses every gap ≤ 0 into
//! bucket 0 (once a move clears alpha there is nothing left to decide), which is exactly the
//! graded region an RFP margin needs; and lateness and the move's hung material have no
//! meaning before a node has picked a move. The seed works this out in full.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::board::{Board, Move, Piece};
use crate::eval::pst::SEE_VALUE;
use crate::search::see::{attackers_to, see_ge};

// ----- Bucketings ---------------------------------------------------------------------------

/// Remaining depths the tables cover (1..=10; deeper lands in the last row).
pub const TABLE_DEPTHS: usize = 10;
/// Hung-material buckets: what the opponent wins on the move's destination (SEE loss):
/// 0, ≤ a pawn, ≤ a minor, ≤ a rook, more.
pub const HUNG_BUCKETS: usize = 5;
/// Inclusive upper edges of the SEE-loss buckets (the last is open).
pub(crate) const HUNG_EDGES: [i32; HUNG_BUCKETS - 1] = [0, 100, 350, 550];
/// A representative loss per hung bucket (the EFP estimate subtracts it).
pub(crate) const HUNG_VALUE: [i32; HUNG_BUCKETS] = [0, 100, 325, 500, 900];
/// Gap-to-alpha buckets (`alpha − eval`): bucket 0 holds every gap ≤ 0.
pub const GAP_BUCKETS: usize = 9;
pub const GAP_EDGES: [i32; GAP_BUCKETS - 1] = [0, 30, 60, 100, 150, 250, 400, 700];
/// Lateness buckets by move number at the node (1-based, pruned moves included).
pub const LATE_BUCKETS: usize = 9;
pub(crate) const LATE_EDGES: [u32; LATE_BUCKETS - 1] = [1, 2, 3, 4, 6, 9, 14, 22];
/// Mover's improvement (`eval − eval two plies ago`): ≤ −50, in between (or unknown), ≥ +50.
pub const IMPROVE_BUCKETS: usize = 3;
pub(crate) const IMPROVE_STEP: i32 = 50;
/// Cells of the alpha-side table.
pub const FH_CELLS: usize =
    TABLE_DEPTHS * HUNG_BUCKETS * GAP_BUCKETS * LATE_BUCKETS * IMPROVE_BUCKETS;

/// Gap-above-beta buckets (`eval − beta ≥ 0`), by inclusive lower edge.
pub const RFP_GAP_BUCKETS: usize = 10;
pub const RFP_GAP_LOWER: [i32; RFP_GAP_BUCKETS] = [0, 25, 50, 75, 100, 150, 200, 300, 450, 700];
/// Cells of the beta-side table: depth × improving × opponent-hung × gap.
pub const RFP_CELLS: usize = TABLE_DEPTHS * 2 * 2 * RFP_GAP_BUCKETS;

#[inline]
fn bucket_by_upper<T: PartialOrd + Copy>(x: T, edges: &[T]) -> usize {
    edges.iter().position(|&e| x <= e).unwrap_or(edges.len())
}

#[inline]
pub(crate) fn depth_index(depth: i32) -> usize {
    (depth.clamp(1, TABLE_DEPTHS as i32) - 1) as usize
}
#[inline]
pub(crate) fn gap_bucket(gap: i32) -> usize {
    bucket_by_upper(gap, &GAP_EDGES)
}
#[inline]
pub(crate) fn late_bucket(move_number: u32) -> usize {
    bucket_by_upper(move_number, &LATE_EDGES)
}
#[inline]
pub(crate) fn improve_bucket(improvement: Option<i32>) -> usize {
    match improvement {
        Some(d) if d <= -IMPROVE_STEP => 0,
        Some(d) if d >= IMPROVE_STEP => 2,
        _ => 1,
    }
}
#[inline]
pub(crate) fn rfp_gap_bucket(gap: i32) -> usize {
    RFP_GAP_LOWER.iter().rposition(|&l| gap >= l).unwrap_or(0)
}

/// Hung-material bucket of a quiet move: how much the opponent wins by taking on its
/// destination, by static exchange (one `see_ge` for the common safe move).
#[inline]
pub(crate) fn hung_bucket(board: &Board, mv: Move) -> usize {
    HUNG_EDGES
        .iter()
        .position(|&e| see_ge(board, mv, -e))
        .unwrap_or(HUNG_BUCKETS - 1)
}

/// Index of an alpha-side cell.
#[inline]
pub fn fh_cell(depth: i32, hung: usize, gap: i32, move_number: u32, imp: Option<i32>) -> usize {
    (((depth_index(depth) * HUNG_BUCKETS + hung) * GAP_BUCKETS + gap_bucket(gap)) * LATE_BUCKETS
        + late_bucket(move_number))
        * IMPROVE_BUCKETS
        + improve_bucket(imp)
}

/// The axes of an alpha-side cell (inverse of [`fh_cell`]): depth 1.., hung, gap, late, imp.
pub fn fh_axes(cell: usize) -> [usize; 5] {
    let imp = cell % IMPROVE_BUCKETS;
    let c = cell / IMPROVE_BUCKETS;
    let late = c % LATE_BUCKETS;
    let c = c / LATE_BUCKETS;
    let gap = c % GAP_BUCKETS;
    let c = c / GAP_BUCKETS;
    let hung = c % HUNG_BUCKETS;
    [c / HUNG_BUCKETS + 1, hung, gap, late, imp]
}

/// Index of a beta-side cell.
#[inline]
pub fn rfp_cell(depth: i32, improving: bool, opp_hung: bool, gap: i32) -> usize {
    ((depth_index(depth) * 2 + improving as usize) * 2 + opp_hung as usize) * RFP_GAP_BUCKETS
        + rfp_gap_bucket(gap)
}

/// The axes of a beta-side cell: depth 1.., improving, opponent-hung, gap bucket.
pub fn rfp_axes(cell: usize) -> [usize; 4] {
    let gap = cell % RFP_GAP_BUCKETS;
    let c = cell / RFP_GAP_BUCKETS;
    let hung = c % 2;
    let c = c / 2;
    [c / 2 + 1, c % 2, hung, gap]
}

/// Does the side to move have something to take for free (an enemy piece attacked and
/// undefended, or attacked by a cheaper piece)? The node-level "opponent has a hung piece":
/// the static eval does not see it, so the true value is above the eval.
pub(crate) fn opponent_hung(board: &Board) -> bool {
    let us = board.side_to_move();
    let ours = board.colors(us);
    let theirs = board.colors(!us);
    let occ = board.occupied();
    for sq in theirs & !board.pieces(Piece::King) {
        let att = attackers_to(board, sq, occ);
        let mine = att & ours;
        if mine.is_empty() {
            continue;
        }
        if (att & theirs).is_empty() {
            return true;
        }
        let victim = board.piece_on(sq).map_or(0, |p| SEE_VALUE[p as usize]);
        let cheapest = Piece::ALL
            .iter()
            .find(|&&p| !(mine & board.pieces(p)).is_empty())
            .map_or(i32::MAX, |&p| SEE_VALUE[p as usize]);
        if cheapest < victim {
            return true;
        }
    }
    false
}

// ----- Allowances -----------------------------------------------------------------------------

/// LMP's depth allowance in thousandths of a percent (200 = 0.2 %), by remaining depth 1..=11
/// (the seed's schedule; 0 from depth 11 on).
pub(crate) const LMP_ALLOWANCE: [u32; 11] = [200, 200, 150, 75, 50, 25, 12, 6, 3, 1, 0];
/// The seed's fair EFP-vs-LMP test: with EFP off, LMP gets EFP's working threshold (≈ 0.3 %)
/// at 1–2 ply and the schedule carried outward half again as wide.
pub(crate) const LMP_ALLOWANCE_WIDE: [u32; 11] = [300, 300, 225, 113, 75, 38, 18, 9, 5, 2, 0];
/// EFP's table veto: a move whose pessimistic fail-high bound is at least this is never
/// pruned by EFP (the seed's strictest veto tier, 0.3 %).
pub(crate) const EFP_VETO: u32 = 300;

// ----- Switches ---------------------------------------------------------------------------------

/// Which rule drives a mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Off,
    /// The hand-set formula in `params.rs` (the build before the tables).
    Formula,
    /// The measured table.
    Table,
    /// Both: prune where either prunes (RFP: the smaller margin) — the formula, widened where
    /// the table found it safe.
    Union,
}

/// Futility pruning at the parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EfpMode {
    Off,
    /// `eval + 90 + 95·lmr_depth ≤ alpha` up to lmr depth 7 (the previous build).
    Formula,
    /// The seed's two tiers: depth 1 with a knight's margin, depth 2 with a rook's, on the
    /// estimate `eval + improvement − hung`, vetoed by the alpha-side table.
    Tiers,
}

/// Which moves the shallow prunes may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// One gate for LMP, EFP, SEE pruning and LMR (the seed's `CanWeReduceOrPruneMove`): a
    /// quiet move, no check given, not the hash, killer or counter move, not in check.
    Strict,
    /// Each mechanism's own conditions, as in the build before the gate (LMP: any quiet move;
    /// EFP: no check given, not in check; SEE: no check given; LMR: one ply less for a killer
    /// or counter move and one for a check): the previous search node for node. Table
    /// LMP and EFP tiers keep to the strict gate either way (their cells were measured there).
    Classic,
}

/// What RFP returns when it cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RfpReturn {
    Beta,
    /// `(661·beta + 363·eval) / 1024` (Stockfish's blend toward beta).
    Blend,
    EvalMinusMargin,
}

/// The mechanisms `actuary calibrate surprise` can shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mechanism {
    Rfp,
    Efp,
    Lmp,
    QFutility,
    Nmp,
    Razor,
    See,
    Lmr,
    /// Singular extension's multi-cut: the node returns when even without the hash move it
    /// fails high (switch `se`).
    MultiCut,
}

impl Mechanism {
    pub const ALL: [Mechanism; 9] = [
        Mechanism::Rfp,
        Mechanism::Efp,
        Mechanism::Lmp,
        Mechanism::QFutility,
        Mechanism::Nmp,
        Mechanism::Razor,
        Mechanism::See,
        Mechanism::Lmr,
        Mechanism::MultiCut,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Rfp => "rfp",
            Mechanism::Efp => "efp",
            Mechanism::Lmp => "lmp",
            Mechanism::QFutility => "qfutility",
            Mechanism::Nmp => "nmp",
            Mechanism::Razor => "razor",
            Mechanism::See => "see",
            Mechanism::Lmr => "lmr",
            Mechanism::MultiCut => "multicut",
        }
    }

    /// The switch that must be on for this mechanism to fire at all, for those off by
    /// default (a calibration run turns it on: a mechanism that never fires has no rate).
    pub fn needs_switch(self) -> Option<&'static str> {
        match self {
            Mechanism::MultiCut => Some("se"),
            _ => None,
        }
    }
    pub fn parse(s: &str) -> Result<Mechanism, String> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!(
                    "unknown mechanism '{s}' (expected one of: {})",
                    Mechanism::ALL.map(|m| m.name()).join(", ")
                )
            })
    }
    /// What the surprise report's slack axis means for this mechanism.
    pub fn slack_meaning(self) -> &'static str {
        match self {
            Mechanism::Rfp => "eval − margin − beta (cp past the threshold)",
            Mechanism::Efp => "alpha − (estimate + margin) (cp past the threshold)",
            Mechanism::Lmp => "alpha − eval (gap bucket of the pruned move)",
            Mechanism::QFutility => "alpha − (futility base + victim)",
            Mechanism::Nmp => "eval − beta",
            Mechanism::Razor => "alpha − (eval + razor margin)",
            Mechanism::See => "alpha − eval (gap bucket)",
            Mechanism::Lmr => "reduction in plies (bucket = plies)",
            Mechanism::MultiCut => "singular beta − beta",
        }
    }
}

/// What a calibration run records (`actuary collect` / `actuary calibrate surprise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeMode {
    /// Alpha-side cells: at every gate-eligible quiet move, did it raise alpha?
    Fh,
    /// Beta-side cells: at every non-PV node whose eval clears beta, did it fail high?
    Rfp,
    /// "Search anyway": the mechanism does not prune; where it would have, the search goes
    /// on and records whether the prune would have been wrong.
    Surprise(Mechanism),
}

/// Material buckets of the surprise cells (`crate::eval::material_bucket`: both armies / 8).
pub const MATERIAL_BUCKETS: usize = 8;
/// Surprise cells per material bucket: remaining depth 0 (quiescence) ..= 10 × slack bucket.
pub const SURPRISE_DEPTH_SLACK: usize = (TABLE_DEPTHS + 1) * GAP_BUCKETS;
/// Surprise cells: material bucket × depth × slack (the eval-variance study reads the
/// material axis; reports roll the others up).
pub const SURPRISE_CELLS: usize = MATERIAL_BUCKETS * SURPRISE_DEPTH_SLACK;

/// A surprise cell: `(material, depth, slack)` with the slack bucketed like the gap.
#[inline]
pub(crate) fn surprise_cell(board: &Board, depth: i32, slack: i32) -> usize {
    crate::eval::material_bucket(board) * SURPRISE_DEPTH_SLACK
        + depth.clamp(0, TABLE_DEPTHS as i32) as usize * GAP_BUCKETS
        + gap_bucket(slack)
}

/// LMR's surprise cell: the slack axis is the reduction in plies (capped at 8).
#[inline]
pub(crate) fn surprise_cell_plies(board: &Board, depth: i32, plies: i32) -> usize {
    crate::eval::material_bucket(board) * SURPRISE_DEPTH_SLACK
        + depth.clamp(0, TABLE_DEPTHS as i32) as usize * GAP_BUCKETS
        + plies.clamp(0, GAP_BUCKETS as i32 - 1) as usize
}

/// `(material, depth, slack)` of a surprise cell.
pub fn surprise_axes(cell: usize) -> [usize; 3] {
    let m = cell / SURPRISE_DEPTH_SLACK;
    let r = cell % SURPRISE_DEPTH_SLACK;
    [m, r / GAP_BUCKETS, r % GAP_BUCKETS]
}

/// EFP's two tiers (the seed's Heinz margins): a knight at depth 1, a rook at depth 2.
pub(crate) const EFP_TIER_MARGIN: [i32; 2] = [SEE_VALUE[1], SEE_VALUE[3]];

/// Every pruning switch in one value. `Default` is the shipped configuration.
#[derive(Clone, Debug)]
pub struct PruneConfig {
    pub gate: Gate,
    pub rfp: Source,
    pub rfp_max_depth: i32,
    pub rfp_return: RfpReturn,
    pub razor: bool,
    pub nmp: bool,
    pub lmp: Source,
    /// With `lmp = table`: the widened allowance schedule (`LMP_ALLOWANCE_WIDE`).
    pub lmp_wide: bool,
    pub efp: EfpMode,
    /// SEE pruning of quiet and losing noisy moves (main search) and of losing captures (QS).
    pub see: bool,
    /// Delta (futility) pruning in quiescence.
    pub qfutility: bool,
    pub lmr: bool,
    /// Singular extensions with multi-cut and a negative extension (on since its SPRT:
    /// +27.7 Elo [+10.6, +44.9], H1, docs/pruning/games/se.json).
    pub singular: bool,
    /// One more ply of reduction for a quiet move when the hash move is a capture or a
    /// promotion (the node's best move is likely tactical).
    pub lmr_ttcap: bool,
    /// After a reduced search beat alpha, re-search one ply deeper when it beat the best
    /// score by far, one shallower when barely.
    pub lmr_deeper: bool,
    /// The search constants SPSA may tune (defaults: their rows in `params.rs`).
    pub tune: Tunables,
    /// Risk knob: percent applied to every table allowance (100 = the schedule as written).
    pub risk: u32,
    pub tables: Arc<PruneTables>,
}

use super::params::{TUNABLES, Tunables};

impl Default for PruneConfig {
    fn default() -> Self {
        Self {
            // Classic until games support the strict gate (README, issue 14).
            gate: Gate::Classic,
            rfp: Source::Formula,
            rfp_max_depth: super::params::RFP_MAX_DEPTH,
            rfp_return: RfpReturn::Blend,
            razor: true,
            nmp: true,
            lmp: Source::Formula,
            lmp_wide: false,
            efp: EfpMode::Formula,
            see: true,
            qfutility: true,
            lmr: true,
            singular: true,
            // On since 2026-12-04 (together: SPRT +17.3 Elo, H1 after 1,408 games,
            // docs/pruning/games/lmrplus.json).
            lmr_ttcap: true,
            lmr_deeper: true,
            tune: Tunables::default(),
            risk: 100,
            tables: PruneTables::embedded(),
        }
    }
}

/// A switch's values, as the UCI protocol types its option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SwitchKind {
    /// `on` / `off` (UCI `check`; also `true`/`false`, `1`/`0`, `yes`/`no`).
    OnOff,
    /// An integer in `min..=max` (UCI `spin`).
    Range { min: i64, max: i64 },
    /// One of these names (UCI `combo`).
    Choice(&'static [&'static str]),
}

impl SwitchKind {
    /// The values as `--help` and error messages write them.
    pub(crate) fn values(&self) -> String {
        match self {
            SwitchKind::OnOff => "on|off".into(),
            SwitchKind::Range { min, max } => format!("{min}..={max}"),
            SwitchKind::Choice(names) => names.join("|"),
        }
    }
}

/// One pruning switch: its name, values and meaning, and how to read and write its field of
/// [`PruneConfig`]. [`SWITCHES`] and the tunable constants' rows ([`TUNABLES`]) are the two
/// declarations from which `set`, `describe`, the UCI `prune.*` option lines and `--set`
/// are all derived ([`knobs`]).
pub(crate) struct Switch {
    pub name: &'static str,
    pub kind: SwitchKind,
    pub help: &'static str,
    /// The field's value as `describe` writes it (a name of `kind`, a number, or on/off).
    pub get: fn(&PruneConfig) -> String,
    /// Set the field from a value already checked against `kind` (a canonical name, a
    /// number in range, or `on`/`off`).
    put: fn(&mut PruneConfig, &str),
}

/// A laboratory knob of [`PruneConfig`]: a mechanism's switch or a tunable constant.
#[derive(Clone, Copy)]
pub(crate) enum Knob {
    Switch(&'static Switch),
    Tunable(&'static super::params::Tunable),
}

impl Knob {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Knob::Switch(s) => s.name,
            Knob::Tunable(t) => t.name,
        }
    }
    pub(crate) fn kind(self) -> SwitchKind {
        match self {
            Knob::Switch(s) => s.kind,
            Knob::Tunable(t) => SwitchKind::Range {
                min: t.min.into(),
                max: t.max.into(),
            },
        }
    }
    /// The knob's value in `cfg`, as `describe` writes it.
    pub(crate) fn get(self, cfg: &PruneConfig) -> String {
        match self {
            Knob::Switch(s) => (s.get)(cfg),
            Knob::Tunable(t) => (t.get)(&cfg.tune).to_string(),
        }
    }
    /// Set from a canonical value (checked against [`Knob::kind`]).
    fn put(self, cfg: &mut PruneConfig, v: &str) {
        match self {
            Knob::Switch(s) => (s.put)(cfg, v),
            Knob::Tunable(t) => (t.set)(&mut cfg.tune, v.parse().expect("checked range")),
        }
    }
}

/// The mechanisms' switches as the Markdown table of docs/chess/search.md (a test keeps the
/// page equal to it; `actuary spsa-input --markdown` prints it after the tunables').
pub fn switches_markdown() -> String {
    let d = PruneConfig::default();
    let mut s = String::from("| switch | values | default | what it does |\n|---|---|---|---|\n");
    for sw in SWITCHES {
        s += &format!(
            "| `prune.{}` | {} | {} | {} |\n",
            sw.name,
            sw.kind.values(),
            (sw.get)(&d),
            sw.help
        );
    }
    s
}

/// Every knob: the switches, then the tunable constants.
pub(crate) fn knobs() -> impl Iterator<Item = Knob> {
    SWITCHES
        .iter()
        .map(Knob::Switch)
        .chain(TUNABLES.iter().map(Knob::Tunable))
}

/// A value a switch field can hold: its canonical name and the names that parse to it.
trait SwitchValue: Sized + Copy {
    const NAMES: &'static [&'static str];
    fn name(self) -> &'static str;
    fn from_name(s: &str) -> Self;
}

macro_rules! switch_value {
    ($t:ty { $($v:ident = $n:literal),* $(,)? }) => {
        impl SwitchValue for $t {
            const NAMES: &'static [&'static str] = &[$($n),*];
            fn name(self) -> &'static str {
                match self { $(<$t>::$v => $n),* }
            }
            fn from_name(s: &str) -> Self {
                match s { $($n => <$t>::$v,)* _ => unreachable!("checked against NAMES") }
            }
        }
    };
}

switch_value!(Gate { Strict = "strict", Classic = "classic" });
switch_value!(Source { Off = "off", Formula = "formula", Table = "table", Union = "union" });
switch_value!(RfpReturn { Beta = "beta", Blend = "blend", EvalMinusMargin = "margin" });
switch_value!(EfpMode { Off = "off", Formula = "formula", Tiers = "tiers" });

fn on_off_name(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// `switch!(name, field, choice Type | on_off | range(min, max), help)`.
macro_rules! switch {
    ($name:literal, $field:ident, choice $t:ty, $help:literal) => {
        Switch {
            name: $name,
            kind: SwitchKind::Choice(<$t as SwitchValue>::NAMES),
            help: $help,
            get: |c| c.$field.name().into(),
            put: |c, v| c.$field = <$t as SwitchValue>::from_name(v),
        }
    };
    ($name:literal, $field:ident, on_off, $help:literal) => {
        Switch {
            name: $name,
            kind: SwitchKind::OnOff,
            help: $help,
            get: |c| on_off_name(c.$field),
            put: |c, v| c.$field = v == "on",
        }
    };
    ($name:literal, $field:ident, range($min:expr, $max:expr), $help:literal) => {
        Switch {
            name: $name,
            kind: SwitchKind::Range {
                min: $min as i64,
                max: $max as i64,
            },
            help: $help,
            get: |c| c.$field.to_string(),
            put: |c, v| c.$field = v.parse().expect("checked against the range"),
        }
    };
}

/// Every pruning switch, in the order `describe` writes them.
pub(crate) const SWITCHES: &[Switch] = &[
    switch!("gate", gate, choice Gate, "which quiet moves the shallow prunes may touch"),
    switch!("rfp", rfp, choice Source, "reverse futility pruning and its margin source"),
    switch!(
        "rfp-depth",
        rfp_max_depth,
        range(1, TABLE_DEPTHS),
        "deepest remaining depth RFP may fire at"
    ),
    switch!("rfp-return", rfp_return, choice RfpReturn, "what RFP returns (margin = eval − margin)"),
    switch!("razor", razor, on_off, "razoring"),
    switch!("nmp", nmp, on_off, "null-move pruning"),
    switch!("lmp", lmp, choice Source, "late move pruning and its source"),
    switch!(
        "lmp-wide",
        lmp_wide,
        on_off,
        "table LMP with the widened allowance schedule"
    ),
    switch!("efp", efp, choice EfpMode, "futility pruning at the parent"),
    switch!(
        "see",
        see,
        on_off,
        "SEE pruning (main search and quiescence)"
    ),
    switch!(
        "qfutility",
        qfutility,
        on_off,
        "delta pruning in quiescence"
    ),
    switch!("lmr", lmr, on_off, "late move reductions"),
    switch!(
        "risk",
        risk,
        range(0, 1000),
        "percent applied to every table allowance"
    ),
    switch!(
        "se",
        singular,
        on_off,
        "singular extensions (with multi-cut and a negative extension)"
    ),
    switch!(
        "lmr-ttcap",
        lmr_ttcap,
        on_off,
        "late move reductions: one more ply for quiet moves when the hash move is a capture"
    ),
    switch!(
        "lmr-deeper",
        lmr_deeper,
        on_off,
        "late move reductions: the re-search after a fail high goes deeper or shallower by its margin"
    ),
];

/// Aliases accepted for a value (case-insensitive): the canonical name they stand for.
fn canonical(kind: SwitchKind, v: &str) -> Result<String, String> {
    let l = v.to_ascii_lowercase();
    match kind {
        SwitchKind::OnOff => match l.as_str() {
            "on" | "true" | "1" | "yes" => Ok("on".into()),
            "off" | "false" | "0" | "no" => Ok("off".into()),
            _ => Err(format!("expected on or off, got '{v}'")),
        },
        SwitchKind::Range { min, max } => l
            .parse::<i64>()
            .ok()
            .filter(|x| (min..=max).contains(x))
            .map(|x| x.to_string())
            .ok_or_else(|| format!("expected {min}..={max}, got '{v}'")),
        SwitchKind::Choice(names) => {
            // `on`/`true` mean the formula where there is one; `false` means off.
            let l = match l.as_str() {
                "on" | "true" if names.contains(&"formula") => "formula".to_string(),
                "false" if names.contains(&"off") => "off".to_string(),
                "eval-margin" if names.contains(&"margin") => "margin".to_string(),
                _ => l,
            };
            if names.contains(&l.as_str()) {
                Ok(l)
            } else {
                let list = match names {
                    [a, b] => format!("{a} or {b}"),
                    [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
                    [] => String::new(),
                };
                Err(format!("expected {list}, got '{v}'"))
            }
        }
    }
}

impl PruneConfig {
    /// Apply one `name=value` switch (names of `knobs`; case-insensitive, `_` = `-`).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let key = name.trim().to_ascii_lowercase().replace('_', "-");
        let Some(knob) = knobs().find(|k| k.name() == key) else {
            return Err(format!(
                "unknown switch '{name}' (expected one of: {})",
                knobs().map(Knob::name).collect::<Vec<_>>().join(", ")
            ));
        };
        let v = canonical(knob.kind(), value.trim()).map_err(|e| format!("{key}: {e}"))?;
        knob.put(self, &v);
        Ok(())
    }

    /// Apply `name=value[,name=value...]`.
    pub fn set_all(&mut self, spec: &str) -> Result<(), String> {
        for kv in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("expected name=value, got '{kv}'"))?;
            self.set(k, v)?;
        }
        Ok(())
    }

    /// One line naming every switch's value (for reports and `info string`).
    pub fn describe(&self) -> String {
        knobs()
            .map(|k| format!("{}={}", k.name(), k.get(self)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl PruneConfig {
    /// Table LMP's allowance by depth − 1 (thousandths of a percent): the schedule (widened
    /// with `lmp-wide`) × risk.
    pub fn lmp_schedule(&self) -> [u32; 11] {
        let schedule = if self.lmp_wide {
            &LMP_ALLOWANCE_WIDE
        } else {
            &LMP_ALLOWANCE
        };
        schedule.map(|a| a * self.risk / 100)
    }
}

// ----- The rules of one search ------------------------------------------------------------

/// The margin and allowance sources of one search, chosen once from a [`PruneConfig`] when
/// the search starts ([`Rules::new`]): the node function asks each rule a question and never
/// branches on which variant is configured. A mechanism that is off is a source that never
/// fires (a margin no evaluation clears, a quiet count no node reaches).
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    /// RFP margin by depth − 1, improving and opponent-hung: the formula, the beta-side
    /// table's where it has the samples, or the smaller of the two; [`RFP_NEVER`] when off.
    pub rfp_margin: [[[i32; 2]; 2]; TABLE_DEPTHS],
    /// Does the margin depend on "the opponent left something hanging" (a table source)?
    pub rfp_reads_hung: bool,
    pub rfp_max_depth: i32,
    pub rfp_return: RfpReturn,
    /// Formula LMP: quiets tried at depth (0..=`LMP_MAX_DEPTH`) and improving before the rest
    /// are skipped; `usize::MAX` when the formula is not a source.
    pub lmp_quiets: [[usize; 2]; super::params::LMP_MAX_DEPTH as usize + 1],
    /// Table LMP: the allowance schedule × risk by depth − 1 (`None`: the table is not a
    /// source).
    pub lmp_allowance: Option<[u32; 11]>,
    pub efp: Efp,
    /// Does any rule read the alpha-side cell of a gated quiet move (table LMP, EFP tiers)?
    pub reads_fh_cell: bool,
}

/// Futility pruning at the parent, as chosen for a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Efp {
    Off,
    /// `eval + margin[lmr_depth] ≤ alpha` up to LMR depth `FP_MAX_DEPTH`.
    Formula([i32; super::params::FP_MAX_DEPTH as usize + 1]),
    /// The seed's two tiers on `eval + improvement − hung` (a knight at depth 1, a rook at
    /// depth 2), vetoed where the alpha-side bound is at least `veto`.
    Tiers {
        veto: u32,
    },
}

impl Rules {
    pub(crate) fn new(cfg: &PruneConfig) -> Rules {
        use super::params::{LMP_MAX_DEPTH, futility_margin, lmp_limit, rfp_margin_with};
        let t = &cfg.tune;
        let mut rfp_margin = [[[RFP_NEVER; 2]; 2]; TABLE_DEPTHS];
        for (d, by_imp) in rfp_margin.iter_mut().enumerate() {
            for (imp, by_hung) in by_imp.iter_mut().enumerate() {
                for (hung, m) in by_hung.iter_mut().enumerate() {
                    let formula =
                        rfp_margin_with(t.rfp_margin, t.rfp_improving, d as i32 + 1, imp == 1);
                    let table = cfg.tables.rfp_margin[d][imp][hung];
                    *m = match cfg.rfp {
                        Source::Off => RFP_NEVER,
                        Source::Formula => formula,
                        Source::Table => table.unwrap_or(formula),
                        Source::Union => table.map_or(formula, |t| t.min(formula)),
                    };
                }
            }
        }
        let formula_lmp = matches!(cfg.lmp, Source::Formula | Source::Union);
        let mut lmp_quiets = [[usize::MAX; 2]; LMP_MAX_DEPTH as usize + 1];
        if formula_lmp {
            for (d, row) in lmp_quiets.iter_mut().enumerate() {
                *row = [false, true].map(|imp| lmp_limit(t.lmp_base, d as i32, imp));
            }
        }
        let table_lmp = matches!(cfg.lmp, Source::Table | Source::Union);
        let efp = match cfg.efp {
            EfpMode::Off => Efp::Off,
            EfpMode::Formula => Efp::Formula(std::array::from_fn(|d| {
                futility_margin(t.fp_base, t.fp_per_depth, d as i32)
            })),
            EfpMode::Tiers => Efp::Tiers {
                veto: EFP_VETO * cfg.risk / 100,
            },
        };
        Rules {
            rfp_margin,
            rfp_reads_hung: matches!(cfg.rfp, Source::Table | Source::Union),
            rfp_max_depth: cfg.rfp_max_depth,
            rfp_return: cfg.rfp_return,
            lmp_quiets,
            lmp_allowance: table_lmp.then(|| cfg.lmp_schedule()),
            efp,
            reads_fh_cell: table_lmp || cfg.efp == EfpMode::Tiers,
        }
    }

    /// The RFP margin at `depth` (1..=`TABLE_DEPTHS`).
    #[inline]
    pub(crate) fn rfp_margin(&self, depth: i32, improving: bool, opp_hung: bool) -> i32 {
        self.rfp_margin[depth_index(depth)][improving as usize][opp_hung as usize]
    }

    /// What RFP returns when it cuts with `margin`.
    #[inline]
    pub(crate) fn rfp_value(&self, eval: i32, beta: i32, margin: i32) -> i32 {
        match self.rfp_return {
            RfpReturn::Beta => beta,
            RfpReturn::Blend => super::params::rfp_return(eval, beta),
            RfpReturn::EvalMinusMargin => eval - margin,
        }
    }

    /// Formula LMP: have enough quiets been tried at this depth to skip the rest?
    #[inline]
    pub(crate) fn lmp_formula_skips(
        &self,
        depth: i32,
        improving: bool,
        quiets_seen: usize,
    ) -> bool {
        depth <= super::params::LMP_MAX_DEPTH
            && quiets_seen >= self.lmp_quiets[depth.max(0) as usize][improving as usize]
    }

    /// Table LMP: is this gated move's pessimistic fail-high bound `fh` under the allowance
    /// at `depth` for a move with history `hist`? The schedule × risk, halved for a move
    /// history likes and doubled for one it has seen fail (the seed's "plus this
    /// move-identity's dynamic history").
    #[inline]
    pub(crate) fn lmp_table_prunes(&self, depth: i32, hist: i32, fh: u32) -> bool {
        let Some(sched) = &self.lmp_allowance else {
            return false;
        };
        let a = sched[(depth.max(1) as usize - 1).min(10)];
        let a = if hist > 0 {
            a / 2
        } else if hist < -super::params::HISTORY_MAX / 2 {
            a * 2
        } else {
            a
        };
        fh < a
    }

    /// Futility pruning at the parent: how far below alpha the optimistic bound of the move
    /// is (`None`: it may not be pruned). `hung` and `fh` are the move's alpha-side bucket
    /// and bound (read only by the tiers).
    #[inline]
    pub(crate) fn efp_slack(&self, f: EfpInput) -> Option<i32> {
        match self.efp {
            Efp::Off => None,
            Efp::Formula(margin) => {
                let bound = f.eval + margin.get(f.lmr_depth as usize).copied()?;
                (bound <= f.alpha).then_some(f.alpha - bound)
            }
            Efp::Tiers { veto } => {
                let estimate = f.eval + f.improvement.unwrap_or(0) - HUNG_VALUE[f.hung];
                let tier = usize::try_from(f.depth - 1).ok()?;
                let bound = estimate + *EFP_TIER_MARGIN.get(tier)?;
                (bound <= f.alpha && f.fh() < veto).then_some(f.alpha - bound)
            }
        }
    }
}

/// What [`Rules::efp_slack`] reads of a move.
#[derive(Clone, Copy)]
pub(crate) struct EfpInput<'a> {
    pub depth: i32,
    pub lmr_depth: i32,
    pub eval: i32,
    pub alpha: i32,
    pub improvement: Option<i32>,
    pub hung: usize,
    pub cell: usize,
    pub tables: &'a PruneTables,
}

impl EfpInput<'_> {
    #[inline]
    fn fh(&self) -> u32 {
        self.tables.fh(self.cell)
    }
}

// ----- Tables -----------------------------------------------------------------------------------

/// The alpha-side table file built into the engine.
pub const EMBEDDED_FH: &str = include_str!("../../../../data/chess/fh-table.txt");
/// The beta-side table file built into the engine.
pub const EMBEDDED_RFP: &str = include_str!("../../../../data/chess/rfp-table.txt");

pub const FH_MAGIC: &str = "actuary-fh-table v1";
pub const RFP_MAGIC: &str = "actuary-rfp-table v1";
/// Upper bound stored for a cell without samples: never prunes.
pub(crate) const NO_DATA: u32 = u32::MAX;
/// The RFP margin of a row marked `never`: no eval clears it.
pub const RFP_NEVER: i32 = 2 * super::params::MATE;

/// The measured tables the search reads: the alpha-side Wilson upper bounds per cell, and
/// RFP margins per (depth, improving, opponent-hung), derived when the table was written
/// (`None` = too few samples: the formula decides).
#[derive(Clone, Debug, PartialEq)]
pub struct PruneTables {
    pub fh_upper: Vec<u32>,
    pub rfp_margin: [[[Option<i32>; 2]; 2]; TABLE_DEPTHS],
    /// First comment line of each file (which pool and depth made it).
    pub fh_source: String,
    pub rfp_source: String,
}

/// Why a table file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PruneTableError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not a table file (first line must be '{expected}')")]
    Magic {
        file: String,
        expected: &'static str,
    },
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: usize,
        message: String,
    },
}

impl PruneTables {
    /// The tables built into the engine (parsed once).
    pub(crate) fn embedded() -> Arc<PruneTables> {
        static T: OnceLock<Arc<PruneTables>> = OnceLock::new();
        T.get_or_init(|| {
            Arc::new(
                PruneTables::parse(EMBEDDED_FH, "<embedded fh>", EMBEDDED_RFP, "<embedded rfp>")
                    .expect("embedded pruning tables parse (checked by a test)"),
            )
        })
        .clone()
    }

    /// Read the two files (either may be the embedded one: pass `None`).
    pub fn load(fh: Option<&Path>, rfp: Option<&Path>) -> Result<PruneTables, PruneTableError> {
        let read = |p: Option<&Path>, embedded: &'static str, name: &str| match p {
            None => Ok((embedded.to_string(), name.to_string())),
            Some(p) => crate::datafile::read_data_file(p)
                .map(|t| (t, p.display().to_string()))
                .map_err(|source| PruneTableError::Io {
                    file: p.display().to_string(),
                    source,
                }),
        };
        let (f, fname) = read(fh, EMBEDDED_FH, "<embedded fh>")?;
        let (r, rname) = read(rfp, EMBEDDED_RFP, "<embedded rfp>")?;
        Self::parse(&f, &fname, &r, &rname)
    }

    pub fn parse(
        fh: &str,
        fh_name: &str,
        rfp: &str,
        rfp_name: &str,
    ) -> Result<PruneTables, PruneTableError> {
        let mut t = PruneTables {
            fh_upper: vec![NO_DATA; FH_CELLS],
            rfp_margin: [[[None; 2]; 2]; TABLE_DEPTHS],
            fh_source: String::new(),
            rfp_source: String::new(),
        };
        t.fh_source = parse_lines(fh, fh_name, FH_MAGIC, |tok, err| {
            // cell <depth> <hung> <gap> <late> <imp> <n> <raised> <upper>
            if tok[0] != "cell" || tok.len() != 9 {
                return Err(err(
                    "expected 'cell depth hung gap late imp n raised upper'",
                ));
            }
            let v = nums(&tok[1..], &err)?;
            let (d, h, g, l, i) = (v[0], v[1], v[2], v[3], v[4]);
            if !(1..=TABLE_DEPTHS as u64).contains(&d)
                || h >= HUNG_BUCKETS as u64
                || g >= GAP_BUCKETS as u64
                || l >= LATE_BUCKETS as u64
                || i >= IMPROVE_BUCKETS as u64
            {
                return Err(err("axis out of range"));
            }
            if v[6] > v[5] {
                return Err(err("more raises than trials"));
            }
            let cell = ((((d as usize - 1) * HUNG_BUCKETS + h as usize) * GAP_BUCKETS
                + g as usize)
                * LATE_BUCKETS
                + l as usize)
                * IMPROVE_BUCKETS
                + i as usize;
            t.fh_upper[cell] = u32::try_from(v[7]).map_err(|_| err("upper bound too large"))?;
            Ok(())
        })?;
        t.rfp_source = parse_lines(rfp, rfp_name, RFP_MAGIC, |tok, err| {
            match tok[0] {
                // cell lines are the evidence; the engine reads the margins.
                "cell" if tok.len() == 8 => {
                    nums(&tok[1..], &err)?;
                    Ok(())
                }
                // margin <depth> <improving> <opp_hung> <cp|formula>
                "margin" if tok.len() == 5 => {
                    let v = nums(&tok[1..4], &err)?;
                    if !(1..=TABLE_DEPTHS as u64).contains(&v[0]) || v[1] > 1 || v[2] > 1 {
                        return Err(err("axis out of range"));
                    }
                    let m = match tok[4] {
                        "formula" => None,
                        "never" => Some(RFP_NEVER),
                        s => Some(
                            s.parse::<i32>()
                                .ok()
                                .filter(|m| (0..=3000).contains(m))
                                .ok_or_else(|| {
                                    err("margin must be 0..=3000, 'never' or 'formula'")
                                })?,
                        ),
                    };
                    t.rfp_margin[v[0] as usize - 1][v[1] as usize][v[2] as usize] = m;
                    Ok(())
                }
                _ => Err(err(
                    "expected 'cell depth improving hung gap n failed_low upper' or 'margin depth improving hung cp|never|formula'",
                )),
            }
        })?;
        Ok(t)
    }

    /// Pessimistic fail-high bound of an alpha-side cell, thousandths of a percent.
    #[inline]
    pub fn fh(&self, cell: usize) -> u32 {
        self.fh_upper[cell]
    }

    /// Cells with data.
    pub fn fh_cells_with_data(&self) -> usize {
        self.fh_upper.iter().filter(|&&u| u != NO_DATA).count()
    }
}

fn nums<E>(tok: &[&str], err: &impl Fn(&str) -> E) -> Result<Vec<u64>, E> {
    tok.iter()
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| err("expected unsigned integers"))
        })
        .collect()
}

/// Check the magic line, skip comments, hand every other line's tokens to `f`; returns the
/// first comment line (the provenance).
fn parse_lines(
    text: &str,
    file: &str,
    magic: &'static str,
    mut f: impl FnMut(&[&str], &dyn Fn(&str) -> PruneTableError) -> Result<(), PruneTableError>,
) -> Result<String, PruneTableError> {
    if text.lines().next().map(str::trim) != Some(magic) {
        return Err(PruneTableError::Magic {
            file: file.to_string(),
            expected: magic,
        });
    }
    // The whole file, sealed: a table cut short would otherwise parse, and the lost cells
    // fall back to the formulas without a word.
    let text = crate::datafile::unseal(text).map_err(|message| PruneTableError::Line {
        file: file.to_string(),
        line: text.lines().count(),
        message,
    })?;
    let mut lines = text.lines().enumerate();
    lines.next();
    let mut provenance = String::new();
    for (i, line) in lines {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = t.strip_prefix('#') {
            if provenance.is_empty() {
                provenance = c.trim().to_string();
            }
            continue;
        }
        let tok: Vec<&str> = t.split_whitespace().collect();
        let err = |m: &str| PruneTableError::Line {
            file: file.to_string(),
            line: i + 1,
            message: m.to_string(),
        };
        f(&tok, &err)?;
    }
    Ok(provenance)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults of the tuned constants are the SPSA tune's result (issue 33), value for
    /// value: `docs/tune/spsa/values.txt` is what the tune wrote, `params.rs` what the engine
    /// plays, and a change to either shows here.
    #[test]
    fn tuned_defaults_are_the_spsa_values() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/tune/spsa/values.txt"
        );
        let text = std::fs::read_to_string(path).expect("docs/tune/spsa/values.txt");
        let ours: std::collections::HashMap<String, String> =
            super::super::params::spsa_lines(&Tunables::default())
                .iter()
                .map(|l| {
                    let f: Vec<&str> = l.split(", ").collect();
                    (f[0].to_string(), f[2].to_string())
                })
                .collect();
        let mut n = 0;
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            assert_eq!(ours.get(f[0]).map(String::as_str), Some(f[2]), "{line}");
            n += 1;
        }
        assert_eq!(n, 16, "the tune covered 16 constants");
    }

    #[test]
    fn buckets_follow_their_edges() {
        assert_eq!(gap_bucket(-500), 0);
        assert_eq!(gap_bucket(0), 0);
        assert_eq!(gap_bucket(1), 1);
        assert_eq!(gap_bucket(30), 1);
        assert_eq!(gap_bucket(31), 2);
        assert_eq!(gap_bucket(701), 8);
        assert_eq!(late_bucket(1), 0);
        assert_eq!(late_bucket(5), 4);
        assert_eq!(late_bucket(6), 4);
        assert_eq!(late_bucket(7), 5);
        assert_eq!(late_bucket(100), 8);
        assert_eq!(rfp_gap_bucket(0), 0);
        assert_eq!(rfp_gap_bucket(24), 0);
        assert_eq!(rfp_gap_bucket(25), 1);
        assert_eq!(rfp_gap_bucket(5000), 9);
        assert_eq!(improve_bucket(None), 1);
        assert_eq!(improve_bucket(Some(-50)), 0);
        assert_eq!(improve_bucket(Some(49)), 1);
        assert_eq!(improve_bucket(Some(50)), 2);
        assert_eq!(depth_index(0), 0);
        assert_eq!(depth_index(14), 9);
    }

    #[test]
    fn cells_round_trip_through_their_axes() {
        let c = fh_cell(7, 3, 120, 10, Some(80));
        assert_eq!(fh_axes(c), [7, 3, 4, 6, 2]);
        assert!(c < FH_CELLS);
        assert_eq!(fh_axes(FH_CELLS - 1), [10, 4, 8, 8, 2]);
        let r = rfp_cell(4, true, false, 160);
        assert_eq!(rfp_axes(r), [4, 1, 0, 5]);
        assert_eq!(rfp_axes(RFP_CELLS - 1), [10, 1, 1, 9]);
    }

    #[test]
    fn hung_bucket_reads_the_exchange() {
        // Qd1-d5?? into a pawn on e6 and a knight on c7: the queen is lost for nothing much.
        let b: Board = "4k3/2n5/4p3/8/8/8/8/3QK3 w - - 0 1".parse().unwrap();
        let mv = "d1d5".parse().unwrap();
        assert_eq!(hung_bucket(&b, mv), 4);
        let safe = "d1d2".parse().unwrap();
        assert_eq!(hung_bucket(&b, safe), 0);
        // A knight stepping where a pawn takes it.
        let b: Board = "4k3/8/4p3/8/8/2N5/8/4K3 w - - 0 1".parse().unwrap();
        assert_eq!(hung_bucket(&b, "c3d5".parse().unwrap()), 2);
    }

    #[test]
    fn opponent_hung_sees_free_and_cheaper_captures() {
        // Black knight on d5 attacked by the e4 pawn, defended: cheaper attacker wins it.
        let b: Board = "4k3/4p3/8/3n4/4P3/8/8/4K3 w - - 0 1".parse().unwrap();
        assert!(opponent_hung(&b));
        // Black pawn on d5 attacked by the e4 pawn and defended by e6: nothing to win.
        let b: Board = "4k3/8/4p3/3p4/4P3/8/8/4K3 w - - 0 1".parse().unwrap();
        assert!(!opponent_hung(&b));
        // An undefended rook attacked by a queen.
        let b: Board = "4k3/8/8/3r4/8/8/3Q4/4K3 w - - 0 1".parse().unwrap();
        assert!(opponent_hung(&b));
    }

    #[test]
    fn switches_parse_and_reject() {
        let mut c = PruneConfig::default();
        c.set_all("rfp=table, lmp=table,efp=off,RFP_RETURN=beta,risk=150")
            .unwrap();
        assert_eq!(c.rfp, Source::Table);
        assert_eq!(c.lmp, Source::Table);
        assert_eq!(c.efp, EfpMode::Off);
        assert_eq!(c.rfp_return, RfpReturn::Beta);
        assert_eq!(c.risk, 150);
        assert!(c.describe().contains("rfp=table"));
        assert!(c.set("lmp", "maybe").unwrap_err().contains("lmp"));
        assert!(c.set("bogus", "on").unwrap_err().contains("unknown switch"));
        assert!(c.set("rfp-depth", "11").is_err());
        assert!(c.set_all("rfp").is_err());
        assert!(Mechanism::parse("LMR").is_ok());
        assert!(
            Mechanism::parse("futility")
                .unwrap_err()
                .contains("expected one of")
        );
    }

    #[test]
    fn allowance_scales_with_risk_and_history() {
        let mut c = PruneConfig::default();
        let prunes =
            |c: &PruneConfig, depth, hist, fh| Rules::new(c).lmp_table_prunes(depth, hist, fh);
        // The formula alone: the table never prunes.
        assert!(!prunes(&c, 1, 0, 0));
        c.lmp = Source::Table;
        assert!(prunes(&c, 1, 0, 199) && !prunes(&c, 1, 0, 200));
        assert!(prunes(&c, 3, 0, 149) && !prunes(&c, 3, 0, 150));
        assert!(!prunes(&c, 11, 0, 0));
        assert!(prunes(&c, 1, 100, 99) && !prunes(&c, 1, 100, 100));
        assert!(prunes(&c, 1, -10_000, 399) && !prunes(&c, 1, -10_000, 400));
        c.risk = 50;
        assert!(prunes(&c, 1, 0, 99) && !prunes(&c, 1, 0, 100));
    }

    /// Each source gives the margins of its rule, and a mechanism that is off never fires.
    #[test]
    fn rules_choose_each_source_once() {
        let mut c = PruneConfig::default();
        let r = Rules::new(&c);
        // Formula RFP: 70 a ply, 62 less when improving (the tuned defaults).
        assert_eq!(r.rfp_margin(3, false, true), 210);
        assert_eq!(r.rfp_margin(3, true, false), 148);
        assert!(!r.rfp_reads_hung);
        // Formula LMP: 5 + depth², halved when not improving.
        assert!(r.lmp_formula_skips(2, true, 9) && !r.lmp_formula_skips(2, true, 8));
        assert!(r.lmp_formula_skips(2, false, 4) && !r.lmp_formula_skips(2, false, 3));
        assert!(!r.lmp_formula_skips(9, false, 1000));
        c.rfp = Source::Off;
        c.lmp = Source::Off;
        c.efp = EfpMode::Off;
        let r = Rules::new(&c);
        assert_eq!(r.rfp_margin(1, true, true), RFP_NEVER);
        assert!(!r.lmp_formula_skips(1, false, 1000));
        assert!(!r.reads_fh_cell);
        // A table margin where the table has one, the formula elsewhere; union: the smaller.
        let mut t = (*PruneTables::embedded()).clone();
        t.rfp_margin[2][0][1] = Some(40);
        t.rfp_margin[2][0][0] = Some(400);
        t.rfp_margin[3][0][0] = None;
        c.tables = Arc::new(t);
        c.rfp = Source::Table;
        let r = Rules::new(&c);
        assert!(r.rfp_reads_hung);
        assert_eq!(r.rfp_margin(3, false, true), 40);
        assert_eq!(r.rfp_margin(3, false, false), 400);
        assert_eq!(r.rfp_margin(4, false, false), 280);
        c.rfp = Source::Union;
        assert_eq!(Rules::new(&c).rfp_margin(3, false, false), 210);
    }

    #[test]
    fn efp_sources_bound_the_move() {
        let mut c = PruneConfig::default();
        let tables = PruneTables::embedded();
        let input = |lmr_depth, alpha| EfpInput {
            depth: 1,
            lmr_depth,
            eval: 0,
            alpha,
            improvement: Some(30),
            hung: 0,
            cell: 0,
            tables: &tables,
        };
        // Formula: 95 + 90 per LMR ply, up to LMR depth 7.
        let r = Rules::new(&c);
        assert_eq!(r.efp_slack(input(1, 200)), Some(15));
        assert_eq!(r.efp_slack(input(1, 184)), None);
        assert_eq!(r.efp_slack(input(8, 10_000)), None);
        // Tiers: eval + improvement + a knight (depth 1), where the table does not veto.
        c.efp = EfpMode::Tiers;
        let r = Rules::new(&c);
        let knight = EFP_TIER_MARGIN[0];
        let cell_with_no_data = (0..FH_CELLS).find(|&i| tables.fh(i) == NO_DATA).unwrap();
        let vetoed = EfpInput {
            cell: cell_with_no_data,
            ..input(0, 30 + knight + 5)
        };
        assert_eq!(r.efp_slack(vetoed), None, "a cell without data vetoes");
        let cell_safe = (0..FH_CELLS).find(|&i| tables.fh(i) < EFP_VETO).unwrap();
        let ok = EfpInput {
            cell: cell_safe,
            ..input(0, 30 + knight + 5)
        };
        assert_eq!(r.efp_slack(ok), Some(5));
    }

    #[test]
    fn embedded_tables_parse() {
        let t = PruneTables::embedded();
        assert_eq!(t.fh_upper.len(), FH_CELLS);
        // Every `cell` line of the embedded file filled a cell, every `margin` line a margin
        // (a table that parsed to nothing would leave the formulas to decide silently).
        let lines = |text: &str, word: &str| {
            text.lines()
                .filter(|l| l.split_whitespace().next() == Some(word))
                .count()
        };
        let cells = lines(EMBEDDED_FH, "cell");
        assert!(cells > 1000, "{cells} cells in the embedded fh table");
        assert_eq!(t.fh_cells_with_data(), cells);
        let margins = t.rfp_margin.iter().flatten().flatten().flatten().count();
        assert!(margins >= 10, "{margins} margins in the embedded rfp table");
        // (`formula` lines leave the formula to decide: no margin.)
        let formula = EMBEDDED_RFP
            .lines()
            .filter(|l| l.starts_with("margin ") && l.ends_with(" formula"))
            .count();
        assert_eq!(margins, lines(EMBEDDED_RFP, "margin") - formula);
        assert!(
            t.fh_source.contains("actuary collect fh"),
            "{}",
            t.fh_source
        );
    }

    #[test]
    fn bad_table_lines_name_file_and_line() {
        use crate::datafile::seal;
        let e = PruneTables::parse("nope", "a.txt", RFP_MAGIC, "b.txt").unwrap_err();
        assert!(e.to_string().starts_with("a.txt: not a table file"), "{e}");
        let empty_fh = seal(FH_MAGIC);
        let fh = seal(&format!("{FH_MAGIC}\n# x\ncell 1 0 0 0 0 10 11 5\n"));
        let e = PruneTables::parse(&fh, "a.txt", &seal(RFP_MAGIC), "b.txt").unwrap_err();
        assert_eq!(e.to_string(), "a.txt:3: more raises than trials");
        let fh = seal(&format!("{FH_MAGIC}\ncell 11 0 0 0 0 10 1 5\n"));
        let e = PruneTables::parse(&fh, "a.txt", &seal(RFP_MAGIC), "b.txt").unwrap_err();
        assert_eq!(e.to_string(), "a.txt:2: axis out of range");
        let rfp = seal(&format!("{RFP_MAGIC}\nmargin 1 0 0 -5\n"));
        let e = PruneTables::parse(&empty_fh, "a.txt", &rfp, "b.txt").unwrap_err();
        assert!(e.to_string().starts_with("b.txt:2: margin"), "{e}");
        let fh = seal(&format!("{FH_MAGIC}\ncell 2 1 3 3 2 1000 3 917\n"));
        let rfp = seal(&format!(
            "{RFP_MAGIC}\nmargin 3 1 0 140\nmargin 4 0 1 formula\n"
        ));
        let t = PruneTables::parse(&fh, "a", &rfp, "b").unwrap();
        assert_eq!(t.fh(fh_cell(2, 1, 100, 4, Some(60))), 917);
        assert_eq!(t.rfp_margin[2][1][0], Some(140));
        assert_eq!(t.rfp_margin[3][0][1], None);
        assert_eq!(t.fh_cells_with_data(), 1);
        // Issue 36: a table cut short, or changed, is refused with the file's name (it used
        // to parse, the lost cells silently falling back to the formulas).
        let cut = &EMBEDDED_FH[..EMBEDDED_FH.len() / 2];
        let e = PruneTables::parse(cut, "cut.txt", EMBEDDED_RFP, "b").unwrap_err();
        assert!(
            e.to_string().starts_with("cut.txt:") && e.to_string().contains("cut short"),
            "{e}"
        );
        let changed = EMBEDDED_RFP.replacen("margin 1 0 0 700", "margin 1 0 0 600", 1);
        assert_ne!(changed, EMBEDDED_RFP);
        let e = PruneTables::parse(EMBEDDED_FH, "a", &changed, "changed.txt").unwrap_err();
        assert!(e.to_string().contains("checksum mismatch"), "{e}");
        let unsealed = format!("{FH_MAGIC}\ncell 2 1 3 3 2 1000 3 917\n");
        assert!(PruneTables::parse(&unsealed, "old.txt", EMBEDDED_RFP, "b").is_err());
    }
}
