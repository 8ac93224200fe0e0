//! Repetitions: any earlier occurrence of the position within the fifty-move window, in the
//! game or on the search path, scores as a draw. (Switch `draws`, which waited for the real
//! threefold before the root and dithered draw scores, lost its SPRT and was removed:
//! docs/chess/search.md, "Experiments that lost".)

use std::sync::atomic::AtomicBool;

use chess::board::Position;
use chess::search::Worker;
use chess::search::smp::{SearchOptions, search};
use chess::search::time::Limits;
use chess::search::tt::Tt;

/// Black, a queen down, to move after `Qd2 Kh8 Qd1`: `Kg8` brings back the game's first
/// position.
fn losing_side_can_repeat_once() -> Position {
    let mut pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1").unwrap();
    for m in ["d1d2", "g8h8", "d2d1"] {
        pos.play_uci(m).unwrap();
    }
    pos
}

fn score(pos: &Position) -> i32 {
    let opts = SearchOptions::default();
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
fn a_repetition_of_a_game_position_is_a_draw() {
    // The lost side "holds" at 0 by repeating.
    assert_eq!(score(&losing_side_can_repeat_once()), 0);
}

#[test]
fn without_a_repetition_the_lost_queen_shows() {
    // The same material without the shuffle before the root: nothing to repeat.
    let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3Q2K1 b - - 0 1").unwrap();
    let s = score(&pos);
    assert!(s < -500, "score {s}");
}
