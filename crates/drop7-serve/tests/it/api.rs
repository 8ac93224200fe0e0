//! The server's endpoints end to end: the server started in this process on a free port (as
//! `drop7 serve` starts it), every API endpoint asked over a plain TCP connection, the answers compared with the library's own calls; bad requests
//! (malformed boards, out-of-range columns, unknown files, `..`, absolute paths, symlinks
//! leading outside the results directory, wrong methods, foreign Host headers) get a 4xx with
//! a JSON message.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use drop7::game::Game;
use drop7::search::{FairLeaf, SearchConfig, Searcher};
use drop7::trace::traced_move;
use serde_json::Value;

/// A server running in this process (its thread ends with the test binary).
struct Serve {
    addr: String,
}

impl Serve {
    /// Serve `dir` on a free port of 127.0.0.1, with `model` as the operator's model file.
    fn start(dir: &Path, model: Option<&str>) -> Self {
        let cfg = drop7_serve::Config {
            dir: dir.to_owned(),
            addr: "127.0.0.1:0".parse().unwrap(),
            model: model.map(PathBuf::from),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let tx2 = tx.clone();
            if let Err(e) = drop7_serve::run(cfg, move |bound, _| tx.send(Ok(bound)).unwrap()) {
                let _ = tx2.send(Err(e.to_string()));
            }
        });
        let addr = rx.recv().unwrap().expect("the server starts");
        Self {
            addr: addr.to_string(),
        }
    }

    /// One request; (status, content type, body).
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &str,
        body: &[u8],
    ) -> (u16, String, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let host = if headers.starts_with("Host:") {
            String::new()
        } else {
            format!("Host: {}\r\n", self.addr)
        };
        let head = format!(
            "{method} {path} HTTP/1.0\r\n{host}{headers}Content-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        let split = buf
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a response head");
        let head = String::from_utf8_lossy(&buf[..split]).into_owned();
        let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        let kind = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-type")
                    .then(|| v.trim().to_owned())
            })
            .unwrap_or_default();
        (status, kind, buf[split + 4..].to_vec())
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (status, kind, body) = self.request("GET", path, "", b"");
        assert!(kind.starts_with("application/json"), "{path}: {kind}");
        (status, serde_json::from_slice(&body).unwrap())
    }

    /// A 200 answer's JSON.
    fn ok(&self, path: &str) -> Value {
        let (status, v) = self.get(path);
        assert_eq!(status, 200, "{path}: {v}");
        v
    }

    /// A refused request: its status and JSON message (which must contain `needle`).
    fn refused(&self, method: &str, path: &str, body: &str, status: u16, needle: &str) {
        let (got, kind, b) = self.request(method, path, "", body.as_bytes());
        let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
        assert_eq!(got, status, "{method} {path}: {v}");
        assert!(kind.starts_with("application/json"), "{path}: {kind}");
        let msg = v["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains(needle),
            "{method} {path}: {msg:?} lacks {needle:?}"
        );
        assert_eq!(v["status"], status);
    }
}

/// Games of a built-in or n-tuple policy on a block, into a results file (`drop7 play`).
fn play(policy: &str, seeds: &str, out: &Path) {
    let spec: ntuple::policy::PolicySpec = policy.parse().unwrap();
    let factory = spec
        .factory(&mut ntuple::policy::Models::new(None))
        .unwrap();
    let opts = drop7::runner::RunOptions {
        threads: 1,
        out: Some(out),
    };
    drop7::runner::run_block(
        &factory,
        seeds.parse().unwrap(),
        &opts,
        &drop7::runner::Silent,
    )
    .unwrap();
}

/// A screen of built-in arms (`drop7 screen`).
fn screen(arms: &[&str], seeds: &str, out: &Path, ledger: &Path, force: bool) {
    let plan = drop7::screen::ScreenPlan {
        arms: arms
            .iter()
            .map(|a| {
                a.parse::<drop7::policy::BuiltinPolicy>()
                    .unwrap()
                    .factory()
                    .unwrap()
            })
            .collect(),
        contrasts: vec![],
        block: seeds.parse().unwrap(),
        out,
        ledger,
        force,
        threads: 1,
        shard: None,
    };
    drop7::screen::run_screen(&plan, &drop7::runner::Silent).unwrap();
}

/// A tiny training run of the small layout (`drop7 train`), without validation.
fn train(out: &Path, ledger: &Path) {
    struct Quiet;
    impl ntuple::train::TrainObserver for Quiet {}
    let cfg = ntuple::train::TrainConfig {
        threads: 1,
        validate_every: 0,
        checkpoint_every: 10_000,
        report_every: 5_000,
        ..ntuple::train::TrainConfig::new(
            ntuple::layout::Layout::parse("win23,phase=none").unwrap(),
            out,
            ledger,
            20_000,
        )
    };
    ntuple::train::Trainer::new(cfg, &Quiet)
        .unwrap()
        .run(&Quiet)
        .unwrap();
}

fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("drop7-serve-{name}-"))
        .tempdir()
        .unwrap()
}

fn library_game(seed: u32, moves: &str) -> (Game, Vec<String>) {
    let mut g = Game::new(seed);
    let lines = moves
        .chars()
        .map(|c| {
            let line = traced_move(&mut g, c.to_digit(10).unwrap() as usize).unwrap();
            serde_json::to_string(&line).unwrap()
        })
        .collect();
    (g, lines)
}

fn assert_state(v: &Value, g: &Game) {
    assert_eq!(v["board"], g.board.to_string());
    assert_eq!(v["score"], g.score);
    assert_eq!(v["next"], g.next);
    assert_eq!(v["rise"], g.moves_remaining);
    assert_eq!(v["level"], g.level);
}

#[test]
fn api_play_step_advice_save_load_and_bad_requests() {
    let tmp = tmpdir("play");
    let s = Serve::start(tmp.path(), None);

    // the page and its assets, embedded
    let (st, kind, body) = s.request("GET", "/", "", b"");
    assert_eq!((st, kind.as_str()), (200, "text/html; charset=utf-8"));
    assert!(String::from_utf8_lossy(&body).contains("/app.js"));
    for (p, k) in [("/app.js", "text/javascript"), ("/app.css", "text/css")] {
        let (st, kind, body) = s.request("GET", p, "", b"");
        assert!(st == 200 && kind.starts_with(k) && body.len() > 1000, "{p}");
    }
    let info = s.ok("/api/info");
    assert_eq!(info["moveCap"], 2000);

    // new games: a named seed, and a random one
    let v = s.ok("/api/new?seed=0x2d700005");
    assert_eq!(v["seed"], 0x2d70_0005u32);
    assert_state(&v["state"], &Game::new(0x2d70_0005));
    let r = s.ok("/api/new?seed=random");
    assert!(r["seed"].is_u64());

    // a game replayed from its columns: state, trace lines and frames agree with the library
    let seed = 0x2d70_0005u32;
    let moves = "3324105566";
    let v = s.ok(&format!("/api/game?seed={seed}&moves={moves}"));
    let (g, lines) = library_game(seed, moves);
    assert_state(&v["state"], &g);
    assert_eq!(v["moves"], moves);
    let trace: Vec<String> = v["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(trace, lines);
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames[0]["kind"], "drop");
    assert_eq!(frames.last().unwrap()["board"], g.board.to_string());
    assert_eq!(v["framesChecked"], true);

    // save: exactly the reference trace lines; load: back to the same game
    let (st, kind, text) = s.request(
        "GET",
        &format!("/api/trace?seed={seed}&moves={moves}"),
        "",
        b"",
    );
    assert_eq!(st, 200, "{kind}");
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), lines);
    let (st, _, b) = s.request("POST", "/api/load", "", text.as_bytes());
    let loaded: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (st, loaded["seed"].as_u64(), loaded["moves"].as_str()),
        (200, Some(seed as u64), Some(moves))
    );
    let tampered = text.replacen("\"score\":", "\"score\":1", 1);
    s.refused("POST", "/api/load", &tampered, 400, "line 1");
    s.refused("POST", "/api/load", "", 400, "no trace lines");
    s.refused("POST", "/api/load", "{\"not\": 1}", 400, "not a trace line");
    let skipped: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    s.refused("POST", "/api/load", &skipped, 400, "move 2 where move 1");
    s.refused("GET", "/api/load", "", 405, "POST");

    // one step from any state, as `drop7 step`
    let start = "0000000000000000000000000000000000000000008888888";
    let v = s.ok(&format!(
        "/api/step?board={start}&next=1&rise=5&column=0&revealSeed=7"
    ));
    let want = drop7::trace::step(&drop7::Board::start(), 1, 5, 0, 7).unwrap();
    assert_eq!(v["board"], want.board);
    assert_eq!(v["scoreDelta"], want.score_delta);
    assert_eq!(v["frames"].as_array().unwrap().len(), 3);
    // column 0 full of gray discs (settled: grays never pop)
    let full = "8000000800000080000008000000800000080000008888888";
    for (q, status, needle) in [
        ("board=12345&next=1&rise=5&column=0", 400, "49 digits"),
        (
            "board=0000000000000000000000000000000000000000008888x88&next=1&rise=5&column=0",
            400,
            "character 46",
        ),
        (
            "board=0000000000000000000000000000100000000000008888888&next=1&rise=5&column=0",
            400,
            "hole",
        ),
        (
            &format!("board={start}&next=1&rise=5&column=7"),
            400,
            "columns are 0-6",
        ),
        (
            &format!("board={start}&next=1&rise=5&column=-1"),
            400,
            "columns are 0-6",
        ),
        (&format!("board={full}&next=1&rise=5&column=0"), 400, "full"),
        (
            // a lone 1 in its column: it would pop, so no move can have left it there
            "board=0000000000000000000000000000000000000000001888888&next=1&rise=5&column=3",
            400,
            "would pop",
        ),
        (
            &format!("board={start}&next=8&rise=5&column=0"),
            400,
            "discs are 1-7",
        ),
        (&format!("board={start}&next=1&rise=0&column=0"), 400, "1-5"),
        (
            &format!("board={start}&rise=5&column=0"),
            400,
            "missing parameter `next`",
        ),
    ] {
        s.refused("GET", &format!("/api/step?{q}"), "", status, needle);
    }

    // advice: the search's own Q per column, column and work
    let v = s.ok(&format!(
        "/api/advice?policy=fair-d2s7&seed={seed}&moves={moves}"
    ));
    let d = Searcher::new(FairLeaf::default(), SearchConfig::fair(2, 7)).decide(&g.public());
    assert_eq!(v["column"], d.column.unwrap());
    assert_eq!(v["work"], d.work);
    let q: Vec<Option<f64>> = serde_json::from_value(v["q"].clone()).unwrap();
    assert_eq!(q, d.q.to_vec());
    let v = s.ok(&format!(
        "/api/advice?policy=center&board={start}&next=3&rise=5"
    ));
    assert_eq!(
        (v["column"].as_u64(), v["qKind"].as_str()),
        (Some(3), Some("none"))
    );
    s.refused(
        "GET",
        "/api/advice?policy=fair-d9s7&seed=1",
        "",
        400,
        "policy",
    );
    s.refused(
        "GET",
        "/api/advice?policy=fair-d5s7&seed=1",
        "",
        400,
        "at most depth 4",
    );
    s.refused(
        "GET",
        "/api/advice?policy=greedy&seed=1",
        "",
        400,
        "unknown policy",
    );
    s.refused(
        "GET",
        "/api/advice?policy=ntuple-d2s7&seed=1",
        "",
        409,
        "needs a model",
    );
    s.refused(
        "GET",
        "/api/advice?policy=ntuple-d2s7@/etc/passwd&seed=1",
        "",
        409,
        "outside",
    );
    s.refused(
        "GET",
        "/api/advice?policy=ntuple-d2s7@../m.bin&seed=1",
        "",
        403,
        "..",
    );

    // bad games: columns out of range, a full column, moves after the end, bad seeds
    s.refused("GET", "/api/game?seed=1&moves=37", "", 400, "`7` at move 2");
    s.refused(
        "GET",
        "/api/game?seed=1&moves=3a",
        "",
        400,
        "columns are 0-6",
    );
    s.refused("GET", "/api/game?seed=0xZZ&moves=3", "", 400, "seed");
    s.refused(
        "GET",
        "/api/game?moves=3",
        "",
        400,
        "missing parameter `seed`",
    );
    let (fseed, k) = (0u32..)
        .find_map(|seed| {
            let mut g = Game::new(seed);
            let mut k = 0;
            while !g.finished() && g.board.is_legal(0) {
                g.play(0, &mut ()).unwrap();
                k += 1;
            }
            (!g.finished()).then_some((seed, k))
        })
        .unwrap();
    s.refused(
        "GET",
        &format!("/api/game?seed={fseed}&moves={}", "0".repeat(k + 1)),
        "",
        400,
        "the column is full",
    );
    let over = s.ok("/api/replay?policy=center&seed=3");
    let cols = over["columns"].as_str().unwrap();
    assert_eq!(over["gameOver"], true);
    s.refused(
        "GET",
        &format!("/api/game?seed=3&moves={cols}3"),
        "",
        400,
        "already over",
    );
    s.refused(
        "GET",
        &format!("/api/advice?seed=3&moves={cols}"),
        "",
        400,
        "game is over",
    );

    // routing, methods, hosts, escapes
    s.refused("GET", "/api/nothing", "", 404, "no such API");
    s.refused("GET", "/nothing.html", "", 404, "no such page");
    s.refused("POST", "/api/game?seed=1", "x", 405, "GET only");
    s.refused("GET", "/api/game?seed=%zz", "", 400, "percent-escape");
    let (st, _, b) = s.request("GET", "/api/info", "Host: evil.example\r\n", b"");
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(st, 403, "{v}");
    assert!(v["error"].as_str().unwrap().contains("localhost"));
}

#[test]
fn api_results_replays_screens_training_and_confinement() {
    let tmp = tmpdir("results");
    let root = tmp.path().join("results");
    std::fs::create_dir_all(root.join("figures")).unwrap();
    let ledger = tmp.path().join("leases.json");
    let r = |p: &str| root.join(p).display().to_string();
    // a play results file, a screen directory, a tiny training run with a model
    play("center", "0x100:3", &root.join("play-center.jsonl"));
    screen(
        &["center", "leftmost"],
        "0x200:4",
        &root.join("scr"),
        &ledger,
        false,
    );
    train(&root.join("run"), &ledger);
    for f in ["checkpoint.bin", "checkpoint.bin.sha256"] {
        let _ = std::fs::remove_file(root.join("run").join(f));
    }
    // a validation point, as the trainer writes it
    let mut progress = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("run/progress.jsonl"))
        .unwrap();
    writeln!(progress, r#"{{"kind":"validation","moves":20014,"candidateMean":1000.0,"fairMean":900.0,"margin":100.0,"bootstrapLb95":-50.0,"bootstrapUb95":250.0,"tLb95":-60.0,"wins":3,"ties":0,"losses":1,"best":true,"seeds":"0x300:4"}}"#).unwrap();
    drop(progress);
    // an n-tuple arm played from the model (its label names the file and its hash)
    let model = r("run/final-weights.bin");
    play(
        &format!("ntuple-1ply@{model}"),
        "0x400:2",
        &root.join("ntuple.jsonl"),
    );
    // a screen report of format v1 (arms named `policy`) with its figure in figures/
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    std::fs::copy(
        docs.join("screen-d3s7-vs-d2s7.json"),
        root.join("screen-d3s7-vs-d2s7.json"),
    )
    .unwrap();
    std::fs::copy(
        docs.join("screen-d3s7-vs-d2s7.md"),
        root.join("screen-d3s7-vs-d2s7.md"),
    )
    .unwrap();
    std::fs::copy(
        docs.join("figures/paired-fair-d3s7-vs-fair-d2s7.svg"),
        root.join("figures/paired-fair-d3s7-vs-fair-d2s7.svg"),
    )
    .unwrap();
    // things outside the directory, and links to them
    std::fs::write(tmp.path().join("secret.json"), "{\"secret\": 1}").unwrap();
    std::fs::copy(
        root.join("play-center.jsonl"),
        tmp.path().join("outside.jsonl"),
    )
    .unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            tmp.path().join("secret.json"),
            root.join("secret-link.json"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            tmp.path().join("outside.jsonl"),
            root.join("outside-link.jsonl"),
        )
        .unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
    }
    let s = Serve::start(&root, None);

    // results files: play files and the screen's games files; links outside are not listed
    let files = s.ok("/api/files");
    let mut listed: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            "ntuple.jsonl",
            "play-center.jsonl",
            "scr/games-center.jsonl",
            "scr/games-leftmost.jsonl"
        ]
    );

    // the games of a file, and a replay checked against its record and the library
    let g = s.ok("/api/games?file=play-center.jsonl");
    assert_eq!(g["total"], 3);
    let rec = &g["games"][1];
    let seed = rec["seed"].as_u64().unwrap() as u32;
    let v = s.ok(&format!("/api/replay?file=play-center.jsonl&seed={seed}"));
    assert_eq!(v["matches"], true);
    assert_eq!(v["score"], rec["score"]);
    let states = v["states"].as_array().unwrap();
    let cols = v["columns"].as_str().unwrap();
    assert_eq!(states.len(), cols.len() + 1);
    let mut game = Game::new(seed);
    for (i, c) in cols.chars().enumerate() {
        let c = c.to_digit(10).unwrap() as usize;
        assert_eq!(Some(c), drop7::game::center_column(&game.board), "move {i}");
        game.play(c, &mut ()).unwrap();
        assert_eq!(states[i + 1]["board"], game.board.to_string());
        assert_eq!(states[i + 1]["score"], game.score);
    }
    s.refused(
        "GET",
        "/api/replay?file=play-center.jsonl&seed=0x999",
        "",
        404,
        "no game with seed",
    );
    // the n-tuple arm: the model is found under --dir by file name and SHA-256
    let n = s.ok("/api/games?file=ntuple.jsonl");
    let nseed = n["games"][0]["seed"].as_u64().unwrap();
    let v = s.ok(&format!("/api/replay?file=ntuple.jsonl&seed={nseed}"));
    assert_eq!(v["matches"], true, "{}", v["record"]);
    assert!(
        v["policy"]
            .as_str()
            .unwrap()
            .starts_with("ntuple-1ply@final-weights.bin#")
    );
    // advice with a model under --dir: one-ply values, and a search with the n-tuple leaf
    let v = s.ok("/api/advice?policy=ntuple-1ply@run/final-weights.bin&seed=5");
    assert_eq!(v["qKind"], "one-ply");
    // the advised column is one of the best by its own one-ply values (every column is legal
    // at the start, so all seven are numbers)
    let q: Vec<f64> = (0..7).map(|c| v["q"][c].as_f64().unwrap()).collect();
    let best = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let column = v["column"].as_u64().expect("a column") as usize;
    // (the choice is made in f32, the values shown in f64: a near-tie may pick either)
    assert!(
        q[column] >= best - 1e-6 * best.abs(),
        "advised column {column}, values {q:?}"
    );
    let v = s.ok("/api/advice?policy=ntuple-d1s2@run/final-weights.bin&seed=5");
    assert_eq!(v["qKind"], "search");
    // Issue 68, defect 1: packs are models too (`@pack` policies got 422, `--model PACK`
    // was refused): the same model packed, its advice the same column.
    let (tables, _) = ntuple::model::load(&root.join("run/final-weights.bin"), false).unwrap();
    let pack = root.join("run/final.d7pk");
    ntuple::pack::pack(&tables, &pack, 1e-6, 0.0, ntuple::pack::DEFAULT_PART_BYTES).unwrap();
    drop(tables);
    let from_bin = s.ok("/api/advice?policy=ntuple-1ply@run/final-weights.bin&seed=5");
    let from_pack = s.ok("/api/advice?policy=ntuple-1ply@run/final.d7pk&seed=5");
    assert_eq!(from_pack["column"], from_bin["column"], "{from_pack}");
    Serve::start(&root, Some(pack.to_str().unwrap()));

    // screens: the new one with its games files and figure, the v1 report with its figure
    let runs = s.ok("/api/runs");
    let mut screens: Vec<&str> = runs["screens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    screens.sort();
    assert_eq!(screens, ["scr/report.json", "screen-d3s7-vs-d2s7.json"]);
    assert_eq!(runs["training"][0]["path"], "run");
    assert_eq!(runs["training"][0]["validations"], 1);
    let sc = s.ok("/api/screen?path=scr");
    assert_eq!(sc["arms"][0]["name"], "center");
    assert_eq!(sc["arms"][1]["gamesFile"], "scr/games-leftmost.jsonl");
    assert_eq!(sc["figures"][0], "scr/paired-leftmost-vs-center.svg");
    assert!(sc["markdown"].as_str().unwrap().starts_with("# Screen"));
    let v1 = s.ok("/api/screen?path=screen-d3s7-vs-d2s7.json");
    assert_eq!(v1["arms"][1]["name"], "fair-d3s7");
    assert!(v1["formatNote"].as_str().unwrap().contains("v1"));
    assert_eq!(v1["contrasts"][0]["deltaMean"], 47032.46875);
    assert_eq!(
        v1["figures"][0],
        "figures/paired-fair-d3s7-vs-fair-d2s7.svg"
    );
    let (st, kind, svg) = s.request(
        "GET",
        "/files/figures/paired-fair-d3s7-vs-fair-d2s7.svg",
        "",
        b"",
    );
    assert_eq!((st, kind.as_str()), (200, "image/svg+xml"));
    assert!(svg.starts_with(b"<svg"));

    // a pair on one seed: both arms replayed, the paired difference from the records
    let p = s.ok("/api/pair?screen=scr&seed=0x201&contrast=0");
    let rec = |arm: &str| {
        let text = std::fs::read_to_string(root.join(format!("scr/games-{arm}.jsonl"))).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["seed"] == 0x201)
            .unwrap()["score"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(
        p["delta"].as_f64().unwrap(),
        rec("leftmost") - rec("center")
    );
    assert_eq!(p["recorded"], true);
    assert_eq!(
        (
            p["candidate"]["matches"].as_bool(),
            p["reference"]["matches"].as_bool()
        ),
        (Some(true), Some(true))
    );
    s.refused(
        "GET",
        "/api/pair?screen=scr&seed=0x999",
        "",
        400,
        "not in the screen's block",
    );
    s.refused(
        "GET",
        "/api/pair?screen=scr&seed=0x201&contrast=3",
        "",
        400,
        "1 contrast",
    );
    s.refused(
        "GET",
        "/api/pair?screen=play-center.jsonl&seed=0x201",
        "",
        400,
        "not a screen report",
    );

    // training: the progress records, the checkpoint and the curve
    let t = s.ok("/api/training?path=run");
    assert!(t["train"].as_array().unwrap().len() >= 3);
    assert_eq!(t["validation"][0]["margin"], 100.0);
    assert!(t["checkpoint"]["moves"].as_u64().unwrap() >= 20_000);
    let (st, kind, svg) = s.request("GET", "/api/training.svg?path=run", "", b"");
    assert_eq!((st, kind.as_str()), (200, "image/svg+xml"));
    assert!(svg.starts_with(b"<svg"));
    s.refused(
        "GET",
        "/api/training?path=scr",
        "",
        404,
        "not a training run",
    );

    // nothing outside --dir: `..`, absolute paths, symlinks leading out, unknown files
    for (path, status, needle) in [
        ("/api/games?file=../outside.jsonl", 403, ".."),
        ("/api/games?file=scr/../../outside.jsonl", 403, ".."),
        ("/api/games?file=%2Fetc%2Fpasswd", 403, "absolute"),
        ("/api/games?file=outside-link.jsonl", 403, "outside"),
        ("/api/games?file=up/outside.jsonl", 403, "outside"),
        ("/api/games?file=nothing.jsonl", 404, "no file"),
        (
            "/api/games?file=screen-d3s7-vs-d2s7.md",
            400,
            "no game records",
        ),
        ("/api/games", 400, "missing parameter `file`"),
        ("/api/screen?path=secret-link.json", 403, "outside"),
        ("/api/screen?path=..%2Fsecret.json", 403, ".."),
        ("/api/training?path=%2Ftmp", 403, "absolute"),
        ("/api/replay?file=../outside.jsonl&seed=0x100", 403, ".."),
        ("/files/../secret.json", 403, ".."),
        ("/files/%2e%2e/secret.json", 403, ".."),
        ("/files/secret-link.json", 403, "outside"),
        ("/files/up/secret.json", 403, "outside"),
        ("/files/run/final-weights.bin", 403, "only svg"),
        ("/files/nothing.svg", 404, "no file"),
    ] {
        s.refused("GET", path, "", status, needle);
    }
    // results of format v1 named the model by a path on another machine: --model of the same
    // file name stands in for it
    let v1_arm = "ntuple-1ply@%2Fwork%2Fruns%2Fpilot%2Ffinal-weights.bin";
    s.refused(
        "GET",
        &format!("/api/replay?policy={v1_arm}&seed=5"),
        "",
        409,
        "as --model",
    );
    let with_model = Serve::start(&root, Some(&model));
    let v = with_model.ok(&format!("/api/replay?policy={v1_arm}&seed=5"));
    assert!(v["moves"].as_u64().unwrap() > 0);
    drop(with_model);
    // a replay whose model is not under --dir
    drop(s);
    std::fs::remove_file(root.join("run/final-weights.bin")).unwrap();
    let s = Serve::start(&root, None);
    s.refused(
        "GET",
        &format!("/api/replay?file=ntuple.jsonl&seed={nseed}"),
        "",
        409,
        "not in the results directory",
    );
}

/// Issue 36, items 1–3: every file the server opens is confined to `--dir` and regular (a
/// symlink beside a checked path, a FIFO, a directory's implied file); a replay of any depth
/// answers promptly or is refused; another site's page cannot make requests.
#[cfg(unix)]
#[test]
fn hostile_files_and_requests_are_refused() {
    use std::os::unix::fs::symlink;
    let tmp = tmpdir("hostile");
    let root = tmp.path().join("results");
    std::fs::create_dir_all(&root).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = "SECRET-OUTSIDE-THE-RESULTS";
    std::fs::write(outside.join("secret.md"), secret).unwrap();
    std::fs::write(
        outside.join("secret.json"),
        format!("{{\"s\": \"{secret}\"}}"),
    )
    .unwrap();
    let ledger = tmp.path().join("leases.json");
    // a real screen, its report.md replaced by a link outside
    screen(
        &["center", "leftmost"],
        "0x200:2",
        &root.join("scr2"),
        &ledger,
        true,
    );
    std::fs::remove_file(root.join("scr2/report.md")).unwrap();
    symlink(outside.join("secret.md"), root.join("scr2/report.md")).unwrap();
    // a training run whose checkpoint.json links outside; a run directory whose
    // progress.jsonl links outside
    std::fs::create_dir_all(root.join("run2")).unwrap();
    std::fs::write(
        root.join("run2/progress.jsonl"),
        "{\"kind\":\"train\",\"moves\":10,\"games\":1,\"movesPerSecond\":10.0,\"recentMeanScore\":5.0,\"recentGames\":1,\"openingValue\":1.0,\"wallSeconds\":1.0,\"threads\":1}\n",
    )
    .unwrap();
    symlink(
        outside.join("secret.json"),
        root.join("run2/checkpoint.json"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("run3")).unwrap();
    std::fs::write(outside.join("progress.jsonl"), format!("{secret}\n")).unwrap();
    symlink(
        outside.join("progress.jsonl"),
        root.join("run3/progress.jsonl"),
    )
    .unwrap();
    // FIFOs where files are expected
    for f in ["fifo.json", "fifo.jsonl", "scr3"] {
        let ok = Command::new("mkfifo").arg(root.join(f)).status().unwrap();
        assert!(ok.success());
    }
    std::fs::create_dir_all(root.join("scr4")).unwrap();
    let ok = Command::new("mkfifo")
        .arg(root.join("scr4/report.json"))
        .status()
        .unwrap();
    assert!(ok.success());

    let s = Serve::start(&root, None);
    let body = |path: &str| {
        let (st, _, b) = s.request("GET", path, "", b"");
        (st, String::from_utf8_lossy(&b).into_owned())
    };
    // The screen is served, its outside report.md is not.
    let (st, b) = body("/api/screen?path=scr2");
    assert!(!b.contains(secret), "{b}");
    assert_eq!(st, 200, "{b}");
    // The run is served, its outside checkpoint is not.
    let (st, b) = body("/api/training?path=run2");
    assert!(!b.contains(secret), "{b}");
    assert_eq!(st, 200, "{b}");
    // A damaged progress file: the error names it as the client did, never by its place on
    // the server's disk.
    std::fs::create_dir_all(root.join("badrun")).unwrap();
    std::fs::write(root.join("badrun/progress.jsonl"), "{not json}\n{}\n").unwrap();
    let (st, b) = body("/api/training?path=badrun");
    assert_eq!(st, 422, "{b}");
    assert!(b.contains("badrun/progress.jsonl"), "{b}");
    assert!(!b.contains(&root.display().to_string()), "{b}");
    // A directory naming an outside progress.jsonl is refused like the file itself.
    for p in [
        "/api/training?path=run3",
        "/api/training?path=run3/progress.jsonl",
    ] {
        let (st, b) = body(p);
        assert!(!b.contains(secret), "{p}: {b}");
        assert!((400..500).contains(&st), "{p}: {st} {b}");
    }
    // FIFOs: every endpoint that takes a path answers at once, many times, and the server
    // still answers afterwards.
    for _ in 0..4 {
        for p in [
            "/api/screen?path=fifo.json",
            "/api/screen?path=scr3",
            "/api/screen?path=scr4",
            "/api/games?file=fifo.jsonl",
            "/api/replay?file=fifo.jsonl&seed=1",
            "/api/training?path=fifo.jsonl",
            "/files/fifo.json",
        ] {
            let (st, b) = body(p);
            assert!((400..500).contains(&st), "{p}: {st} {b}");
        }
    }
    assert_eq!(s.ok("/api/info")["moveCap"], 2000);
    assert!(s.ok("/api/files").to_string().len() > 2);
    // A replay deeper than the cap is refused at once; advice keeps its own cap.
    let t0 = std::time::Instant::now();
    s.refused(
        "GET",
        "/api/replay?policy=fair-d6s7&seed=1",
        "",
        400,
        "at most depth 3",
    );
    s.refused(
        "GET",
        "/api/replay?policy=fair-d4s7&seed=1",
        "",
        400,
        "at most depth 3",
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // Another site's page: refused whatever the endpoint.
    for h in [
        "Origin: http://evil.example\r\n",
        "Sec-Fetch-Site: cross-site\r\n",
        "Sec-Fetch-Site: same-site\r\n",
    ] {
        let (st, _, b) = s.request("GET", "/api/info", h, b"");
        assert_eq!(st, 403, "{h}: {}", String::from_utf8_lossy(&b));
    }
    // The page's own requests still work.
    let own = format!(
        "Origin: http://{}\r\nSec-Fetch-Site: same-origin\r\n",
        s.addr
    );
    let (st, _, _) = s.request("GET", "/api/info", &own, b"");
    assert_eq!(st, 200);
}

/// Work ends with its client (issue 36): four slow replays (a whole depth-3 game each, as
/// many as the server has workers) whose clients leave at once do not keep the server busy —
/// the next request is answered promptly; and connections beyond the server's queue are told
/// 503 rather than each given a thread.
#[test]
fn replays_end_with_their_clients_and_connections_are_capped() {
    let tmp = tmpdir("cancel");
    let srv = Serve::start(tmp.path(), None);
    let gone: Vec<TcpStream> = (0..4)
        .map(|i| {
            let mut s = TcpStream::connect(&srv.addr).unwrap();
            write!(
                s,
                "GET /api/replay?policy=fair-d3s7&seed={} HTTP/1.1\r\nHost: {}\r\n\r\n",
                1000 + i,
                srv.addr
            )
            .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    drop(gone);
    let t0 = std::time::Instant::now();
    let v = srv.ok("/api/info");
    assert!(v.is_object());
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "answered after {:?}: the replays went on without their clients",
        t0.elapsed()
    );
    // Far more silent connections than readers and queue: the surplus is refused at once.
    use drop7_serve::http::{QUEUE, READERS};
    let mut silent: Vec<TcpStream> = (0..READERS + QUEUE + 2)
        .map(|_| TcpStream::connect(&srv.addr).unwrap())
        .collect();
    // (The readers take their first silent connections after the queue has filled: refill
    // the places they leave.)
    std::thread::sleep(Duration::from_millis(300));
    silent.extend((0..READERS).map(|_| TcpStream::connect(&srv.addr).unwrap()));
    std::thread::sleep(Duration::from_millis(500));
    let (status, _, body) = srv.request("GET", "/api/info", "", b"");
    assert_eq!(status, 503, "{}", String::from_utf8_lossy(&body));
    drop(silent);
}
