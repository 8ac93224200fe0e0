//! OpenBench contract: the bench node count is identical on every run.

use chess::tools::bench::run_bench;

#[test]
fn bench_is_deterministic() {
    let a = run_bench(8, false);
    let b = run_bench(8, false);
    assert!(a.nodes > 10_000);
    assert_eq!(a.nodes, b.nodes);
}
