//! The fair search against `vectors/search.jsonl` (every line: decision, every Q bit for bit,
//! table-free work, nodes) and `vectors/games.jsonl` (whole fair games; a subset here, all
//! 128 with `cargo test --release -p drop7 --test it search_vectors -- --ignored`).

use drop7::board::Board;
use drop7::game::{Game, PublicState};
use drop7::search::{FairLeaf, SearchConfig, Searcher, TableKind, completion_bound};
use serde_json::Value;

use crate::common::read_lines;

#[test]
fn search_vectors() {
    let cases = read_lines("search.jsonl");
    assert_eq!(cases.len(), 168);
    for v in &cases {
        let name = v["name"].as_str().unwrap();
        let depth = v["depth"].as_u64().unwrap() as u32;
        let samples = v["samples"].as_u64().unwrap() as u32;
        let state = PublicState {
            board: Board::parse(v["board"].as_str().unwrap()).unwrap(),
            next: v["next"].as_u64().unwrap() as u8,
            moves_remaining: v["rise"].as_u64().unwrap() as u8,
        };
        let cfg = SearchConfig {
            depth,
            samples,
            max_work: v["maxWork"].as_u64().unwrap(),
            table: TableKind::None,
            final_top: None,
        };
        let d = Searcher::new(FairLeaf::default(), cfg).decide(&state);
        let ctx = format!("{name} d{depth}s{samples}");
        assert_eq!(
            d.mirrored,
            v["mirrored"].as_bool().unwrap(),
            "{ctx}: mirrored"
        );
        assert_eq!(
            d.canonical_board.to_string(),
            v["canonicalBoard"].as_str().unwrap(),
            "{ctx}: canonical board"
        );
        assert_eq!(
            d.column,
            Some(v["column"].as_u64().unwrap() as usize),
            "{ctx}: column"
        );
        assert_eq!(
            d.column_canonical,
            Some(v["columnCanonical"].as_u64().unwrap() as usize),
            "{ctx}: columnCanonical"
        );
        for c in 0..7 {
            let want = v["q"][c].as_f64();
            assert_eq!(
                d.q[c].map(f64::to_bits),
                want.map(f64::to_bits),
                "{ctx}: q[{c}] expected {want:?}, got {:?}",
                d.q[c]
            );
        }
        assert_eq!(d.work, v["work"].as_u64().unwrap(), "{ctx}: work");
        let by_depth: Vec<u64> = v["workByDepth"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(d.work_by_depth, by_depth, "{ctx}: workByDepth");
        assert_eq!(d.nodes, v["nodes"].as_u64().unwrap(), "{ctx}: nodes");
        assert_eq!(d.completed_depth, depth, "{ctx}: completedDepth");
        assert_eq!(
            completion_bound(depth, samples),
            v["completionBound"].as_u64().unwrap(),
            "{ctx}: bound"
        );
        // Tables never change a value or a decision.
        for table in [TableKind::Direct(1 << 10), TableKind::Exact] {
            let t =
                Searcher::new(FairLeaf::default(), SearchConfig { table, ..cfg }).decide(&state);
            assert_eq!(t.column, d.column, "{ctx}: {table:?} changed the decision");
            assert_eq!(t.q, d.q, "{ctx}: {table:?} changed a value");
            assert!(t.work <= d.work, "{ctx}: a table added work");
        }
    }
}

/// Play one `games.jsonl` record with the exact per-decision memo and compare everything.
fn check_game(v: &Value) {
    let config = v["config"].as_str().unwrap();
    let samples = if config == "d3s5" { 5 } else { 7 };
    let seed = drop7::rng::parse_seed(v["seedHex"].as_str().unwrap()).unwrap();
    let cfg = SearchConfig {
        depth: 3,
        samples,
        max_work: 16_000_000,
        table: TableKind::Exact,
        final_top: None,
    };
    let mut searcher = Searcher::new(FairLeaf::default(), cfg);
    let mut game = Game::new(seed);
    let (mut work, mut cleared, mut revealed, mut incomplete) = (0u64, 0u64, 0u64, 0u64);
    while !game.finished() {
        let d = searcher.decide(&game.public());
        work += d.work;
        incomplete += (!d.completed(3)) as u64;
        let out = game.play(d.column.unwrap(), &mut ()).unwrap();
        cleared += out.cleared as u64;
        revealed += out.revealed as u64;
    }
    let ctx = format!("games.jsonl {config} {}", v["seedHex"]);
    assert_eq!(game.score, v["score"].as_u64().unwrap(), "{ctx}: score");
    assert_eq!(
        game.moves_played as u64,
        v["moves"].as_u64().unwrap(),
        "{ctx}: moves"
    );
    assert_eq!(
        game.censored(),
        v["censored"].as_bool().unwrap(),
        "{ctx}: censored"
    );
    assert_eq!(
        cleared,
        v["numberedCleared"].as_u64().unwrap(),
        "{ctx}: numberedCleared"
    );
    assert_eq!(
        revealed,
        v["coversRevealed"].as_u64().unwrap(),
        "{ctx}: coversRevealed"
    );
    assert_eq!(work, v["work"].as_u64().unwrap(), "{ctx}: work");
    assert_eq!(
        incomplete,
        v["incomplete"].as_u64().unwrap(),
        "{ctx}: incomplete"
    );
}

#[test]
fn fair_games_subset() {
    let games = read_lines("games.jsonl");
    assert_eq!(games.len(), 128);
    // Two games per configuration keep the suite short; the ignored test plays all 128.
    for v in games.iter().filter(|v| v["config"] == "d3s5").take(2) {
        check_game(v);
    }
    for v in games.iter().filter(|v| v["config"] == "d3s7").take(1) {
        check_game(v);
    }
}

#[test]
#[ignore = "plays all 128 reference fair games (minutes); run with --ignored"]
fn fair_games_all() {
    for v in &read_lines("games.jsonl") {
        check_game(v);
    }
}
