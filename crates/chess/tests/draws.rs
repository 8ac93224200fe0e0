//! Draw handling (switch `draws`, issue 33): a position seen once in the game before the root
//! is not a draw yet (the threefold rule), while a third occurrence is.

use std::sync::atomic::AtomicBool;

use chess::board::Position;
use chess::search::Worker;
use chess::search::prune::PruneConfig;
use chess::search::smp::{SearchOptions, search};
use chess::search::time::Limits;
use chess::search::tt::Tt;

/// Black, a queen down, to move after `Qd2 Kh8 Qd1`: `Kg8` brings back the game's first
/// position, for the second time only.
fn losing_side_can_repeat_once() -> Position {
    let mut pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1").unwrap();
    for m in ["d1d2", "g8h8", "d2d1"] {
        pos.play_uci(m).unwrap();
    }
    pos
}

fn score(pos: &Position, draws: bool) -> i32 {
    let mut prune = PruneConfig::default();
    prune
        .set("draws", if draws { "on" } else { "off" })
        .unwrap();
    let opts = SearchOptions {
        prune,
        ..Default::default()
    };
    let limits = Limits {
        depth: Some(7),
        ..Default::default()
    };
    let tt = Tt::new(8);
    let stop = AtomicBool::new(false);
    let mut workers = vec![Worker::new(0)];
    search(pos, &limits, &opts, &mut workers, &tt, &stop).score
}

#[test]
fn a_position_seen_once_before_the_root_is_not_a_draw_with_draws_on() {
    let pos = losing_side_can_repeat_once();
    // Without the switch any earlier occurrence is a draw: the lost side "holds" at 0.
    assert_eq!(score(&pos, false), 0);
    // With it, Kg8 is only the second occurrence: the search sees the lost queen.
    let s = score(&pos, true);
    assert!(s < -500, "score {s}");
}

#[test]
fn a_third_occurrence_is_a_draw_with_draws_on() {
    // The same shuffle once more: now Kg8 brings the first position back a third time.
    let mut pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1").unwrap();
    for m in ["d1d2", "g8h8", "d2d1", "h8g8", "d1d2", "g8h8", "d2d1"] {
        pos.play_uci(m).unwrap();
    }
    // A draw, dithered by one centipawn either way.
    assert!(score(&pos, true).abs() <= 1, "{}", score(&pos, true));
    assert_eq!(score(&pos, false), 0);
}
