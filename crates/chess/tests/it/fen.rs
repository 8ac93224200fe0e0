//! FEN/EPD parsing: every suite position round-trips, SAN `bm` moves parse.

use chess::board::{parse_epd, parse_fen, parse_san, to_fen};

fn suite(name: &str) -> String {
    let path = format!(
        "{}/../../data/chess/suites/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn fen_round_trip_all_suites() {
    let mut n = 0;
    for name in ["perftsuite.epd", "wac.epd", "sts.epd"] {
        for line in suite(name).lines().filter(|l| !l.trim().is_empty()) {
            let epd = parse_epd(line).unwrap_or_else(|e| panic!("{name}: {e}"));
            let fen = to_fen(&epd.board);
            let again = parse_fen(&fen).unwrap();
            assert_eq!(to_fen(&again), fen);
            assert_eq!(again.hash(), epd.board.hash());
            n += 1;
        }
    }
    assert!(n > 1900);
}

#[test]
fn all_bm_moves_parse() {
    for name in ["wac.epd", "sts.epd"] {
        for line in suite(name).lines().filter(|l| !l.trim().is_empty()) {
            let epd = parse_epd(line).unwrap();
            let bm = epd
                .op("bm")
                .or(epd.op("am"))
                .unwrap_or_else(|| panic!("no bm/am: {line}"));
            for m in bm {
                parse_san(&epd.board, m).unwrap_or_else(|e| panic!("{name} {}: {e}", epd.id()));
            }
        }
    }
}

#[test]
fn bad_fens_are_errors() {
    for bad in [
        "",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "a b c d e f g",
    ] {
        assert!(parse_fen(bad).is_err(), "{bad}");
    }
}
