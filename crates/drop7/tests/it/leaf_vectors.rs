//! The fair leaf against `vectors/leaf.jsonl`: every value and every raw term, bit for bit.

use drop7::board::Board;
use drop7::fair_leaf::{TERM_NAMES, WEIGHTS, board_part, combine, fair_terms, finish};

use crate::common::read_lines;

#[test]
fn leaf_vectors_bit_exact() {
    let mut n = 0;
    for v in read_lines("leaf.jsonl") {
        let name = v["name"].as_str().unwrap();
        let board = Board::parse(v["board"].as_str().unwrap()).unwrap();
        let terms = fair_terms(
            &board,
            v["next"].as_u64().unwrap() as u8,
            v["rise"].as_u64().unwrap() as u8,
        );
        for (i, t) in v["terms"].as_array().unwrap().iter().enumerate() {
            assert_eq!(t["name"].as_str().unwrap(), TERM_NAMES[i]);
            assert_eq!(t["weight"].as_f64().unwrap(), WEIGHTS[i]);
            let want = t["raw"].as_f64().unwrap();
            assert_eq!(
                terms[i].to_bits(),
                want.to_bits(),
                "{name}: term {} expected {want:?}, got {:?}",
                TERM_NAMES[i],
                terms[i]
            );
        }
        let want = v["leaf"].as_f64().unwrap();
        let got = combine(&terms);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{name}: leaf expected {want:?}, got {got:?}"
        );
        let (next, rise) = (
            v["next"].as_u64().unwrap() as u8,
            v["rise"].as_u64().unwrap() as u8,
        );
        let split = finish(board_part(&board), &board, next, rise);
        assert_eq!(
            split.to_bits(),
            want.to_bits(),
            "{name}: board part + finish differs from the leaf"
        );
        n += 1;
    }
    assert_eq!(n, 400);
}
