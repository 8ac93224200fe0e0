//! The UCI engine must survive any input: malformed lines and illegal moves produce an
//! error (printed as `info string error: ...`) and leave the engine usable.

use chess::board::to_fen;
use chess::uci::{Engine, Flow, parse_command};

#[test]
fn malformed_lines_do_not_panic() {
    let mut e = Engine::new();
    let junk = [
        "",
        "   ",
        "garbage",
        "position",
        "position fen",
        "position fen 8/8/8/8 w",
        "position fen k7/8/8/8/8/8/8/7K w - - 0 1 moves a1a2",
        "position startpos moves e2e5",
        "position startpos moves zz",
        "position startpos moves e7e5",
        "go depth",
        "go depth -1 nodes x",
        "go wtime",
        "go movetime abc",
        "setoption name",
        "setoption name Hash value lots",
        "setoption name Hash value 0",
        "setoption name Threads value 100000",
        "setoption name Nope value 1",
        "sd",
        "sn -5",
        "go perft",
        "position startpos moves e2e4 e7e5 e1e3",
        "\u{feff}uci",
        "go ponder",
        "stop",
        "ponderhit",
        "ucinewgame",
        "isready",
    ];
    for line in junk {
        let flow = e.handle_line(line);
        assert_eq!(flow, Flow::Continue, "{line}");
        e.stop_search();
    }
    // Still alive and correct afterwards.
    e.handle_line("position startpos moves e2e4 e7e5");
    assert_eq!(
        to_fen(&e.pos.board),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"
    );
}

#[test]
fn illegal_move_keeps_previous_position() {
    let mut e = Engine::new();
    e.handle_line("position startpos moves e2e4");
    let before = to_fen(&e.pos.board);
    e.handle_line("position startpos moves e2e4 e7e5 g1g5");
    assert_eq!(to_fen(&e.pos.board), before);
    assert!(parse_command("position startpos moves e2e4").is_ok());
    let mut e2 = Engine::new();
    assert!(
        e2.execute(parse_command("position startpos moves e2e4 e2e4").unwrap())
            .is_err()
    );
}

#[test]
fn search_stops_and_restarts() {
    let mut e = Engine::new();
    e.handle_line("setoption name Threads value 2");
    e.handle_line("setoption name Hash value 8");
    e.handle_line("position startpos");
    e.handle_line("go infinite");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(e.is_searching());
    e.handle_line("isready");
    e.handle_line("stop");
    assert!(!e.is_searching());
    e.handle_line("sd 4");
    e.handle_line("go");
    e.stop_search();
    e.handle_line("setoption name MultiPV value 3");
    e.handle_line("go depth 5");
    assert_eq!(e.handle_line("quit"), Flow::Quit);
}

#[test]
fn mate_and_stalemate_positions() {
    let mut e = Engine::new();
    // Checkmated: no legal move; the engine must answer (bestmove 0000) without panicking.
    e.handle_line("position fen rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    e.handle_line("go depth 3");
    e.stop_search();
    e.handle_line("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    e.handle_line("go depth 3");
    e.stop_search();
}
