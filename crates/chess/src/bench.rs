//! `bench`: a fixed set of positions searched to a fixed depth with one thread and a fresh
//! table per position, so the node count is identical on every run and every machine
//! (OpenBench uses it as the build's signature and measures speed with it).

use crate::board::Position;
use crate::eval::LazyMargins;
use crate::search::Worker;
use crate::search::prune::PruneConfig;
use crate::search::smp::{SearchOptions, search};
use crate::search::time::Limits;
use crate::search::tt::Tt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub const DEFAULT_BENCH_DEPTH: i32 = 15;
pub(crate) const BENCH_HASH_MB: usize = 16;

/// Opening, middlegame (WAC/STS positions — facts, not code) and endgame positions.
pub const BENCH_FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3r1k1/5pp1/p1p4p/2Pp4/8/q1NQP1BP/5PP1/4K2R b K - 0 1",
    "r2q3r/ppp2k2/4nbp1/5Q1p/2P1NB2/8/PP3P1P/3RR1K1 w - - 0 1",
    "r4rk1/5ppp/p3q1n1/2p2NQ1/4n3/P3P3/1B3PPP/1R3RK1 w - - 0 1",
    "3R1rk1/8/5Qpp/2p5/2P1p1q1/P3P3/1P2PK2/8 b - - 0 1",
    "4k3/p4prp/1p6/2b5/8/2Q3P1/P2R1PKP/4q3 w - - 0 1",
    "r1b2rk1/1p1n1ppp/p1p2q2/4p3/P1B1Pn2/1QN2N2/1P3PPP/3R1RK1 b - - 0 1",
    "2b3k1/4rrpp/p2p4/2pP2RQ/1pP1Pp1N/1P3P1P/1q6/6RK w - - 0 1",
    "3RNbk1/pp3p2/4rQpp/8/1qr5/7P/P4P2/3R2K1 w - - 0 1",
    "1n2rr2/1pk3pp/pNn2p2/2N1p3/8/6P1/PP2PPKP/2RR4 w - - 0 1",
    "1r3r2/4q1kp/b1pp2p1/5p2/pPn1N3/6P1/P3PPBP/2QRR1K1 w - - 0 1",
    "2r2b1r/p1Nk2pp/3p1p2/N2Qn3/4P3/q6P/P4PP1/1R3K1R w - - 0 1",
    "2kr4/bp3p2/p2p2b1/P7/2q5/1N4B1/1PPQ2P1/2KR4 b - - 0 1",
    "r2qkb1r/1ppb1ppp/p7/4p3/P1Q1P3/2P5/5PPP/R1B2KNR b kq - 0 1",
    "7k/2p1b1pp/8/1p2P3/1P3r2/2P3Q1/1P5P/R4qBK b - - 0 1",
    "r5k1/1rpn1pbp/p2pp3/1p4Np/2PP4/1PN1P1P1/P4PK1/2RR4 w - - 0 1",
    "5rk1/1prn1qp1/p2p3p/3Ppp1P/7R/1NPQ1PP1/PP6/1K1R4 b - - 0 1",
    "3rr1k1/1p2bppp/p1p5/P2P3q/2B1PPb1/1P1R4/3B1QP1/4R1K1 w - - 0 1",
    "r4rk1/1bq2pp1/1p1bpn1p/p2nN3/P1BP4/5NP1/1P1BQPKP/R3R3 b - - 0 1",
    "r1br2k1/p4p2/1qp4p/1p2P1p1/6n1/5NP1/PP2QN1P/R1B2BK1 b - - 0 1",
    "2r5/1b2kp1p/3qp1p1/1B6/3pn2N/8/PP2QPPP/4R1K1 b - - 0 1",
    "r1bq1r2/1pp3bk/3p1npp/1N1Ppn2/PBP1N3/1Q1B4/5PPP/R4RK1 w - - 0 1",
    "2r1q3/p1p1nk1p/4p2p/2R1Pp2/1P1Q4/P3N1P1/5P2/6K1 w - - 0 1",
    "5rk1/pb3ppp/1p3q2/2n5/2B1p3/2P5/P3QPPP/R2R2K1 w - - 0 1",
    "5rk1/6pp/pn1qp1r1/1p2R3/2pP1P2/P1P2Q1P/5P2/2B1R2K b - - 0 1",
    "6k1/r2rbpp1/p1q2n2/1pp2PB1/5Q2/1PN1R2P/1P3P2/4R1K1 w - - 0 1",
    "r3r1k1/4npbp/bqnpp1p1/2p3P1/1p2PP2/3PN3/1PPQNBBP/1R3RK1 b - - 0 1",
    "r2r2k1/ppq2pp1/2p1pnbp/8/3P3P/1QP2P2/P3P2P/R1B2BRK w - - 0 1",
    "r5k1/3pppbp/6p1/4n3/1q2P3/4B3/P4PPP/2RQ1K1R w - - 0 1",
    "2r3n1/p1p3kp/1q2p2p/4Pp2/1P4N1/P5P1/1Q3P2/2R3K1 w - - 0 1",
    "r2r2k1/pN3p1p/2n1pp2/4q3/2P1P3/1Q6/P4PPP/R4RK1 b - - 0 1",
    "r7/4kp2/3Rp2b/2p1P3/bp3P1P/rB2N3/P1P5/1K1R4 w - - 0 1",
    "1r2r1k1/2qp1ppp/2p2n2/4p3/1P6/2PBQ1P1/P4P1P/R4RK1 w - - 0 1",
    "1bq3rk/R6p/5n1P/1N1p4/1PnP2p1/6P1/5B2/2Q2BK1 w - - 0 1",
    "4r3/1p2rpk1/p1p1bqp1/2QnN1bp/1B1PB3/P6P/1P2RPP1/4R1K1 b - - 0 1",
    "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",
    "8/2k1p3/3pP3/3P2K1/8/8/8/8 b - - 0 1",
    "6k1/5p2/6p1/8/7p/8/6PP/6K1 b - - 0 1",
    "8/8/4k3/3r4/8/3RK3/4P3/8 w - - 0 1",
];

pub struct BenchResult {
    pub nodes: u64,
    pub nps: u64,
    pub elapsed_ms: u64,
    /// Evaluation calls decided by each tier (super-lazy, lazy, full).
    pub exits: [u64; 3],
}

/// Run the bench (lazy exits off: the signature); `verbose` prints one line per position.
pub fn run_bench(depth: i32, verbose: bool) -> BenchResult {
    run_bench_with(depth, verbose, None, PruneConfig::default())
}

/// Run the bench with lazy exits on the given margins (`None` = off: the default evaluation,
/// the net; with margins, the hand evaluation, whose tiers they are).
pub fn run_bench_with(
    depth: i32,
    verbose: bool,
    lazy: Option<Arc<LazyMargins>>,
    prune: PruneConfig,
) -> BenchResult {
    // The lazy tiers are the hand evaluation's: with margins, search with it.
    let net = if lazy.is_some() {
        None
    } else {
        SearchOptions::default().net
    };
    let opts = SearchOptions {
        lazy,
        net,
        prune,
        ..Default::default()
    };
    run_bench_opts(depth, verbose, opts)
}

/// Run the bench with any search options (the evaluation among them).
pub fn run_bench_opts(depth: i32, verbose: bool, opts: SearchOptions) -> BenchResult {
    let tt = Tt::new(BENCH_HASH_MB);
    let stop = AtomicBool::new(false);
    let mut exits = [0u64; 3];
    let limits = Limits {
        depth: Some(depth),
        ..Default::default()
    };
    let mut nodes = 0u64;
    let mut workers = vec![Worker::new(0)];
    let start = Instant::now();
    for (i, fen) in BENCH_FENS.iter().enumerate() {
        let pos = Position::from_fen(fen).expect("bench FEN is valid");
        // Fresh state per position: the count must not depend on position order.
        tt.clear();
        workers[0].clear();
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        let r = search(&pos, &limits, &opts, &mut workers, &tt, &stop);
        nodes += r.nodes;
        for (a, b) in exits.iter_mut().zip(r.exits) {
            *a += b;
        }
        if verbose {
            let best = r
                .best_move
                .map(|m| crate::board::move_to_uci(&pos.board, m))
                .unwrap_or_default();
            println!(
                "position {:>2}/{}: nodes {:>9} best {best:<6} score {}",
                i + 1,
                BENCH_FENS.len(),
                r.nodes,
                crate::search::uci_score(r.score)
            );
        }
    }
    let elapsed = start.elapsed();
    let ms = elapsed.as_millis().max(1) as u64;
    BenchResult {
        nodes,
        nps: (nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64,
        elapsed_ms: ms,
        exits,
    }
}
