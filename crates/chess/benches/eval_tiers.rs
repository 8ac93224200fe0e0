//! ns per evaluation for each tier of docs/design/chess-DESIGN.md §2 (issue 13, item 1).
//!
//! The positions are the 40 bench positions, their children and grandchildren (the first
//! 4,096 in move-generation order): real middlegames and endgames, cache-warm.
//! Each timed iteration walks all of them; divan reports items per second, so
//! ns per evaluation = 10⁹ / that.
//!
//! - `material_delta`: [`Material::after`] of one move (what every make pays);
//! - `super_lazy_scratch`: the super-lazy tier computed from scratch (a walk over every
//!   piece) — what the incremental accumulator replaces;
//! - `super_lazy_exit`: the super-lazy score from the incremental accumulator plus the exit
//!   test (two margin lookups): the whole cost of a super-lazy exit;
//! - `lazy_tier`: + pawn hash probe, passers against kings, bishop pair, bad trade;
//! - `full_tier`: + mobility, king safety, threats, trapped pieces (what the search pays
//!   with lazy exits off);
//! - `bounded_no_exit`: `Evaluator::bounded` with an infinite window (every tier tried, none
//!   exits): the overhead of trying the cheap tiers first when they do not decide.
//!
//! Run: `cargo bench -p chess --bench eval_tiers`.

use chess::bench::BENCH_FENS;
use chess::board::{Board, Move, Piece, legal_moves, parse_fen};
use chess::eval::{Evaluator, LazyMargins, Material, Tier, side_bucket, super_lazy_score};
use divan::counter::ItemsCount;
use std::hint::black_box;
use std::sync::OnceLock;

fn main() {
    divan::main();
}

const N: usize = 4096;

fn positions() -> &'static [(Board, Material)] {
    static P: OnceLock<Vec<(Board, Material)>> = OnceLock::new();
    P.get_or_init(|| {
        let mut out = Vec::new();
        let roots: Vec<Board> = BENCH_FENS.iter().map(|f| parse_fen(f).unwrap()).collect();
        let mut layer = roots.clone();
        out.extend(roots);
        for _ in 0..2 {
            let mut next = Vec::new();
            for b in &layer {
                for mv in legal_moves(b) {
                    let mut c = b.clone();
                    c.play_unchecked(mv);
                    next.push(c);
                }
            }
            out.extend(next.iter().cloned());
            layer = next;
        }
        out.truncate(N);
        out.into_iter()
            .map(|b| {
                let m = Material::from_board(&b);
                (b, m)
            })
            .collect()
    })
}

fn moves() -> &'static [(Board, Move, Piece, Material)] {
    static M: OnceLock<Vec<(Board, Move, Piece, Material)>> = OnceLock::new();
    M.get_or_init(|| {
        let mut out = Vec::new();
        for (b, m) in positions() {
            for mv in legal_moves(b) {
                out.push((b.clone(), mv, b.piece_on(mv.from).unwrap(), *m));
                if out.len() == N {
                    return out;
                }
            }
        }
        out
    })
}

#[divan::bench]
fn material_delta(bencher: divan::Bencher) {
    let ms = moves();
    bencher.counter(ItemsCount::new(ms.len())).bench(|| {
        let mut acc = 0i32;
        for (b, mv, p, m) in ms {
            acc = acc.wrapping_add(black_box(m).after(b, *mv, *p).psqt.mg);
        }
        acc
    });
}

#[divan::bench]
fn super_lazy_scratch(bencher: divan::Bencher) {
    let ps = positions();
    bencher.counter(ItemsCount::new(ps.len())).bench(|| {
        let mut acc = 0i32;
        for (b, _) in ps {
            let m = chess::eval::Material::from_board(black_box(b));
            acc = acc.wrapping_add(chess::eval::super_lazy_score(b, &m));
        }
        acc
    });
}

#[divan::bench]
fn super_lazy_exit(bencher: divan::Bencher) {
    let ps = positions();
    let margins = LazyMargins::embedded();
    bencher.counter(ItemsCount::new(ps.len())).bench(|| {
        let mut acc = 0i32;
        for (b, m) in ps {
            let m = black_box(m);
            let stm = b.side_to_move();
            let (my, opp) = (side_bucket(m.army(stm)), side_bucket(m.army(!stm)));
            let v = super_lazy_score(b, m);
            let out = margins.exit(Tier::SuperLazy, my, opp, v, -30, 30);
            acc = acc.wrapping_add(out.map_or(v, |o| o.score));
        }
        acc
    });
}

#[divan::bench]
fn lazy_tier(bencher: divan::Bencher) {
    let ps = positions();
    let mut ev = Evaluator::default();
    bencher.counter(ItemsCount::new(ps.len())).bench_local(|| {
        let mut acc = 0i32;
        for (b, m) in ps {
            acc = acc.wrapping_add(ev.tier(black_box(b), m, Tier::Lazy));
        }
        acc
    });
}

#[divan::bench]
fn full_tier(bencher: divan::Bencher) {
    let ps = positions();
    let mut ev = Evaluator::default();
    bencher.counter(ItemsCount::new(ps.len())).bench_local(|| {
        let mut acc = 0i32;
        for (b, m) in ps {
            acc = acc.wrapping_add(ev.tier(black_box(b), m, Tier::Full));
        }
        acc
    });
}

#[divan::bench]
fn bounded_no_exit(bencher: divan::Bencher) {
    let ps = positions();
    let mut ev = Evaluator::default();
    let margins = LazyMargins::embedded();
    bencher.counter(ItemsCount::new(ps.len())).bench_local(|| {
        let mut acc = 0i32;
        for (b, m) in ps {
            acc = acc.wrapping_add(ev.bounded(black_box(b), m, -32_000, 32_000, &margins).score);
        }
        acc
    });
}
