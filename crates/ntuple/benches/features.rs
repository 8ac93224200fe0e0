//! ns per board for the n-tuple hot path on arm C (rows,cols,win23,win32,phase=all; 10⁹
//! entries, 4 GB of weights).
//!
//! - `features_only`: extraction of the 74 entry indices.
//! - `features_and_value`: extraction plus value, one board at a time (one dependent chain
//!   of 74 additions per board).
//! - `features_and_values_batched`: the same work eight boards at a time
//!   ([`Tables::values`]), bit-identical values; this is how the one-ply policy and training
//!   evaluate their afterstates.
//! - `one_ply_afterstates`: extraction plus batched value over exactly the boards the
//!   one-ply policy values (≤ 7 columns × 7 reveal samples per decision) for consecutive
//!   positions of real games, in that order: the workload of training and of `ntuple-1ply`.
//!
//! Each set comes small (cache-warm: 1,024 positions) and large (cache-cold: 2²⁰ positions
//! spread over the 4 GB, as when training moves through many games). Each timed iteration
//! walks 1,024 boards and divan reports boards per second (ns per board = 10⁹ / that); the
//! batched benches take 1,024 samples, so the large sets are walked once end to end.
//!
//! The extraction path is the best this CPU has (AVX-512 VBMI, else AVX2, else portable);
//! `NTUPLE_NO_VBMI=1` measures the AVX2 path on a VBMI machine.
//!
//! Run: `cargo bench -p ntuple --bench features` (needs ~4.5 GB of free memory).

use std::sync::OnceLock;

use drop7::board::Board;
use drop7::game::PublicState;
use drop7::runner::sample_states;
use ntuple::features::{Active, active, active_into};
use ntuple::layout::Layout;
use ntuple::play::one_ply_samples;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};

fn main() {
    divan::main();
}

/// Boards (with their rise clock) from consecutive positions of reference-random games.
fn boards(n: usize) -> Vec<(Board, u8)> {
    sample_states(0x5eed_0000, n)
        .into_iter()
        .map(|(s, _)| (s.board, s.moves_remaining))
        .collect()
}

/// The non-terminal afterstates the one-ply policy values for `s`, in its order.
fn one_ply_afterstates(s: &PublicState, out: &mut Vec<(Board, u8)>) {
    let (board, _) = s.board.canonical();
    one_ply_samples(&PublicState { board, ..*s }, |_, b, o| {
        if !o.game_over {
            out.push((*b, o.moves_remaining));
        }
    });
}

/// At least `n` one-ply afterstates of consecutive game positions (a power of two).
fn afterstates(n: usize) -> Vec<(Board, u8)> {
    let mut out = Vec::with_capacity(n + 64);
    let mut seed = 0x5eed_1000;
    while out.len() < n {
        for (s, _) in sample_states(seed, 256) {
            one_ply_afterstates(&s, &mut out);
        }
        seed += 1;
    }
    out.truncate(n);
    out
}

fn arm_c() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let layout = Layout::parse(ARM_C).expect("layout");
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

const ARM_C: &str = "rows,cols,win23,win32,phase=all";
const SMALL: usize = 1 << 10;
const LARGE: usize = 1 << 20;
/// Boards per timed iteration: one call is far below the timer's precision, so each
/// iteration walks 1,024 boards.
const BATCH: usize = 1 << 10;
/// Boards valued together, as the one-ply policy does (up to 49 per decision).
const GROUP: usize = 64;

#[divan::bench(args = [SMALL, LARGE])]
fn features_only(bencher: divan::Bencher, n: usize) {
    let layout = Layout::parse(ARM_C).expect("layout");
    let set = boards(n);
    let mut i = 0;
    let mut a = Active::EMPTY;
    bencher
        .counter(divan::counter::ItemsCount::new(BATCH))
        .bench_local(|| {
            let mut k = 0;
            for _ in 0..BATCH {
                let (b, mr) = &set[i & (n - 1)];
                i += 1;
                active_into(&layout, divan::black_box(b), *mr, &mut a);
                k += a.idx[a.len - 1];
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

/// Extract `GROUP` boards, then value them in one batch; `BATCH` boards per iteration.
fn batched(bencher: divan::Bencher, set: &[(Board, u8)]) {
    let t = arm_c();
    let n = set.len();
    let mut i = 0;
    let mut act = vec![Active::EMPTY; GROUP];
    let mut vals = vec![0.0f32; GROUP];
    bencher
        .counter(divan::counter::ItemsCount::new(BATCH))
        .bench_local(|| {
            let mut v = 0.0f32;
            for _ in 0..BATCH / GROUP {
                for a in act.iter_mut() {
                    let (b, mr) = &set[i & (n - 1)];
                    i += 1;
                    active_into(&t.layout, divan::black_box(b), *mr, a);
                }
                t.values(&act, &mut vals);
                v += vals.iter().sum::<f32>();
            }
            v
        });
}

#[divan::bench(args = [SMALL, LARGE], sample_count = 1024)]
fn features_and_values_batched(bencher: divan::Bencher, n: usize) {
    batched(bencher, &boards(n));
}

#[divan::bench(args = [SMALL, LARGE], sample_count = 1024)]
fn one_ply_afterstates_batched(bencher: divan::Bencher, n: usize) {
    batched(bencher, &afterstates(n));
}
