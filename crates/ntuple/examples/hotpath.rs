//! Experiment: ns per board split into extraction and values over the one-ply workload.
use std::time::Instant;

use drop7::board::Board;
use drop7::game::PublicState;
use drop7::runner::sample_states;
use ntuple::features::{Active, active_into};
use ntuple::layout::Layout;
use ntuple::play::one_ply_samples;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};

fn afterstates(n: usize) -> Vec<(Board, u8)> {
    let mut out = Vec::with_capacity(n + 64);
    let mut seed = 0x5eed_1000;
    while out.len() < n {
        for (s, _) in sample_states(seed, 256) {
            let (board, _) = s.board.canonical();
            one_ply_samples(&PublicState { board, ..s }, |_, b, o| {
                if !o.game_over {
                    out.push((*b, o.moves_remaining));
                }
            });
        }
        seed += 1;
    }
    out.truncate(n);
    out
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1 << 20, |s| s.parse().unwrap());
    let passes: usize = std::env::args().nth(2).map_or(3, |s| s.parse().unwrap());
    let layout = Layout::parse("rows,cols,win23,win32,phase=all").unwrap();
    let t = Tables::new(layout, OPTIMISTIC_TOTAL, false).unwrap();
    for (i, w) in t.weights.iter().enumerate().step_by(4093) {
        w.store(
            (i as f32 * 1e-9).to_bits(),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    let set = afterstates(n);
    const G: usize = 64;
    let mut act = vec![Active::EMPTY; G];
    let mut vals = vec![0.0f32; G];
    let total = (passes * n).max(1 << 21);
    for _ in 0..3 {
        // extraction only
        let t0 = Instant::now();
        let mut k = 0u64;
        for i in 0..total {
            let (b, mr) = &set[i % n];
            active_into(&t.layout, std::hint::black_box(b), *mr, &mut act[i % G]);
            k = k.wrapping_add(act[i % G].idx[5]);
        }
        let ext = t0.elapsed().as_nanos() as f64 / total as f64;
        // both
        let t0 = Instant::now();
        let mut v = 0.0f32;
        let mut i = 0;
        while i + G <= total {
            for a in act.iter_mut() {
                let (b, mr) = &set[i % n];
                active_into(&t.layout, std::hint::black_box(b), *mr, a);
                i += 1;
            }
            t.values(&act, &mut vals);
            v += vals.iter().sum::<f32>();
        }
        let both = t0.elapsed().as_nanos() as f64 / total as f64;
        println!("n={n} extraction {ext:.1} ns  extraction+values {both:.1} ns  ({k} {v})");
    }
}
