//! Node limits as self-play data generation uses them: a hard limit cuts the iteration under
//! way; a soft limit lets it finish and starts no other.

use chess::board::Position;
use chess::search::Worker;
use chess::search::smp::{SearchOptions, SearchResult, search};
use chess::search::time::Limits;
use chess::search::tt::Tt;
use std::sync::atomic::AtomicBool;

fn run(limits: Limits) -> SearchResult {
    let pos = Position {
        board: chess::board::Board::default(),
        history: Vec::new(),
    };
    let mut worker = Worker::new(0);
    let tt = Tt::new(1);
    let stop = AtomicBool::new(false);
    search(
        &pos,
        &limits,
        &SearchOptions::default(),
        std::slice::from_mut(&mut worker),
        &tt,
        &stop,
    )
}

#[test]
fn a_soft_node_limit_finishes_the_iteration_that_crosses_it() {
    let soft = 3_000;
    let r = run(Limits {
        nodes: Some(10_000_000),
        soft_nodes: Some(soft),
        ..Default::default()
    });
    let it = &r.iteration_nodes;
    assert!(it.len() >= 2, "{it:?}");
    // the last completed iteration crossed the soft limit, the one before it did not
    assert!(it[it.len() - 1] >= soft, "{it:?}");
    assert!(it[it.len() - 2] < soft, "{it:?}");
    // and the search ended there: no node of a further, cut iteration
    assert_eq!(r.nodes, it[it.len() - 1]);
    assert_eq!(r.depth as usize, it.len());
}

#[test]
fn a_hard_node_limit_cuts_the_iteration_under_way() {
    let hard = 3_000;
    let r = run(Limits {
        nodes: Some(hard),
        ..Default::default()
    });
    let last = *r.iteration_nodes.last().expect("one iteration at least");
    assert!(last < hard, "{:?}", r.iteration_nodes);
    assert!(
        r.nodes >= hard && r.nodes > last,
        "{} {:?}",
        r.nodes,
        r.iteration_nodes
    );
}
