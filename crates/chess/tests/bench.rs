//! OpenBench contract: `actuary bench` searches a fixed tree, so its node count is the
//! build's signature (identical on every run and machine).

use chess::tools::bench::{DEFAULT_BENCH_DEPTH, run_bench};

/// The node count of `actuary bench` at the default depth.
///
/// Any change to the search, evaluation, move ordering or the bench positions changes it. Such
/// a change must update this number knowingly, in the same commit, saying why the search
/// changed (and the OpenBench test that measured it); a refactor must leave it as it is.
/// 7,112,594 since the pruning gate (issue 14: hash/killer/counter moves, checks and in-check
/// nodes are never pruned; LMR reduces a gated-out quiet one ply less); 6,579,967 before.
const BENCH_SIGNATURE: u64 = 7_112_594;

#[test]
fn bench_signature() {
    let r = run_bench(DEFAULT_BENCH_DEPTH, false);
    assert_eq!(
        r.nodes, BENCH_SIGNATURE,
        "the bench signature changed: the search behaves differently"
    );
}
