//! OpenBench contract: `actuary bench` searches a fixed tree, so its node count is the
//! build's signature (identical on every run and machine).

use chess::bench::{DEFAULT_BENCH_DEPTH, run_bench};

/// The node count of `actuary bench` at the default depth.
///
/// Any change to the search, evaluation, move ordering or the bench positions changes it. Such
/// a change must update this number knowingly, in the same commit, saying why the search
/// changed (and the OpenBench test that measured it); a refactor must leave it as it is.
/// (The default pruning gate is `classic`, the conditions of the build before issue 14.
/// 2026-12-03: 7,353,634 → 12,547,077 when singular extensions became the default, after
/// their SPRT: +27.7 Elo [+10.6, +44.9], docs/pruning/games/se.json.)
/// Later on 2026-12-03: 12,547,077 → 12,129,743 when the eval5 weights became the evaluation,
/// after their SPRT: +22.0 Elo [+7.3, +36.8], docs/tune/sprt-eval5-vs-eval1.json; every count
/// below moved with it.)
/// 2026-12-04: 12,129,743 → 10,740,958 when the learned evaluation (`actuary-2.nnue`, embedded)
/// became the default, after its SPRT against the hand evaluation
/// (docs/pruning/games/nnue2.json); every count below moved with it. `Eval hce` searches
/// the tree of 12,129,743 (`hand_evaluation_signature`).
/// 2026-12-04: 10,740,958 → 11,247,858 with the staged move picker (docs/chess/sprt/picker-staged.json);
/// then → 7,874,639 when `lmr-ttcap` and `lmr-deeper` became the default after their SPRT
/// (+17.3 Elo, docs/pruning/games/lmrplus.json); every count below moved with it.
/// Then → 8,777,815 when `actuary-3.nnue` became the embedded net after its SPRT against
/// `actuary-2.nnue` (+84.8 Elo, docs/pruning/games/nnue3.json); every count below moved
/// except the hand evaluation's.
/// Session 23: → 7,183,127 when `actuary-4.nnue` became the embedded net after its SPRT
/// against `actuary-3.nnue` (+120.4 Elo, docs/pruning/games/nnue4.json); every count below
/// moved except the hand evaluation's.
/// Session 25: → 7,469,957 when `actuary-6.nnue` became the embedded net after its SPRT
/// against `actuary-4.nnue` (+75.8 Elo, docs/pruning/games/nnue6.json); every count below
/// moved except the hand evaluation's. Session 30: → 7,415,939 when `actuary-7.nnue` (H = 128)
/// replaced it after its SPRT against `actuary-6.nnue` (+45.4 Elo, docs/pruning/games/nnue7.json);
/// again every count but the hand evaluation's moved. Session 34: → 6,921,153 when the SPSA
/// tune's values (docs/tune/spsa/values.txt) became the search constants after their SPRT
/// against the values before (+25.1 Elo, docs/pruning/games/spsa.json); every count moved,
/// the hand evaluation's too (8,766,086 → 7,987,300). Session 42: unchanged when the
/// experiments that lost (corr, corr-all, tm, probcut, hp, draws, HashWays, caphist-div,
/// rule50) left the engine and the node function was cut into steps. Session 45: → 6,535,151
/// when `actuary-8.nnue` replaced `actuary-7.nnue` after its SPRT (+19.8 Elo, H1 after 1,194
/// games, docs/pruning/games/nnue8.json); every count but the hand evaluation's moved.
/// Session 48: → 7,268,619 when `actuary-9.nnue` (H = 256) replaced `actuary-8.nnue` after its
/// SPRT (+78.5 Elo, H1 after 306 games, docs/pruning/games/nnue9.json); every count but the
/// hand evaluation's moved.
const BENCH_SIGNATURE: u64 = 7_268_619;

/// `prune.gate=strict` (the seed's one gate: hash/killer/counter moves, checks and in-check
/// nodes are never pruned; LMR reduces a gated-out quiet move one ply less) has its own count.
#[test]
fn strict_gate_signature() {
    let mut cfg = chess::search::prune::PruneConfig::default();
    cfg.set("gate", "strict").unwrap();
    let r = chess::bench::run_bench_with(DEFAULT_BENCH_DEPTH, false, None, cfg);
    assert_eq!(r.nodes, 7_331_756);
}

#[test]
fn bench_signature() {
    let r = run_bench(DEFAULT_BENCH_DEPTH, false);
    assert_eq!(
        r.nodes, BENCH_SIGNATURE,
        "the bench signature changed: the search behaves differently"
    );
}

/// `prune.se=off`: the search before singular extensions (issue 33; the default until their
/// SPRT passed, 2026-12-03); 7,353,634 with the weights of that time, 6,467,355 with eval5,
/// 5,826,633 with `actuary-2.nnue`.
#[test]
fn without_singular_extensions_signature() {
    let mut cfg = chess::search::prune::PruneConfig::default();
    cfg.set("se", "off").unwrap();
    let r = chess::bench::run_bench_with(DEFAULT_BENCH_DEPTH, false, None, cfg);
    assert_eq!(r.nodes, 4_371_056);
}

/// The tunable search constants (issue 33's SPSA inputs) default to the constants the
/// signature was measured with, and each is really read by the search: moving one changes
/// the tree.
#[test]
fn tunables_default_to_the_signature_and_change_the_search() {
    let lines = chess::search::params::spsa_lines(&Default::default());
    assert_eq!(lines.len(), 16, "{lines:?}");
    assert!(
        lines.contains(&"prune.rfp-margin, int, 70, 30, 150, 8, 0.002".to_string()),
        "{lines:?}"
    );
    for (name, value) in [
        ("lmr-divisor", "260"),
        ("rfp-margin", "90"),
        ("nmp-base", "3"),
    ] {
        let mut cfg = chess::search::prune::PruneConfig::default();
        cfg.set(name, value).unwrap();
        let r = chess::bench::run_bench_with(8, false, None, cfg);
        let d = chess::bench::run_bench_with(
            8,
            false,
            None,
            chess::search::prune::PruneConfig::default(),
        );
        assert_ne!(r.nodes, d.nodes, "{name}={value} did not change the search");
    }
}

/// `prune.lmr-ttcap` and `prune.lmr-deeper` (issue 33, session 22; the default since their
/// SPRT, docs/pruning/games/lmrplus.json): each turned off has its own count, and both off
/// gave the signature of the build before them (11,247,858 with `actuary-2.nnue`). Pinned at
/// depth 12 (the default depth 15 gives 7,881,958, 10,133,623 and 9,412,872: `actuary bench
/// 15 --set lmr-ttcap=off`, ...), a quarter of the nodes, so the three benches cost the test
/// suite seconds rather than 15.
#[test]
fn lmr_refinement_signatures() {
    for (switches, nodes) in [
        (&[][..], 1_938_466),
        (&["lmr-ttcap"][..], 2_214_317),
        (&["lmr-deeper"][..], 2_522_245),
        (&["lmr-ttcap", "lmr-deeper"][..], 2_514_090),
    ] {
        let mut cfg = chess::search::prune::PruneConfig::default();
        for s in switches {
            cfg.set(s, "off").unwrap();
        }
        let r = chess::bench::run_bench_with(12, false, None, cfg);
        assert_eq!(r.nodes, nodes, "{switches:?} off");
    }
}

/// `Eval hce`: the hand evaluation's tree, the signature before the learned evaluation became
/// the default (12,129,743 since the eval5 weights; 8,943,994 since `lmr-ttcap` and `lmr-deeper`;
/// 8,766,086 since the king-danger model with the eval6 weights, session 29, issue 32;
/// 7,987,300 with the SPSA-tuned search constants, session 34).
#[test]
fn hand_evaluation_signature() {
    let opts = chess::search::smp::SearchOptions {
        net: None,
        ..Default::default()
    };
    let r = chess::bench::run_bench_opts(DEFAULT_BENCH_DEPTH, false, opts);
    assert_eq!(r.nodes, 7_987_300);
}

/// `LazyEval` with the net: quiescence stand-pats decided by the material + PSQT score with
/// the embedded margins (`data/chess/net-lazy-margins.txt`); exits happen (about one
/// evaluation in seven here) and change the tree. Re-pinned whenever the margins are re-fitted.
#[test]
fn net_lazy_exit_signature() {
    let opts = chess::search::smp::SearchOptions {
        net_lazy: Some(chess::eval::netlazy::NetLazyMargins::embedded()),
        ..Default::default()
    };
    let r = chess::bench::run_bench_opts(DEFAULT_BENCH_DEPTH, false, opts);
    let super_lazy = r.exits[chess::eval::Tier::SuperLazy as usize];
    assert!(
        super_lazy * 10 > r.exits.iter().sum::<u64>(),
        "{:?}",
        r.exits
    );
    assert_eq!(r.nodes, 7_301_758);
}

/// Switches that lost their SPRT left the engine (docs/chess/search.md: Ethereal's habits of
/// issue 67, items 4–6, and issue 66's `corr` and `probcut`): a script or GUI that still sets
/// one is told so, instead of silently searching the default tree it did not ask for.
#[test]
fn switches_that_lost_their_sprt_are_refused() {
    for switch in [
        "efp-history",
        "qs-see-margin",
        "asp-reduce",
        "corr",
        "probcut",
    ] {
        let mut cfg = chess::search::prune::PruneConfig::default();
        let err = cfg.set(switch, "on").unwrap_err();
        assert!(err.contains("unknown switch"), "{switch}: {err}");
    }
}
