//! ns per board for the n-tuple hot path on arm C (rows,cols,win23,win32,phase=all; 10⁹
//! entries, 4 GB of weights): feature extraction alone, and extraction plus value over a
//! small (cache-warm) and a large (cache-cold, as in training) set of real game boards.
//!
//! Run: `cargo bench -p ntuple --bench features` (needs ~4.5 GB of free memory).

use std::sync::OnceLock;

use drop7::board::Board;
use drop7::runner::sample_states;
use ntuple::features::active;
use ntuple::layout::Layout;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};

fn main() {
    divan::main();
}

/// Boards (with their rise clock) from reference-random games.
fn boards(n: usize) -> Vec<(Board, u8)> {
    sample_states(0x5eed_0000, n)
        .into_iter()
        .map(|(s, _)| (s.board, s.moves_remaining))
        .collect()
}

fn arm_c() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let layout = Layout::parse("rows,cols,win23,win32,phase=all").expect("layout");
        let t = Tables::new(layout, OPTIMISTIC_TOTAL, false).expect("4 GB for the arm C weights");
        // Make the weights distinct so nothing is uniformly cached by the hardware.
        for (i, w) in t.weights.iter().enumerate().step_by(4093) {
            w.store(
                (i as f32 * 1e-9).to_bits(),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        t
    })
}

const SMALL: usize = 1 << 10;
const LARGE: usize = 1 << 20;
/// Boards per timed iteration: one call is far below the timer's precision, so each
/// iteration walks 1,024 boards and divan reports boards per second (ns/board = 1e9 / that).
const BATCH: usize = 1 << 10;

#[divan::bench(args = [SMALL, LARGE])]
fn features_only(bencher: divan::Bencher, n: usize) {
    let t = arm_c();
    let set = boards(n);
    let mut i = 0;
    bencher
        .counter(divan::counter::ItemsCount::new(BATCH))
        .bench_local(|| {
            let mut k = 0;
            for _ in 0..BATCH {
                let (b, mr) = &set[i & (n - 1)];
                i += 1;
                k += active(&t.layout, divan::black_box(b), *mr).len;
            }
            k
        });
}

#[divan::bench(args = [SMALL, LARGE])]
fn features_and_value(bencher: divan::Bencher, n: usize) {
    let t = arm_c();
    let set = boards(n);
    let mut i = 0;
    bencher
        .counter(divan::counter::ItemsCount::new(BATCH))
        .bench_local(|| {
            let mut v = 0.0f32;
            for _ in 0..BATCH {
                let (b, mr) = &set[i & (n - 1)];
                i += 1;
                let a = active(&t.layout, divan::black_box(b), *mr);
                v += t.value(a.as_slice());
            }
            v
        });
}
