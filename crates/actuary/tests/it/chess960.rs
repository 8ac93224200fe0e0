//! UCI sessions end to end. `UCI_Chess960`: the option is advertised, X-FEN/Shredder-FEN
//! positions are read, castling is read and written king-takes-rook, and off again it is
//! standard. A position with no legal move (mate, stalemate) is answered `bestmove 0000`.

use std::io::{BufRead, BufReader, Write};

use crate::common::uci_engine;

/// Send `lines`, then read until the `bestmove` line after the last `go`; all output.
fn session(lines: &[&str]) -> Vec<String> {
    let mut child = uci_engine();
    let mut stdin = child.stdin.take().unwrap();
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    writeln!(stdin, "isready").unwrap();
    let gos = lines.iter().filter(|l| l.starts_with("go")).count();
    let mut out = Vec::new();
    let mut seen = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        seen += line.starts_with("bestmove") as usize;
        out.push(line);
        if seen == gos && out.iter().any(|l| l == "readyok") {
            break;
        }
    }
    writeln!(stdin, "quit").ok();
    child.wait().unwrap();
    out
}

fn bestmoves(out: &[String]) -> Vec<&str> {
    out.iter()
        .filter_map(|l| l.strip_prefix("bestmove "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect()
}

#[test]
fn chess960_castling_over_uci() {
    let _cpu = crate::common::shared();
    let fen960 = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1";
    let out = session(&[
        "uci",
        "setoption name UCI_Chess960 value true",
        &format!("position fen {fen960}"),
        "go depth 1 searchmoves e1b1",
        // X-FEN spelling of the same rights, and a castle played in the move list.
        "position fen 1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1 moves e1g1 e8b8",
        "go depth 3",
        "setoption name UCI_Chess960 value false",
        "position fen r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
        "go depth 1 searchmoves e1g1",
        "setoption name UCI_Chess960 value true",
        "position fen r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
        "go depth 1 searchmoves e1h1",
    ]);
    assert!(
        out.iter()
            .any(|l| l == "option name UCI_Chess960 type check default false"),
        "{out:?}"
    );
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
    let best = bestmoves(&out);
    assert_eq!(best.len(), 4, "{out:?}");
    assert_eq!(best[0], "e1b1");
    assert_ne!(best[1], "0000");
    assert_eq!(best[2], "e1g1");
    assert_eq!(best[3], "e1h1");
}

#[test]
fn a_chess960_fen_without_the_option_is_an_error() {
    let _cpu = crate::common::shared();
    let out = session(&[
        "position fen 1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
        "go depth 1",
    ]);
    assert!(
        out.iter().any(|l| l.starts_with("info string error")),
        "{out:?}"
    );
}

/// The UCI convention for a side with no legal move: `bestmove 0000`, for checkmate and
/// stalemate alike, at once (a GUI that sent `go` waits for the line).
#[test]
fn no_legal_move_is_answered_0000() {
    let _cpu = crate::common::shared();
    let out = session(&[
        "uci",
        // fool's mate: White is checkmated
        "position fen rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
        "go depth 3",
        // Black is stalemated
        "position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
        "go depth 3",
        // and a position with moves still gets one
        "position startpos",
        "go depth 1",
    ]);
    let moves = bestmoves(&out);
    assert_eq!(moves.len(), 3, "{out:?}");
    assert_eq!(&moves[..2], ["0000", "0000"], "{out:?}");
    assert_ne!(moves[2], "0000", "{out:?}");
}
