//! ns per operation for the Drop7 hot paths: one move (drop + waves + rise), the fair leaf,
//! canonicalisation. Run: `cargo bench -p drop7 --bench engine`.

use drop7::board::Board;
use drop7::fair_leaf::fair_leaf;
use drop7::rng::Mulberry32;
use drop7::rules::play_move;
use drop7::runner::sample_states;

fn main() {
    divan::main();
}

/// (board, next, rise, column the reference-random policy played) from real games.
fn states(n: usize) -> Vec<(Board, u8, u8, usize)> {
    sample_states(0x5eed_0000, n)
        .into_iter()
        .map(|(s, c)| (s.board, s.next, s.moves_remaining, c))
        .collect()
}

const N: usize = 1 << 14;

#[divan::bench]
fn one_move(bencher: divan::Bencher) {
    let set = states(N);
    let mut i = 0;
    bencher.bench_local(|| {
        let (b, next, rise, c) = set[i & (N - 1)];
        i += 1;
        let mut b = divan::black_box(b);
        let out = play_move(
            &mut b,
            c,
            next,
            rise,
            &mut Mulberry32::new(i as u32),
            &mut (),
        );
        divan::black_box((b, out.map(|o| o.score_delta)))
    });
}

#[divan::bench]
fn fair_leaf_eval(bencher: divan::Bencher) {
    let set = states(N);
    let mut i = 0;
    bencher.bench_local(|| {
        let (b, next, rise, _) = set[i & (N - 1)];
        i += 1;
        divan::black_box(fair_leaf(divan::black_box(&b), next, rise))
    });
}

#[divan::bench]
fn canonical(bencher: divan::Bencher) {
    let set = states(N);
    let mut i = 0;
    bencher.bench_local(|| {
        let b = set[i & (N - 1)].0;
        i += 1;
        divan::black_box(divan::black_box(b).canonical())
    });
}
