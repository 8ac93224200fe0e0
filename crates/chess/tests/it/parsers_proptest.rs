//! Property tests (issue 17): the FEN/EPD parser and the UCI line parser never panic,
//! whatever the input, and every FEN they accept describes a position a game can reach
//! as far as the cheap checks go (one king each, kings apart, side not to move not in
//! check), which round-trips.

use chess::board::{Color, Piece, legal_moves, parse_epd, parse_fen, to_fen};
use chess::uci::{Command, Engine, parse_command};
use proptest::prelude::*;

/// FEN-shaped text: eight ranks of piece letters and digits (often too long, too short
/// or impossible), a side, castling, en passant and clocks drawn from plausible and
/// implausible values. Most placements are well formed boards with one king of each
/// colour dropped on random squares, so that many parse and the possibility checks
/// (adjacent kings, checks, pawns on the back ranks) are exercised.
fn fenish() -> impl Strategy<Value = String> {
    let rank = proptest::collection::vec(
        prop::sample::select(vec![
            "p", "n", "b", "r", "q", "k", "P", "N", "B", "R", "Q", "K", "1", "2", "3", "4", "8",
            "9", "0", "x",
        ]),
        0..10,
    )
    .prop_map(|v| v.concat());
    let ragged = proptest::collection::vec(rank, 7..=9).prop_map(|r| r.join("/"));
    let board = (
        proptest::collection::vec(
            prop_oneof![
                12 => Just('.'),
                1 => prop::sample::select(vec!['p', 'n', 'b', 'r', 'q', 'P', 'N', 'B', 'R', 'Q']),
            ],
            64,
        ),
        0..64usize,
        0..64usize,
    )
        .prop_map(|(mut sq, wk, bk)| {
            sq[wk] = 'K';
            sq[bk] = 'k';
            let ranks: Vec<String> = sq
                .chunks(8)
                .map(|r| {
                    let mut out = String::new();
                    let mut empty = 0;
                    for &c in r {
                        if c == '.' {
                            empty += 1;
                            continue;
                        }
                        if empty > 0 {
                            out.push_str(&empty.to_string());
                            empty = 0;
                        }
                        out.push(c);
                    }
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                    }
                    out
                })
                .collect();
            ranks.join("/")
        });
    let odd_fields = (
        prop::sample::select(vec!["w", "b", "x", ""]),
        prop::sample::select(vec!["-", "KQkq", "K", "kq", "Qz", "HAha"]),
        prop::sample::select(vec!["-", "e3", "e6", "a9", "z1", "h6"]),
        prop::sample::select(vec!["0 1", "99 80", "101 1", "0 0", "-1 5", "x y", "", "0"]),
    )
        .prop_map(|(side, castle, ep, clocks)| format!("{side} {castle} {ep} {clocks}"));
    let fields = prop_oneof![
        3 => prop::sample::select(vec!["w - - 0 1", "b - - 0 1", "w - -", "b - - 7 40"])
            .prop_map(str::to_owned),
        1 => odd_fields,
    ];
    (prop_oneof![1 => ragged, 3 => board], fields)
        .prop_map(|(placement, fields)| format!("{placement} {fields}"))
}

/// UCI-shaped lines: known words, moves, numbers and junk in any order.
fn uci_line() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "uci",
                "isready",
                "ucinewgame",
                "position",
                "startpos",
                "fen",
                "moves",
                "go",
                "depth",
                "nodes",
                "movetime",
                "wtime",
                "btime",
                "winc",
                "binc",
                "movestogo",
                "mate",
                "perft",
                "infinite",
                "ponder",
                "searchmoves",
                "setoption",
                "name",
                "value",
                "Hash",
                "Threads",
                "MultiPV",
                "stop",
                "ponderhit",
                "quit",
                "sd",
                "sn",
                "e2e4",
                "e7e5",
                "e1g1",
                "a7a8q",
                "0000",
                "-1",
                "0",
                "1",
                "99999999999999999999",
                "8/8/8/8/8/8/8/8",
                "w",
                "-",
            ])
            .prop_map(str::to_owned),
            "\\PC{0,12}",
        ],
        0..12,
    )
    .prop_map(|v| v.join(" "))
}

thread_local! {
    /// One engine for all cases (a new one allocates its 64 MB table every time).
    static ENGINE: std::cell::RefCell<Engine> = std::cell::RefCell::new(Engine::new());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fen_parser_never_panics_on_any_string(s in "\\PC{0,100}") {
        let _ = parse_fen(&s);
        let _ = parse_epd(&s);
    }

    #[test]
    fn fen_parser_never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..120)) {
        let s = String::from_utf8_lossy(&b);
        let _ = parse_fen(&s);
        let _ = parse_epd(&s);
    }

    #[test]
    fn accepted_fens_are_possible_and_round_trip(fen in fenish()) {
        if let Ok(board) = parse_fen(&fen) {
            for c in [Color::White, Color::Black] {
                prop_assert_eq!(board.colored_pieces(c, Piece::King).len(), 1, "{}", fen);
            }
            let (wk, bk) = (board.king(Color::White), board.king(Color::Black));
            let apart = (wk.file() as i32 - bk.file() as i32).abs() > 1
                || (wk.rank() as i32 - bk.rank() as i32).abs() > 1;
            prop_assert!(apart, "adjacent kings accepted: {}", fen);
            let again = parse_fen(&to_fen(&board));
            prop_assert!(again.is_ok(), "{} -> {}", fen, to_fen(&board));
            prop_assert_eq!(again.unwrap().hash(), board.hash());
            let _ = legal_moves(&board);
        }
        let _ = parse_epd(&format!("{fen} bm e4; id \"x\";"));
    }

    #[test]
    fn uci_parser_never_panics(s in "\\PC{0,200}") {
        let _ = parse_command(&s);
    }

    #[test]
    fn uci_parser_never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_command(&String::from_utf8_lossy(&b));
    }

    /// Shaped lines go deeper into the parser; the `position` and `setoption` ones are
    /// also executed (no search is started: `go` is only parsed).
    #[test]
    fn uci_lines_parse_and_position_executes(line in uci_line(), fen in fenish()) {
        ENGINE.with_borrow_mut(|e| {
            for l in [line.clone(), format!("position fen {fen} moves e2e4 e7e5"), format!("position {line}")] {
                match parse_command(&l) {
                    Ok(c @ Command::Position { .. }) => {
                        let _ = e.execute(c);
                    }
                    Ok(Command::SetOption { name, value }) if !name.eq_ignore_ascii_case("hash") => {
                        let _ = e.execute(Command::SetOption { name, value });
                    }
                    _ => {}
                }
            }
        });
    }
}

/// The FEN strategy is not vacuous: many of its FENs parse, many are impossible ones.
#[test]
fn fen_strategy_reaches_valid_positions() {
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::new(ProptestConfig::with_cases(500));
    let (ok, impossible) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&fenish(), |fen| {
            match parse_fen(&fen) {
                Ok(_) => ok.set(ok.get() + 1),
                Err(e) if e.to_string().starts_with("impossible position") => {
                    impossible.set(impossible.get() + 1)
                }
                Err(_) => {}
            }
            Ok(())
        })
        .unwrap();
    let (ok, impossible) = (ok.get(), impossible.get());
    assert!(
        ok >= 50 && impossible >= 50,
        "ok {ok}, impossible {impossible} of 500"
    );
}
