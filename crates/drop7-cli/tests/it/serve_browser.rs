//! `drop7 serve` in a real browser: headless Chromium driven over WebDriver (plain JSON over
//! TCP, no driver library) through a game with advice, three moves, save and reload, the
//! replay of a results file, a screen report, two arms side by side and a training run. After
//! each step the page's DOM (board cells, score, next disc, Q values) is compared with the
//! library's own state, and a screenshot is saved to `docs/figures/serve-*.png`.
//!
//! Ignored in the default run (it needs Debian's `chromium` and `chromium-driver`):
//!
//! ```text
//! apt-get install -y chromium chromium-driver
//! cargo test --release -p drop7-cli --test it serve_browser -- --ignored
//! ```
//!
//! `CHROMEDRIVER` and `CHROMIUM` override the programs' paths.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use drop7::game::{Game, center_column};
use drop7::search::{FairLeaf, SearchConfig, Searcher};
use drop7::trace::traced_move;
use serde_json::{Value, json};

use crate::common::{DROP7, ok};

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 exchange (Connection: close), returning the body.
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(180))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    // read the head, then exactly Content-Length bytes (the driver may keep the connection)
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|n| n.trim().parse::<usize>().unwrap());
    let mut rest = Vec::new();
    match length {
        Some(n) => {
            rest.resize(n, 0);
            r.read_exact(&mut rest).unwrap();
        }
        None if head.contains("transfer-encoding: chunked") => loop {
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            rest.extend_from_slice(&chunk[..n]);
        },
        None => {
            r.read_to_end(&mut rest).unwrap();
        }
    }
    rest
}

/// A WebDriver session.
struct Browser {
    driver: String,
    session: String,
}

impl Browser {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let p = format!("/session/{}{path}", self.session);
        let v: Value =
            serde_json::from_slice(&http(&self.driver, method, &p, body.as_ref())).unwrap();
        if v["value"]["error"].is_string() {
            panic!("webdriver {method} {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    fn js(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn click(&self, css: &str) {
        let e = self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = e
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned();
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Until the page has no request in flight and no animation running.
    fn settle(&self) {
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_millis(100));
        loop {
            if self.js("return document.body.dataset.busy") == "0" {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "the page never settled"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn text(&self, css: &str) -> String {
        self.js(&format!(
            "return document.querySelector({css:?}).textContent"
        ))
        .as_str()
        .unwrap()
        .to_owned()
    }

    fn data(&self, css: &str, key: &str) -> String {
        let v = self.js(&format!(
            "const e = document.querySelector({css:?}); return e ? (e.dataset.{key} || '') : 'no element; page error: ' + (document.body.dataset.lastError || 'none')"
        ));
        let v = v.as_str().unwrap_or_default().to_owned();
        assert!(!v.starts_with("no element"), "{css}: {v}");
        v
    }

    /// The 49 cells of a board element, as digits.
    fn board(&self, css: &str) -> String {
        let v = self.js(&format!(
            "return [...document.querySelectorAll({:?})].map(c => c.dataset.v).join('')",
            format!("{css} .cell")
        ));
        v.as_str().unwrap().to_owned()
    }

    fn no_error(&self) {
        let e = self.js("return document.body.dataset.lastError || ''");
        assert_eq!(e, "", "the page showed an error");
    }

    fn screenshot(&self, name: &str) {
        self.js("window.scrollTo(0, 0)");
        let b64 = self.call("GET", "/screenshot", None);
        let png = base64(b64.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/figures");
        std::fs::write(dir.join(format!("serve-{name}.png")), png).unwrap();
    }
}

fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .map(val)
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for ch in bytes.chunks(4) {
        let n = ch
            .iter()
            .enumerate()
            .fold(0u32, |a, (i, &v)| a | (v as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..ch.len()]);
    }
    out
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else if !e.file_name().to_string_lossy().starts_with("serve-") {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver)"]
fn browser_play_replay_screen_training() {
    // the bundled results (docs/) plus a play results file and a screen with games files
    let tmp = tempfile::Builder::new()
        .prefix("drop7-serve-browser-")
        .tempdir()
        .unwrap();
    let root: PathBuf = tmp.path().join("docs");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs"),
        &root,
    );
    let r = |p: &str| root.join(p).display().to_string();
    let ledger = tmp.path().join("leases.json").display().to_string();
    ok(&[
        "play",
        "--policy",
        "fair-d1s7",
        "--seeds",
        "0x2d700010:4",
        "--out",
        &r("play-fair-d1s7.jsonl"),
        "--quiet",
    ]);
    ok(&[
        "screen",
        "--arms",
        "center,fair-d1s7",
        "--seeds",
        "0x2d700020:8",
        "--out",
        &r("screen-center-vs-d1"),
        "--ledger",
        &ledger,
        "--quiet",
    ]);

    let mut server = Command::new(DROP7)
        .args(["serve", "--port", "0", "--dir"])
        .arg(&root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Killed(server);
    let base = line.split_whitespace().nth(2).unwrap().to_owned();

    let port = free_port();
    let driver_bin = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let _driver = Killed(
        Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{driver_bin}: {e} (apt-get install -y chromium chromium-driver)")
            }),
    );
    let driver = format!("127.0.0.1:{port}");
    let t0 = Instant::now();
    while TcpStream::connect(&driver).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let profile = tmp.path().join("profile");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
        "binary": chromium,
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 "--window-size=1360,1000", format!("--user-data-dir={}", profile.display())],
    }}}});
    let s: Value = serde_json::from_slice(&http(&driver, "POST", "/session", Some(&caps))).unwrap();
    let session = s["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {s}"))
        .to_owned();
    let b = Browser {
        driver: driver.clone(),
        session,
    };

    // 1. start a game
    let seed = 0x2d70_0005u32;
    b.go(&base);
    b.settle();
    b.js(&format!(
        "document.querySelector('#seed').value = '{seed:#010x}'"
    ));
    b.click("#new-game");
    b.settle();
    let mut game = Game::new(seed);
    let check_play = |b: &Browser, g: &Game| {
        assert_eq!(
            b.board("#play-board"),
            g.board.to_string(),
            "board after {} moves",
            g.moves_played
        );
        assert_eq!(b.data("#play-score", "value"), g.score.to_string());
        assert_eq!(b.data("#play-next", "v"), g.next.to_string());
        assert_eq!(b.data("#play-rise", "value"), g.moves_remaining.to_string());
        assert_eq!(b.text("#play-moves"), g.moves_played.to_string());
        b.no_error();
    };
    check_play(&b, &game);

    // 2. advice: the page's Q per column is the search's
    let advise = |b: &Browser, g: &Game| -> usize {
        b.js("document.querySelector('#policy').value = 'fair-d2s7'");
        b.click("#advise");
        b.settle();
        let d = Searcher::new(FairLeaf::default(), SearchConfig::fair(2, 7)).decide(&g.public());
        let q = b.js("return [...document.querySelectorAll('#qrow .q')].map(q => q.dataset.q === undefined ? null : Number(q.dataset.q))");
        let q: Vec<Option<f64>> = serde_json::from_value(q).unwrap();
        assert_eq!(q, d.q.to_vec(), "Q per column");
        assert_eq!(
            b.data("#advice-out", "column"),
            d.column.unwrap().to_string()
        );
        assert_eq!(b.data("#advice-out", "work"), d.work.to_string());
        d.column.unwrap()
    };
    let first = advise(&b, &game);

    // 3. three moves: the advised column, then the center-first rule
    let mut lines = Vec::new();
    for k in 0..3 {
        let c = if k == 0 {
            first
        } else {
            center_column(&game.board).unwrap()
        };
        b.click(&format!("#drops .drop[data-col=\"{c}\"]"));
        b.settle();
        lines.push(serde_json::to_string(&traced_move(&mut game, c).unwrap()).unwrap());
        check_play(&b, &game);
    }
    advise(&b, &game);
    b.screenshot("play");
    // the fair leaf's terms on the same state
    b.click("#leaf");
    b.settle();
    let terms = drop7::fair_leaf::fair_terms(&game.board, game.next, game.moves_remaining);
    let leaf: f64 = b.data("#leaf-out", "leaf").parse().unwrap();
    assert_eq!(leaf, drop7::fair_leaf::combine(&terms));
    // the last move step by step: back to its first frame, then through to the end
    b.click("#frame-prev");
    let n_frames = b.js("return play.frames.length").as_u64().unwrap();
    for _ in 0..n_frames {
        b.click("#frame-prev");
    }
    assert!(
        b.text("#frame-text")
            .starts_with(&format!("step 1/{n_frames}: drop"))
    );
    for _ in 0..n_frames {
        b.click("#frame-next");
    }
    check_play(&b, &game);

    // 4. save (the reference trace lines), undo, and load the saved game back
    b.click("#save");
    b.settle();
    let saved = b.js("return document.querySelector('#saved').value");
    assert_eq!(saved.as_str().unwrap().lines().collect::<Vec<_>>(), lines);
    b.click("#undo");
    b.settle();
    assert_eq!(b.text("#play-moves"), "2");
    b.click("#load");
    b.settle();
    check_play(&b, &game);

    // 5. replay a game of a results file, step by step
    b.click("#tab-replay");
    b.settle();
    b.js("const s = document.querySelector('#results-file'); s.value = 'play-fair-d1s7.jsonl'; s.dispatchEvent(new Event('change'))");
    b.settle();
    let rseed = 0x2d70_0012u32;
    b.js(&format!(
        "document.querySelector('#results-game').value = '{rseed:#010x}'"
    ));
    b.click("#replay-go");
    b.settle();
    let mut policy = drop7::policy::BuiltinPolicy::Fair {
        depth: 1,
        samples: 7,
        top: None,
    }
    .factory()
    .unwrap()();
    let mut rg = Game::new(rseed);
    let panel = "#replay-panels .panel[data-side=\"0\"]";
    for i in 0..12 {
        assert_eq!(
            b.board(&format!("{panel} .board")),
            rg.board.to_string(),
            "replay move {i}"
        );
        assert_eq!(
            b.data(&format!("{panel} .st-score"), "value"),
            rg.score.to_string()
        );
        assert_eq!(
            b.data(&format!("{panel} .st-next"), "v"),
            rg.next.to_string()
        );
        let c = policy.choose(&rg.public()).column.unwrap();
        assert_eq!(
            b.data(&format!("{panel} .st-column"), "value"),
            c.to_string(),
            "chosen column at {i}"
        );
        rg.play(c, &mut ()).unwrap();
        b.click("#rp-next");
    }
    assert!(
        b.text("#replay-panels")
            .contains("replay matches the record")
    );
    b.no_error();
    b.screenshot("replay");

    // 6. a screen report: the bundled v1 report, its table, verdict and figure
    b.click("#tab-runs");
    b.settle();
    b.click("button[data-path=\"screen-d3s7-vs-d2s7.json\"]");
    b.settle();
    let contrasts = b.text("#contrasts");
    assert!(
        contrasts.contains("fair-d3s7 − fair-d2s7") && contrasts.contains("supported"),
        "{contrasts}"
    );
    let loaded = b.js("const i = document.querySelector('#run-detail img.figure'); return i.complete && i.naturalWidth > 0");
    assert_eq!(loaded, true, "the paired-difference figure loads");
    b.no_error();
    b.screenshot("screen");

    // 7. two arms of a screen on one seed, side by side, with the paired difference
    b.click("button[data-path=\"screen-center-vs-d1/report.json\"]");
    b.settle();
    let pseed = 0x2d70_0023u32;
    b.js(&format!(
        "document.querySelector('#pair-seed').value = '{pseed:#010x}'"
    ));
    b.click("#pair-go");
    b.settle();
    let rec = |arm: &str| -> u64 {
        let t =
            std::fs::read_to_string(root.join(format!("screen-center-vs-d1/games-{arm}.jsonl")))
                .unwrap();
        t.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["seed"] == pseed)
            .unwrap()["score"]
            .as_u64()
            .unwrap()
    };
    let delta = rec("fair-d1s7") as i64 - rec("center") as i64;
    let info = b.text("#replay-info");
    assert!(
        info.contains(&format!(
            "fair-d1s7 − center = {}{}",
            if delta > 0 { "+" } else { "" },
            fmt(delta)
        )),
        "{info}"
    );
    b.click("#rp-last");
    for (side, arm) in [(0, "fair-d1s7"), (1, "center")] {
        let score = b.data(
            &format!("#replay-panels .panel[data-side=\"{side}\"] .st-score"),
            "value",
        );
        assert_eq!(score, rec(arm).to_string(), "{arm}");
    }
    // a few moves in, each side shows its own game at the same move
    b.js("const s = document.querySelector('#rp-slider'); s.value = '6'; s.dispatchEvent(new Event('input'))");
    let mut cg = Game::new(pseed);
    for _ in 0..6 {
        cg.play(center_column(&cg.board).unwrap(), &mut ()).unwrap();
    }
    assert_eq!(
        b.board("#replay-panels .panel[data-side=\"1\"] .board"),
        cg.board.to_string()
    );
    b.no_error();
    b.screenshot("pair");

    // 8. a training run: the curve and the validation points
    b.click("#tab-runs");
    b.click("button[data-path=\"pilot-C\"]");
    b.settle();
    let loaded = b.js("const i = document.querySelector('#run-detail img.figure'); return new Promise(r => { if (i.complete) r(i.naturalWidth > 0); else i.onload = () => r(true); })");
    assert_eq!(loaded, true, "the training curve loads");
    assert_eq!(
        b.js("return document.querySelectorAll('#run-detail tbody tr').length"),
        4
    );
    b.no_error();
    b.screenshot("training");

    b.call("DELETE", "", None);
}

/// `toLocaleString('en-US')` of an integer.
fn fmt(x: i64) -> String {
    let digits = x.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if x < 0 { format!("-{out}") } else { out }
}
