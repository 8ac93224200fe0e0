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
        to_fen(&e.position().board),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"
    );
}

#[test]
fn illegal_move_keeps_previous_position() {
    let mut e = Engine::new();
    e.handle_line("position startpos moves e2e4");
    let before = to_fen(&e.position().board);
    e.handle_line("position startpos moves e2e4 e7e5 g1g5");
    assert_eq!(to_fen(&e.position().board), before);
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
    // A panic in the search thread is answered on the protocol and swallowed: count it.
    assert_eq!(e.search_failures(), 0, "a search thread panicked");
}

/// Wait up to `secs` for the search to end by itself; `false` (after stopping it) if not.
fn ends_within(e: &mut Engine, secs: f64) -> bool {
    let t0 = std::time::Instant::now();
    while e.is_searching() {
        if t0.elapsed().as_secs_f64() > secs {
            e.stop_search();
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    true
}

/// Issue 17: `go btime 100` with White to move searched forever (only the other side's
/// clock is not a limit). Now it answers quickly.
#[test]
fn only_the_other_sides_clock_still_ends() {
    let mut e = Engine::new();
    e.handle_line("position startpos");
    e.handle_line("go btime 100");
    assert!(
        ends_within(&mut e, 5.0),
        "go btime 100 (White to move) did not end"
    );
    e.handle_line("position startpos moves e2e4");
    e.handle_line("go wtime 100 winc 10");
    assert!(
        ends_within(&mut e, 5.0),
        "go wtime 100 (Black to move) did not end"
    );
}

/// Issue 17: `go ponder` answered at once. It must wait for `ponderhit` (then keep the
/// go's limits, counted from the ponderhit) or `stop`.
#[test]
fn ponder_waits_for_ponderhit_or_stop() {
    let mut e = Engine::new();
    e.handle_line("position startpos moves e2e4");
    e.handle_line("go ponder movetime 50");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(e.is_searching(), "answered before ponderhit");
    e.handle_line("ponderhit");
    assert!(ends_within(&mut e, 5.0), "did not end after ponderhit");
    // A search that reached its depth while pondering answers at the ponderhit.
    e.handle_line("go ponder depth 2");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(e.is_searching(), "answered before ponderhit");
    e.handle_line("ponderhit");
    assert!(ends_within(&mut e, 5.0), "did not end after ponderhit");
    // Ponder miss: `stop` ends it.
    e.handle_line("go ponder wtime 60000 btime 60000");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(e.is_searching());
    e.handle_line("stop");
    assert!(!e.is_searching());
}

/// Issue 17: one byte that is not UTF-8 ended the loop (exit 0, no answer); now that
/// line is refused and the next ones are read.
#[test]
fn invalid_utf8_line_is_skipped() {
    let mut e = Engine::new();
    let input: &[u8] = b"\xff\xfe garbage\nposition startpos moves e2e4\r\nisready\n";
    e.run(input);
    assert_eq!(
        to_fen(&e.position().board),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    );
}

/// Issue 17: impossible FENs and illegal `searchmoves` are refused.
#[test]
fn impossible_fen_and_bad_searchmoves_are_errors() {
    let mut e = Engine::new();
    for fen in [
        "8/8/8/3kK3/8/8/8/8 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K2r b - - 0 1",
        "4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
        "4k3/4k3/8/8/8/8/8/4K3 w - - 0 1",
    ] {
        let err = e
            .execute(parse_command(&format!("position fen {fen}")).unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("impossible position"), "{err}");
    }
    e.handle_line("position startpos");
    for go in [
        "go depth 2 searchmoves e2e5",
        "go searchmoves e7e5",
        "go searchmoves",
    ] {
        assert!(
            parse_command(go).and_then(|c| e.execute(c)).is_err(),
            "{go}"
        );
        assert!(!e.is_searching(), "{go}");
    }
}

#[test]
fn an_endless_line_is_skipped_in_bounded_memory() {
    use chess::uci::{Line, read_line_capped};
    use std::io::{BufReader, Cursor};
    // 3 MB without a newline, then a normal line, then a line of exactly the cap.
    let cap = 1000;
    let mut data = vec![b'x'; 3_000_000];
    data.extend_from_slice(b"\nisready\n");
    data.extend(std::iter::repeat_n(b'y', cap));
    data.push(b'\n');
    data.extend_from_slice(b"tail");
    let mut r = BufReader::with_capacity(4096, Cursor::new(data));
    let mut buf = Vec::new();
    assert_eq!(
        read_line_capped(&mut r, &mut buf, cap).unwrap(),
        Line::TooLong
    );
    assert!(
        buf.capacity() <= 2 * cap + 64,
        "held {} bytes",
        buf.capacity()
    );
    buf.clear();
    assert_eq!(
        read_line_capped(&mut r, &mut buf, cap).unwrap(),
        Line::Whole
    );
    assert_eq!(buf, b"isready\n");
    buf.clear();
    assert_eq!(
        read_line_capped(&mut r, &mut buf, cap).unwrap(),
        Line::Whole
    );
    assert_eq!(buf.len(), cap + 1);
    buf.clear();
    assert_eq!(
        read_line_capped(&mut r, &mut buf, cap).unwrap(),
        Line::Whole
    );
    assert_eq!(buf, b"tail");
    buf.clear();
    assert_eq!(read_line_capped(&mut r, &mut buf, cap).unwrap(), Line::Eof);
    // The engine answers after such a line.
    let mut e = Engine::new();
    let mut input = b"x".repeat(chess::uci::MAX_LINE_BYTES + 10);
    input.extend_from_slice(b"\nposition startpos moves e2e4\n");
    e.run(Cursor::new(input));
    assert_eq!(
        to_fen(&e.position().board),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    );
}
