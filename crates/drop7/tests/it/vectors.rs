//! Parity with the reference simulator: every trace line, every step case and the RNG
//! vectors in `data/drop7/vectors/`. A failure names the seed, the move and the first
//! field that differs.

use drop7::board::Board;
use drop7::game::{Game, TraceRandom, center_column};
use drop7::rng::{Mulberry32, headless_disc, headless_disc_bits, mix32, reveal_seed};
use drop7::trace::{step, traced_move};
use serde_json::Value;

use crate::common::{read_lines, vectors};

fn hex(v: &Value) -> u32 {
    drop7::rng::parse_seed(v.as_str().unwrap()).unwrap()
}

/// The first field (in the expected object's order) whose value differs, or None.
fn first_divergence(expected: &Value, got: &Value, skip: &[&str]) -> Option<String> {
    let (e, g) = (expected.as_object().unwrap(), got.as_object().unwrap());
    for (k, ev) in e {
        if skip.contains(&k.as_str()) {
            continue;
        }
        match g.get(k) {
            None => return Some(format!("field `{k}` missing (expected {ev})")),
            Some(gv) if gv != ev => return Some(format!("field `{k}`: expected {ev}, got {gv}")),
            _ => {}
        }
    }
    None
}

fn check_traces(file: &str, policy: &str) {
    let lines = read_lines(file);
    let mut i = 0;
    let mut games = 0;
    while i < lines.len() {
        let seed = hex(&lines[i]["seedHex"]);
        let mut game = Game::new(seed);
        let mut random = TraceRandom::new(seed);
        while i < lines.len() && hex(&lines[i]["seedHex"]) == seed {
            let want = &lines[i];
            let column = match policy {
                "random" => random.choose(&game.board),
                _ => center_column(&game.board),
            }
            .expect("a legal column while the game is live");
            let got = serde_json::to_value(traced_move(&mut game, column).unwrap()).unwrap();
            if let Some(d) = first_divergence(want, &got, &["seedHex", "policy"]) {
                panic!("{file}: seed {seed:#010x} move {}: {d}", want["move"]);
            }
            i += 1;
        }
        assert!(
            game.game_over,
            "{file}: seed {seed:#010x}: trace ended but the game did not"
        );
        games += 1;
    }
    assert_eq!(games, if policy == "random" { 64 } else { 16 });
}

#[test]
fn traces_random_policy() {
    check_traces("traces-random.jsonl", "random");
}

#[test]
fn traces_center_policy() {
    check_traces("traces-center.jsonl", "center");
}

#[test]
fn steps() {
    let cases = read_lines("steps.jsonl");
    assert_eq!(cases.len(), 316);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let board = Board::parse(case["board"].as_str().unwrap()).unwrap();
        let next = case["next"].as_u64().unwrap() as u8;
        let rise = case["rise"].as_u64().unwrap() as u8;
        let column = case["column"].as_u64().unwrap() as usize;
        let result = step(&board, next, rise, column, hex(&case["revealSeed"]));
        if case["illegal"].as_bool().unwrap() {
            assert!(result.is_err(), "{name}: expected an illegal move");
            continue;
        }
        let got = serde_json::to_value(result.unwrap_or_else(|e| panic!("{name}: {e}"))).unwrap();
        if let Some(d) = first_divergence(&case["result"], &got, &[]) {
            panic!("steps.jsonl case {name}: {d}");
        }
    }
}

#[test]
fn rng_vectors() {
    let text = std::fs::read_to_string(vectors().join("rng.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    for case in v["mix32"].as_array().unwrap() {
        assert_eq!(mix32(hex(&case["input"])), hex(&case["output"]));
    }
    for case in v["mulberry32"].as_array().unwrap() {
        let mut m = Mulberry32::new(hex(&case["seed"]));
        for o in case["outputs"].as_array().unwrap() {
            assert_eq!(m.next_u32(), hex(o));
        }
        let mut m = Mulberry32::new(hex(&case["seed"]));
        for d in case["discs"].as_array().unwrap() {
            assert_eq!(m.next_disc() as u64, d.as_u64().unwrap());
        }
    }
    for case in v["headlessDiscs"].as_array().unwrap() {
        let seed = hex(&case["seed"]);
        for (m, d) in case["discs"].as_array().unwrap().iter().enumerate() {
            assert_eq!(
                headless_disc(seed, m as u32) as u64,
                d.as_u64().unwrap(),
                "seed {seed:#x} m {m}"
            );
        }
        for (m, b) in case["firstBits"].as_array().unwrap().iter().enumerate() {
            assert_eq!(headless_disc_bits(seed, m as u32), hex(b));
        }
    }
    let rs = &v["revealStreams"];
    let seed = hex(&rs["seed"]);
    for case in rs["moves"].as_array().unwrap() {
        let m = case["movesPlayed"].as_u64().unwrap() as u32;
        let s = reveal_seed(seed, m);
        assert_eq!(s, hex(&case["revealSeed"]));
        let mut rng = Mulberry32::new(s);
        for o in case["firstOutputs"].as_array().unwrap() {
            assert_eq!(rng.next_u32(), hex(o));
        }
    }
    for case in v["chainScore"].as_array().unwrap() {
        let d = case["depth"].as_u64().unwrap() as u32;
        assert_eq!(
            drop7::rules::chain_points(d) as u64,
            case["pointsPerDisc"].as_u64().unwrap()
        );
    }
}
