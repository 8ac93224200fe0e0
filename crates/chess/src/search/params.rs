//! Every search margin and rule threshold, in one place.
//!
//! Two kinds of constant live here. The fixed ones (`const`s: depth limits, mate scores) are
//! part of how the search is built. The tunable ones are rows of one `tunables!` table:
//! each row (field, option name, default, range, SPSA step, meaning) is the only place the
//! constant is declared, and the UCI option `prune.<name>`, `--set <name>=`, `actuary
//! spsa-input` and the table in docs/chess/search.md are all generated from it.
//!
//! The 16 tunable defaults are the SPSA tune of issue 33 (`docs/tune/spsa/values.txt`:
//! 10,000 game pairs at 1+0.01, then an SPRT(0, 10) at 2+0.02 against the values before,
//! `docs/tune/spsa/params.txt`). A test keeps them equal to that file.

/// Deepest ply the search will ever reach (arrays are sized from it).
pub(crate) const MAX_PLY: usize = 128;

pub(crate) const INFINITE: i32 = 32_001;
pub(crate) const MATE: i32 = 32_000;
/// Scores beyond this are mates (with distance encoded as `MATE - ply`).
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32 * 2;
pub(crate) const DRAW: i32 = 0;

// --- Aspiration windows -------------------------------------------------------------
pub(crate) const ASPIRATION_MIN_DEPTH: i32 = 5;

// --- Reverse futility pruning (static null move) ------------------------------------
pub(crate) const RFP_MAX_DEPTH: i32 = 8;

/// RFP margin with the given per-depth margin and improving bonus.
#[inline]
pub(crate) fn rfp_margin_with(per_depth: i32, bonus: i32, depth: i32, improving: bool) -> i32 {
    per_depth * depth - if improving { bonus } else { 0 }
}

/// The value RFP returns when it fires: Stockfish's blend biased toward beta (see
/// docs/design/seeds/extended-pruning-depth.md, "What return value RFP should use").
#[inline]
pub(crate) fn rfp_return(eval: i32, beta: i32) -> i32 {
    (661 * beta + 363 * eval) / 1024
}

// --- Null move ----------------------------------------------------------------------
pub(crate) const NMP_MIN_DEPTH: i32 = 3;
/// From this depth a null-move cutoff is verified by a reduced normal search.
pub(crate) const NMP_VERIFY_DEPTH: i32 = 12;

/// Null-move depth reduction: `base + depth / depth_div + clamp((eval − beta) / eval_div, 0, 3)`.
#[inline]
pub(crate) fn nmp_reduction(
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
pub(crate) const RAZOR_MAX_DEPTH: i32 = 3;

// --- Capture ordering ----------------------------------------------------------------------
/// Capture history's divisor in a capture's ordering score: at 16 it moves a capture at most
/// ±1,024 against 3,500 between victim classes, so MVV-LVA decides and history breaks ties
/// (Ethereal's divisor 1, where history can outweigh a victim class, lost: docs/chess/search.md).
pub(crate) const CAPHIST_DIV: i32 = 16;

// --- Singular extensions (switch `se`) ---------------------------------------------------
/// Shallowest depth a hash move is tested for being singular.
pub(crate) const SE_MIN_DEPTH: i32 = 8;
/// The hash entry must be at least this close to the node's depth.
pub(crate) const SE_TT_DEPTH_MARGIN: i32 = 3;
/// The test's window: the hash score less this much per ply of depth.
pub(crate) const SE_BETA_PER_DEPTH: i32 = 1;

// --- Internal iterative reduction ------------------------------------------------------
pub(crate) const IIR_MIN_DEPTH: i32 = 4;

// --- Late move pruning ---------------------------------------------------------------
pub(crate) const LMP_MAX_DEPTH: i32 = 8;

/// Quiet moves searched before the rest are pruned: `base + depth²`, halved when not improving.
#[inline]
pub(crate) fn lmp_limit(base: i32, depth: i32, improving: bool) -> usize {
    let n = base + depth * depth;
    (if improving { n } else { n / 2 }) as usize
}

// --- Futility pruning (parent node, quiet moves) --------------------------------------
pub(crate) const FP_MAX_DEPTH: i32 = 7;

#[inline]
pub(crate) fn futility_margin(base: i32, per_depth: i32, lmr_depth: i32) -> i32 {
    base + per_depth * lmr_depth
}

// --- SEE pruning in the main search ----------------------------------------------------
pub(crate) const SEE_PRUNE_MAX_DEPTH: i32 = 8;

// --- Quiescence ------------------------------------------------------------------------
/// Delta (futility) margin in quiescence: stand pat + victim + this cannot reach alpha.
pub const QS_FUTILITY_MARGIN: i32 = 150;

// --- Late move reductions --------------------------------------------------------------
pub(crate) const LMR_MIN_DEPTH: i32 = 3;

/// Log-based reduction table `[depth][move number]` for base and divisor in hundredths.
pub(crate) fn lmr_table(base_centi: i32, divisor_centi: i32) -> Box<[[u8; 64]; 64]> {
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
pub(crate) const HISTORY_MAX: i32 = 16_384;

#[inline]
pub(crate) fn history_bonus(depth: i32) -> i32 {
    (depth * depth * 16 + depth * 32).min(1_600)
}

// --- The tunable constants -------------------------------------------------------------

/// One tunable search constant: what the option, `--set`, the SPSA input and the docs table
/// are generated from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tunable {
    /// The name after `prune.` (UCI) and in `--set`.
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    /// Its SPSA step at the end of a run (OpenBench's `c_end`).
    pub step: i32,
    pub help: &'static str,
    pub get: fn(&Tunables) -> i32,
    pub set: fn(&mut Tunables, i32),
}

/// Declares [`Tunables`] (one `i32` field per row, defaulting to the row's value) and
/// [`TUNABLES`] (the rows) from one list, so a constant cannot be declared twice.
macro_rules! tunables {
    ($( $field:ident: $name:literal = $default:literal in ($min:literal, $max:literal)
        step $step:literal, $help:literal; )*) => {
        /// The search constants SPSA may tune (their rows in `TUNABLES`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Tunables {
            $( #[doc = $help] pub $field: i32, )*
        }

        impl Default for Tunables {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        /// Every tunable constant, in the order reports and the SPSA input list them.
        pub(crate) const TUNABLES: &[Tunable] = &[$(
            Tunable {
                name: $name,
                default: $default,
                min: $min,
                max: $max,
                step: $step,
                help: $help,
                get: |t| t.$field,
                set: |t, v| t.$field = v,
            },
        )*];
    };
}

tunables! {
    aspiration_delta: "aspiration-delta" = 11 in (5, 100) step 4,
        "first aspiration half-window, cp";
    rfp_margin: "rfp-margin" = 70 in (30, 150) step 8,
        "reverse futility margin per ply of depth, cp";
    rfp_improving: "rfp-improving" = 62 in (0, 150) step 8,
        "reverse futility margin less when improving, cp";
    nmp_base: "nmp-base" = 4 in (1, 6) step 1,
        "null-move reduction: base plies";
    nmp_depth_div: "nmp-depth-div" = 3 in (2, 8) step 1,
        "null-move reduction: one ply per this much depth";
    nmp_eval_div: "nmp-eval-div" = 200 in (50, 500) step 25,
        "null-move reduction: one ply per this much eval over beta, cp";
    razor_base: "razor-base" = 151 in (0, 400) step 20,
        "razoring margin base, cp";
    razor_per_depth: "razor-per-depth" = 141 in (50, 400) step 20,
        "razoring margin per ply, cp";
    lmp_base: "lmp-base" = 5 in (0, 10) step 1,
        "late move pruning: quiets tried before it is base + depth²";
    fp_base: "fp-base" = 95 in (0, 250) step 10,
        "futility margin base, cp";
    fp_per_depth: "fp-per-depth" = 90 in (30, 250) step 10,
        "futility margin per ply of LMR depth, cp";
    see_quiet: "see-quiet" = -55 in (-200, 0) step 8,
        "SEE pruning threshold for quiets per LMR ply, cp";
    see_noisy: "see-noisy" = -25 in (-100, 0) step 4,
        "SEE pruning threshold for captures per ply², cp";
    lmr_base: "lmr-base" = 45 in (0, 200) step 8,
        "LMR base reduction, hundredths of a ply";
    lmr_divisor: "lmr-divisor" = 254 in (100, 500) step 15,
        "LMR divisor of ln(depth)·ln(move), hundredths";
    lmr_history_div: "lmr-history-div" = 7093 in (1024, 32768) step 1024,
        "history score worth one ply of LMR";
}

/// The tunable constants as OpenBench's SPSA input lines, `prune.<name>, int, value, min,
/// max, c_end, r_end`, with `t`'s values (`actuary spsa-input`).
pub fn spsa_lines(t: &Tunables) -> Vec<String> {
    TUNABLES
        .iter()
        .map(|r| {
            format!(
                "prune.{}, int, {}, {}, {}, {}, 0.002",
                r.name,
                (r.get)(t),
                r.min,
                r.max,
                r.step
            )
        })
        .collect()
}

/// The tunable constants as the Markdown table of docs/chess/search.md (a test keeps the
/// page equal to it; `actuary spsa-input --markdown` prints it).
pub fn tunables_markdown() -> String {
    let mut s = String::from(
        "| option | default | range | SPSA step | meaning |\n|---|---:|---|---:|---|\n",
    );
    for r in TUNABLES {
        s += &format!(
            "| `prune.{}` | {} | {}..={} | {} | {} |\n",
            r.name, r.default, r.min, r.max, r.step, r.help
        );
    }
    s
}

// --- Time ----------------------------------------------------------------------------------
pub(crate) const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;
/// How often (in nodes) the main thread looks at the clock.
pub(crate) const TIME_CHECK_NODES: u64 = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// The text between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->` in a page.
    fn generated_block<'a>(page: &'a str, name: &str) -> &'a str {
        let begin = page
            .find(&format!("<!-- {name}:begin"))
            .unwrap_or_else(|| panic!("no {name}:begin marker"));
        let start = begin + page[begin..].find("-->\n").expect("marker closes") + 4;
        let end = page
            .find(&format!("<!-- {name}:end -->"))
            .unwrap_or_else(|| panic!("no {name}:end marker"));
        &page[start..end]
    }

    /// docs/chess/search.md's tables are the ones the rows generate: a constant or switch
    /// added, removed or re-ranged shows here until the page is regenerated
    /// (`actuary spsa-input --markdown`).
    #[test]
    fn the_docs_tables_are_generated_from_the_rows() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/chess/search.md");
        let page = std::fs::read_to_string(path).expect("docs/chess/search.md");
        assert_eq!(generated_block(&page, "tunables"), tunables_markdown());
        assert_eq!(
            generated_block(&page, "switches"),
            crate::search::prune::switches_markdown()
        );
        // The rows as written: one per constant, none declared twice.
        assert_eq!(TUNABLES.len(), 16);
        let mut names: Vec<_> = TUNABLES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 16);
        // Each row reads and writes its own field.
        let mut t = Tunables::default();
        for (i, r) in TUNABLES.iter().enumerate() {
            assert_eq!((r.get)(&t), r.default, "{}", r.name);
            assert!(r.min <= r.default && r.default <= r.max, "{}", r.name);
            (r.set)(&mut t, r.default + 1 + i as i32);
        }
        for (i, r) in TUNABLES.iter().enumerate() {
            assert_eq!((r.get)(&t), r.default + 1 + i as i32, "{}", r.name);
        }
    }
}
