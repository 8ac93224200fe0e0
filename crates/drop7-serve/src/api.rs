//! The JSON API: each handler maps query parameters onto library calls and answers one JSON
//! value, or an [`ApiError`] (4xx with a one-line message).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use drop7::board::{Board, SIZE};
use drop7::game::{CENTER_ORDER, Game, PublicState};
use drop7::policy::{BuiltinPolicy, Policy, PolicyFactory};
use drop7::rng::{Mulberry32, mix32, reveal_seed};
use drop7::runner::GameRecord;
use drop7::screen::{ScreenReport, file_stem, read_report};
use drop7::search::{FairLeaf, Leaf, SearchConfig, Searcher};
use drop7::seeds::{SeedBlock, parse_seed, seed_hex};
use drop7::trace::{TraceLine, traced_move};
use ntuple::play::{NTupleLeaf, ONE_PLY_SAMPLES, VALUE_SCALE, one_ply_samples};
use ntuple::policy::PolicySpec;
use ntuple::tables::Tables;
use ntuple::train::{ProgressRecord, read_progress, training_curve};
use serde_json::{Value, json};

use super::files::{Root, content_type, has_ext};
use super::frames::animate;
use super::{ApiError, Body, Ctx, Gone, Params};

/// A loaded model: its tables and the SHA-256 of its file.
#[derive(Clone)]
pub struct Model {
    pub tables: Arc<Tables>,
    pub sha256: String,
}

/// Deepest search the advice button runs (deeper ones take minutes per move).
const MAX_ADVICE_DEPTH: u32 = 4;
/// Deepest search a whole-game replay may use (a game is about a hundred decisions: at
/// depth 3 a replay takes seconds, at depth 4 minutes).
const MAX_REPLAY_DEPTH: u32 = 3;
/// Wall time one replay may take before it is abandoned (503): the work per request is
/// bounded whatever the policy.
const REPLAY_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);
/// Replays kept in memory.
const REPLAY_CACHE: usize = 64;
/// Records listed per results file.
const MAX_LISTED: usize = 100_000;
/// Largest file served or parsed as JSON.
const MAX_FILE: u64 = 64 << 20;

fn param<'a>(p: &'a Params, name: &str) -> Result<&'a str, ApiError> {
    p.get(name)
        .map(String::as_str)
        .ok_or_else(|| ApiError::bad(format!("missing parameter `{name}`")))
}

fn seed_param(p: &Params) -> Result<u32, ApiError> {
    let s = param(p, "seed")?;
    parse_seed(s).map_err(|e| ApiError::bad(format!("seed: {e}")))
}

fn to_value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("serialises")
}

fn legal(b: &Board) -> Vec<bool> {
    (0..SIZE).map(|c| b.is_legal(c)).collect()
}

fn state_json(g: &Game) -> Value {
    json!({
        "board": g.board.to_string(), "next": g.next, "rise": g.moves_remaining,
        "score": g.score, "level": g.level, "movesPlayed": g.moves_played,
        "finished": g.finished(), "gameOver": g.game_over, "censored": g.censored(),
        "legal": legal(&g.board),
    })
}

/// The columns of a game as the page sends them: one digit 0-6 per move.
fn parse_moves(s: &str) -> Result<Vec<usize>, ApiError> {
    s.chars()
        .enumerate()
        .map(|(i, ch)| match ch.to_digit(10) {
            Some(d) if (d as usize) < SIZE => Ok(d as usize),
            _ => Err(ApiError::bad(format!(
                "moves: `{ch}` at move {} is not a column (columns are 0-6)",
                i + 1
            ))),
        })
        .collect()
}

fn moves_string(cols: &[usize]) -> String {
    cols.iter().map(|c| char::from(b'0' + *c as u8)).collect()
}

/// Replay `columns` on game `seed`: the game, its trace lines and the state before the last
/// move.
fn replay_columns(
    seed: u32,
    columns: &[usize],
) -> Result<(Game, Vec<TraceLine>, Option<Game>), ApiError> {
    let mut game = Game::new(seed);
    let mut trace = Vec::with_capacity(columns.len());
    let mut before = None;
    for (i, &c) in columns.iter().enumerate() {
        if game.finished() {
            return Err(ApiError::bad(format!(
                "move {}: the game is already over",
                i + 1
            )));
        }
        before = Some(game.clone());
        let line =
            traced_move(&mut game, c).map_err(|e| ApiError::bad(format!("move {}: {e}", i + 1)))?;
        trace.push(line);
    }
    Ok((game, trace, before))
}

/// The frames of the move from `before` in column `c`, checked against the game after it.
fn move_frames(before: &Game, c: usize, after: &Game, line: &TraceLine) -> (Value, bool) {
    let mut rng = Mulberry32::new(reveal_seed(before.seed, before.moves_played));
    let a = animate(
        &before.board,
        c,
        before.next,
        before.moves_remaining,
        &mut rng,
    );
    let waves: Vec<_> = line
        .waves
        .iter()
        .map(|w| (w.depth, w.cleared, w.revealed, w.points))
        .collect();
    let ok =
        a.board == after.board && a.score_delta == after.score - before.score && a.waves == waves;
    if ok {
        (to_value(&a.frames), true)
    } else {
        // never show a picture the library disagrees with: the end state only
        let end = json!([{"kind": "end", "text": "after the move", "board": after.board.to_string(),
            "marks": [], "hits": [], "points": after.score - before.score}]);
        (end, false)
    }
}

pub fn info(ctx: &Ctx) -> Result<Value, ApiError> {
    let mut policies = vec![
        "fair-d1s7",
        "fair-d2s7",
        "fair-d3s7",
        "center",
        "leftmost",
        "random",
    ];
    if ctx.model.is_some() {
        policies.extend(["ntuple-1ply", "ntuple-d2s7", "ntuple-d3s7"]);
    }
    Ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        // Names only: the page needs no absolute path of this machine.
        "dir": ctx.root.dir.file_name().map_or_else(|| "/".into(), |n| n.to_string_lossy().into_owned()),
        "model": ctx.model.as_ref().map(|m| m.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())),
        "policies": policies,
        "maxAdviceDepth": MAX_ADVICE_DEPTH,
        "moveCap": drop7::rules::MOVE_CAP,
    }))
}

pub fn new_game(p: &Params) -> Result<Value, ApiError> {
    let seed = match p.get("seed").map(String::as_str) {
        None | Some("") | Some("random") => {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0),
            );
            mix32(h.finish() as u32 ^ (h.finish() >> 32) as u32)
        }
        Some(_) => seed_param(p)?,
    };
    let g = Game::new(seed);
    Ok(
        json!({"seed": seed, "seedHex": seed_hex(seed), "moves": "", "state": state_json(&g), "trace": [], "frames": []}),
    )
}

/// `seed`, `moves` (digits): the game after those moves, every trace line, and the frames of
/// the last move.
pub fn game(p: &Params) -> Result<Value, ApiError> {
    let seed = seed_param(p)?;
    let columns = parse_moves(p.get("moves").map_or("", String::as_str))?;
    let (game, trace, before) = replay_columns(seed, &columns)?;
    let (frames, checked) = match (&before, columns.last(), trace.last()) {
        (Some(b), Some(&c), Some(line)) => move_frames(b, c, &game, line),
        _ => (json!([]), true),
    };
    Ok(json!({
        "seed": seed, "seedHex": seed_hex(seed), "moves": moves_string(&columns),
        "state": state_json(&game), "trace": to_value(&trace), "frames": frames, "framesChecked": checked,
    }))
}

/// The game as the reference trace format writes it (`drop7 trace`): one JSON line per move.
pub fn trace(p: &Params) -> Result<Body, ApiError> {
    let seed = seed_param(p)?;
    let columns = parse_moves(p.get("moves").map_or("", String::as_str))?;
    let (_, trace, _) = replay_columns(seed, &columns)?;
    let text: String = trace
        .iter()
        .map(|t| serde_json::to_string(t).expect("a trace line serialises") + "\n")
        .collect();
    Ok(Body::Bytes(
        text.into_bytes(),
        "application/x-ndjson; charset=utf-8",
    ))
}

fn small(p: &Params, name: &str, lo: u8, hi: u8, what: &str) -> Result<u8, ApiError> {
    let s = param(p, name)?;
    s.parse::<u8>()
        .ok()
        .filter(|v| (lo..=hi).contains(v))
        .ok_or_else(|| ApiError::bad(format!("{name} `{s}`: {what} are {lo}-{hi}")))
}

fn board_state(p: &Params) -> Result<PublicState, ApiError> {
    let s = param(p, "board")?;
    let board = if s == "startpos" {
        drop7::board::Board::start()
    } else {
        // as the command line: a board between moves is settled (nothing left to pop)
        drop7::board::Board::parse_settled(s).map_err(|e| ApiError::bad(e.to_string()))?
    };
    Ok(PublicState {
        board,
        next: small(p, "next", 1, 7, "discs")?,
        moves_remaining: small(p, "rise", 1, 5, "moves until the rise")?,
    })
}

/// One move from any public state, as `drop7 step` plays it, with its frames.
pub fn step(p: &Params) -> Result<Value, ApiError> {
    let s = board_state(p)?;
    let cs = param(p, "column")?;
    let column: usize = cs
        .parse()
        .map_err(|_| ApiError::bad(format!("column `{cs}`: columns are 0-6")))?;
    let rs = match p.get("revealSeed") {
        Some(r) => parse_seed(r).map_err(|e| ApiError::bad(format!("revealSeed: {e}")))?,
        None => 0,
    };
    let r = drop7::trace::step(&s.board, s.next, s.moves_remaining, column, rs)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    let a = animate(
        &s.board,
        column,
        s.next,
        s.moves_remaining,
        &mut Mulberry32::new(rs),
    );
    let checked = a.board.to_string() == r.board && a.score_delta == r.score_delta as u64;
    let mut v = to_value(&r);
    v["frames"] = if checked {
        to_value(&a.frames)
    } else {
        json!([])
    };
    v["framesChecked"] = json!(checked);
    Ok(v)
}

/// The public state a request names: `seed` + `moves`, or `board` + `next` + `rise`.
fn requested_state(p: &Params) -> Result<PublicState, ApiError> {
    if p.contains_key("board") {
        return board_state(p);
    }
    let seed = seed_param(p)?;
    let columns = parse_moves(p.get("moves").map_or("", String::as_str))?;
    let (g, ..) = replay_columns(seed, &columns)?;
    if g.finished() {
        return Err(ApiError::bad(
            "the game is over: there is no move to advise",
        ));
    }
    Ok(g.public())
}

/// Models kept loaded, least recently used evicted first, within [`MODEL_CACHE_BYTES`] of
/// weights (an arm-C model is 4 GB: five distinct models must not mean 20).
#[derive(Default)]
pub struct ModelCache {
    entries: HashMap<PathBuf, (Model, u64)>,
    /// Use counter: an entry's stamp is the count when it was last used.
    clock: u64,
}

/// Bytes of weights the model cache keeps at most (one larger model is still served: it is
/// then the only one kept).
pub const MODEL_CACHE_BYTES: u64 = 6 << 30;

impl ModelCache {
    fn bytes(m: &Model) -> u64 {
        m.tables.weights.len() as u64 * 4
    }

    fn get(&mut self, path: &Path) -> Option<Model> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(path).map(|(m, used)| {
            *used = clock;
            m.clone()
        })
    }

    /// Make room for `incoming` bytes: evict least recently used models until it fits.
    fn make_room(&mut self, incoming: u64) {
        loop {
            let held: u64 = self.entries.values().map(|(m, _)| Self::bytes(m)).sum();
            if held + incoming <= MODEL_CACHE_BYTES || self.entries.is_empty() {
                return;
            }
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(p, _)| p.clone())
                .expect("not empty");
            self.entries.remove(&oldest);
        }
    }

    fn insert(&mut self, path: PathBuf, m: Model) {
        self.make_room(Self::bytes(&m));
        self.clock += 1;
        self.entries.insert(path, (m, self.clock));
    }

    /// Models held, for `/api/info`-style reporting and tests.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn load_model(ctx: &Ctx, path: &Path) -> Result<Model, ApiError> {
    let mut cache = ctx.models.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = cache.get(path) {
        return Ok(m);
    }
    let failed = |e: ntuple::Error| {
        ApiError::new(
            422,
            format!(
                "model {}: {e}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
        )
    };
    // Room first (from the header's size), so that memory never holds the old models and
    // the new one at once beyond the bound.
    let entries = ntuple::pack::entries_of(path).map_err(failed)?;
    cache.make_room(entries * 4);
    let (tables, info) = ntuple::model::load(path, false).map_err(failed)?;
    let m = Model {
        tables: Arc::new(tables),
        sha256: info.sha256,
    };
    cache.insert(path.to_owned(), m.clone());
    Ok(m)
}

/// The model an n-tuple policy names: none (the operator's `--model`), `FILE#SHA12` (as
/// results label arms: the `--model` file or a file of that name under `--dir` whose SHA-256
/// starts so), or a path relative to `--dir`.
fn model_for(ctx: &Ctx, named: Option<&Path>) -> Result<Model, ApiError> {
    let Some(named) = named else {
        return match &ctx.model {
            Some(m) => load_model(ctx, m),
            None => Err(ApiError::new(
                409,
                "this policy needs a model: start `drop7 serve` with --model FILE, or name a model file under the results directory (ntuple-d3s7@PATH)",
            )),
        };
    };
    let s = named.to_string_lossy();
    if let Some((name, sha)) = s.rsplit_once('#')
        && !name.contains('/')
    {
        let mut candidates: Vec<PathBuf> = ctx
            .model
            .iter()
            .filter(|m| m.file_name().is_some_and(|n| n.to_string_lossy() == name))
            .cloned()
            .collect();
        candidates.extend(
            ctx.root
                .walk()
                .into_iter()
                .filter(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == name)),
        );
        for c in candidates {
            let m = load_model(ctx, &c)?;
            if !sha.is_empty() && m.sha256.starts_with(&sha.to_ascii_lowercase()) {
                return Ok(m);
            }
        }
        return Err(ApiError::new(
            409,
            format!(
                "model `{s}` is not in the results directory (nor --model): no file `{name}` with that SHA-256"
            ),
        ));
    }
    if ctx.model.as_deref() == Some(named) {
        return load_model(ctx, named);
    }
    if named.is_absolute() {
        // results of format v1 named a model by its path on the machine that played them:
        // the operator's --model of the same file name stands in (no hash to check it by)
        if let Some(m) = &ctx.model
            && m.file_name().is_some()
            && m.file_name() == named.file_name()
        {
            return load_model(ctx, m);
        }
        return Err(ApiError::new(
            409,
            format!(
                "model `{s}` is a path outside the results directory: pass that file (or one of the same name) as --model"
            ),
        ));
    }
    let path = ctx.root.resolve(&s)?;
    load_model(ctx, &path)
}

fn parse_policy(s: &str) -> Result<PolicySpec, ApiError> {
    s.parse::<PolicySpec>()
        .map_err(|e| ApiError::bad(format!("policy: {e}")))
}

/// The search depth of a policy (`None` for policies that do not search).
fn search_depth(spec: &PolicySpec) -> Option<u32> {
    match spec {
        PolicySpec::Builtin(BuiltinPolicy::Fair { depth, .. }) => Some(*depth),
        PolicySpec::NTuple {
            search: Some((d, _)),
            ..
        } => Some(*d),
        _ => None,
    }
}

/// Refuse a policy that searches deeper than `max` (`what`: the endpoint, for the message).
fn check_depth(spec: &PolicySpec, name: &str, max: u32, what: &str) -> Result<(), ApiError> {
    match search_depth(spec) {
        Some(d) if d > max => Err(ApiError::bad(format!(
            "policy `{name}`: {what} searches at most depth {max}"
        ))),
        _ => Ok(()),
    }
}

/// Fresh policy instances for a policy name or a results file's arm label (for replays:
/// at most [`MAX_REPLAY_DEPTH`]).
fn factory_for(ctx: &Ctx, label: &str) -> Result<PolicyFactory, ApiError> {
    let spec = parse_policy(label)?;
    check_depth(&spec, label, MAX_REPLAY_DEPTH, "a replay")?;
    match spec {
        PolicySpec::Builtin(b) => b.factory().map_err(|e| ApiError::bad(e.to_string())),
        PolicySpec::NTuple { search, top, model } => {
            let m = model_for(ctx, model.as_deref())?;
            Ok(ntuple::play::factory(
                search,
                top,
                label.to_owned(),
                m.tables,
            ))
        }
    }
}

fn search_json<L: Leaf>(leaf: L, (d, k): (u32, u32), top: Option<u32>, s: &PublicState) -> Value {
    let cfg = SearchConfig::fair(d, k).with_top(top);
    let t0 = std::time::Instant::now();
    let dec = Searcher::new(leaf, cfg).decide(s);
    json!({
        "column": dec.column, "q": dec.q, "work": dec.work, "workByDepth": dec.work_by_depth,
        "nodes": dec.nodes, "completedDepth": dec.completed_depth, "depth": d, "samples": k,
        "seconds": t0.elapsed().as_secs_f64(), "qKind": "search",
    })
}

/// The one-ply n-tuple policy's per-column values (points), as `choose_one_ply` forms them.
fn one_ply_json(t: &Tables, s: &PublicState, policy: &mut dyn Policy) -> Value {
    let (board, mirrored) = s.board.canonical();
    let cs = PublicState { board, ..*s };
    let mut sums = [(0.0f64, 0u32); SIZE];
    one_ply_samples(&cs, |c, b, out| {
        let reward = out.score_delta as f64 / VALUE_SCALE;
        let v = if out.game_over {
            reward
        } else {
            reward + ntuple::play::value(t, b, out.moves_remaining) as f64
        };
        sums[c].0 += v;
        sums[c].1 += 1;
    });
    let mut q = [None; SIZE];
    for c in CENTER_ORDER {
        let (sum, n) = sums[c];
        if n > 0 {
            let mean = if n == 1 {
                sum
            } else {
                sum / ONE_PLY_SAMPLES as f64
            };
            q[if mirrored { SIZE - 1 - c } else { c }] = Some(mean * VALUE_SCALE);
        }
    }
    let choice = policy.choose(s);
    json!({"column": choice.column, "q": q, "work": choice.work, "qKind": "one-ply"})
}

/// `policy` and a state: the policy's column, per-column Q (searches and the one-ply
/// policy), work.
pub fn advice(ctx: &Ctx, p: &Params) -> Result<Value, ApiError> {
    let name = p.get("policy").map_or("fair-d2s7", String::as_str);
    let spec = parse_policy(name)?;
    check_depth(&spec, name, MAX_ADVICE_DEPTH, "advice")?;
    let s = requested_state(p)?;
    if s.board.legal_mask() == 0 {
        return Err(ApiError::bad("no legal column: there is no move to advise"));
    }
    let mut v = match &spec {
        PolicySpec::Builtin(BuiltinPolicy::Fair {
            depth,
            samples,
            top,
        }) => search_json(FairLeaf::default(), (*depth, *samples), *top, &s),
        PolicySpec::NTuple {
            search: Some(dk),
            top,
            model,
        } => {
            let m = model_for(ctx, model.as_deref())?;
            search_json(NTupleLeaf::new(m.tables), *dk, *top, &s)
        }
        PolicySpec::NTuple {
            search: None,
            model,
            ..
        } => {
            let m = model_for(ctx, model.as_deref())?;
            let mut policy = ntuple::play::factory(None, None, name.to_owned(), m.tables.clone())();
            one_ply_json(&m.tables, &s, policy.as_mut())
        }
        PolicySpec::Builtin(b) => {
            let mut policy = b.factory().map_err(|e| ApiError::bad(e.to_string()))?();
            let c = policy.choose(&s);
            json!({"column": c.column, "q": [null, null, null, null, null, null, null], "work": c.work, "qKind": "none"})
        }
    };
    v["policy"] = json!(name);
    v["state"] = json!({"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining});
    Ok(v)
}

/// The frozen fair leaf on a state (as `drop7 leaf`): its value and the 18 raw terms.
pub fn leaf(p: &Params) -> Result<Value, ApiError> {
    use drop7::fair_leaf::{TERM_NAMES, WEIGHTS, combine, fair_terms};
    let s = requested_state(p)?;
    let terms = fair_terms(&s.board, s.next, s.moves_remaining);
    let list: Vec<Value> = (0..terms.len())
        .map(|i| json!({"name": TERM_NAMES[i], "weight": WEIGHTS[i], "raw": terms[i]}))
        .collect();
    Ok(json!({
        "state": {"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining},
        "leaf": combine(&terms), "terms": list,
    }))
}

/// A saved game (reference trace JSON lines) checked move by move against a replay.
pub fn load(body: &str) -> Result<Value, ApiError> {
    let mut game: Option<Game> = None;
    let mut columns = Vec::new();
    for (i, line) in body.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let t: TraceLine = serde_json::from_str(line)
            .map_err(|e| ApiError::bad(format!("line {n}: not a trace line: {e}")))?;
        let g = game.get_or_insert_with(|| Game::new(t.seed));
        if t.seed != g.seed {
            return Err(ApiError::bad(format!(
                "line {n}: seed {} differs from the first line's {}",
                seed_hex(t.seed),
                seed_hex(g.seed)
            )));
        }
        if t.move_number != g.moves_played + 1 {
            return Err(ApiError::bad(format!(
                "line {n}: move {} where move {} was expected",
                t.move_number,
                g.moves_played + 1
            )));
        }
        if g.finished() {
            return Err(ApiError::bad(format!(
                "line {n}: a move after the end of the game"
            )));
        }
        let replayed =
            traced_move(g, t.column).map_err(|e| ApiError::bad(format!("line {n}: {e}")))?;
        if replayed != t {
            return Err(ApiError::bad(format!(
                "line {n}: does not replay: the game gives score {} and board {}, the file says {} and {}",
                replayed.score, replayed.board, t.score, t.board
            )));
        }
        columns.push(t.column);
    }
    let g = game.ok_or_else(|| {
        ApiError::bad("no trace lines: save a game from the page, or `drop7 trace --seed S`")
    })?;
    Ok(
        json!({"seed": g.seed, "seedHex": seed_hex(g.seed), "moves": moves_string(&columns), "count": columns.len()}),
    )
}

/// Game records of a results file (lines that are not records are counted, not fatal).
fn read_records(
    root: &Root,
    path: &Path,
    limit: usize,
) -> Result<(Vec<GameRecord>, usize, usize), ApiError> {
    let text = root.read_to_string(path, 4 * MAX_FILE)?;
    let (mut out, mut total, mut bad) = (Vec::new(), 0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<GameRecord>(line) {
            Ok(r) => {
                total += 1;
                if out.len() < limit {
                    out.push(r);
                }
            }
            Err(_) => bad += 1,
        }
    }
    Ok((out, total, bad))
}

/// The first record of a file, if it is a results file.
fn first_record(root: &Root, path: &Path) -> Option<GameRecord> {
    use std::io::BufRead;
    let f = root.open(path, u64::MAX).ok()?;
    let mut r = std::io::BufReader::new(f);
    let mut line = String::new();
    for _ in 0..4 {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            return serde_json::from_str(line.trim()).ok();
        }
    }
    None
}

/// Results files (`play --out`, a screen's `games-ARM.jsonl`) under the root.
pub fn results_files(ctx: &Ctx) -> Result<Value, ApiError> {
    let files: Vec<Value> = ctx
        .root
        .walk()
        .into_iter()
        .filter(|f| has_ext(f, &["jsonl"]) && f.file_name().is_some_and(|n| n != "progress.jsonl"))
        .filter_map(|f| {
            let r = first_record(&ctx.root, &f)?;
            let dir = f.parent()?;
            let screen = dir.join("screen.json").is_file().then(|| ctx.root.rel(dir));
            Some(json!({
                "path": ctx.root.rel(&f), "arm": r.policy, "kind": if screen.is_some() { "screen" } else { "play" },
                "screen": screen, "bytes": std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0),
            }))
        })
        .collect();
    Ok(json!({"files": files}))
}

fn file_param(ctx: &Ctx, p: &Params, name: &str) -> Result<PathBuf, ApiError> {
    ctx.root.resolve(param(p, name)?)
}

/// The games of one results file.
pub fn games(ctx: &Ctx, p: &Params) -> Result<Value, ApiError> {
    let path = file_param(ctx, p, "file")?;
    if !path.is_file() {
        return Err(ApiError::bad(format!(
            "`{}` is not a file",
            ctx.root.rel(&path)
        )));
    }
    let (records, total, bad) = read_records(&ctx.root, &path, MAX_LISTED)?;
    if total == 0 {
        return Err(ApiError::bad(format!(
            "`{}` holds no game records",
            ctx.root.rel(&path)
        )));
    }
    let games: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({"seed": r.seed, "seedHex": r.seed_hex, "arm": r.policy, "score": r.score,
            "moves": r.moves, "censored": r.censored, "illegal": r.illegal})
        })
        .collect();
    Ok(
        json!({"file": ctx.root.rel(&path), "games": games, "total": total, "listed": games.len(), "notRecords": bad}),
    )
}

/// Play game `seed` with `label`'s policy, recording every state and column (cached).
fn replay_game(ctx: &Ctx, label: &str, seed: u32, gone: &Gone) -> Result<Arc<Value>, ApiError> {
    let key = (label.to_owned(), seed);
    if let Some(v) = ctx
        .replays
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return Ok(v.clone());
    }
    if label == "trace-random" {
        return Err(ApiError::bad(
            "trace-random games are reference traces: load them in Play",
        ));
    }
    let mut policy = factory_for(ctx, label)?();
    let mut game = Game::new(seed);
    let mut states = vec![
        json!({"board": game.board.to_string(), "next": game.next, "rise": game.moves_remaining,
        "score": 0, "level": 1, "moves": 0}),
    ];
    let (mut columns, mut trace) = (Vec::new(), Vec::new());
    let (mut work, mut illegal) = (0u64, false);
    let t0 = std::time::Instant::now();
    while !game.finished() {
        // Nobody will read the answer: stop (the work per request ends with its client).
        if gone() {
            return Err(ApiError::new(
                499,
                format!(
                    "replay of `{label}` on {}: the client left, abandoned",
                    seed_hex(seed)
                ),
            ));
        }
        if t0.elapsed() > REPLAY_BUDGET {
            return Err(ApiError::new(
                503,
                format!(
                    "replay of `{label}` on {} took longer than {} s: abandoned",
                    seed_hex(seed),
                    REPLAY_BUDGET.as_secs()
                ),
            ));
        }
        let choice = policy.choose(&game.public());
        work += choice.work;
        let Some(c) = choice.column else {
            illegal = true;
            break;
        };
        match traced_move(&mut game, c) {
            Ok(line) => trace.push(line),
            Err(_) => {
                illegal = true;
                break;
            }
        }
        columns.push(c);
        states.push(
            json!({"board": game.board.to_string(), "next": game.next, "rise": game.moves_remaining,
            "score": game.score, "level": game.level, "moves": game.moves_played}),
        );
    }
    let v = Arc::new(json!({
        "policy": label, "seed": seed, "seedHex": seed_hex(seed), "columns": moves_string(&columns),
        "states": states, "trace": to_value(&trace), "score": game.score, "moves": game.moves_played,
        "censored": game.censored(), "gameOver": game.game_over, "illegal": illegal, "work": work,
    }));
    let mut cache = ctx.replays.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= REPLAY_CACHE {
        cache.clear();
    }
    cache.insert(key, v.clone());
    Ok(v)
}

fn find_record(root: &Root, path: &Path, seed: u32) -> Result<Option<GameRecord>, ApiError> {
    let (records, ..) = read_records(root, path, usize::MAX)?;
    Ok(records.into_iter().find(|r| r.seed == seed))
}

/// The replay with its record (if any) and whether the two agree.
fn replay_with_record(
    ctx: &Ctx,
    label: &str,
    seed: u32,
    record: Option<GameRecord>,
    gone: &Gone,
) -> Result<Value, ApiError> {
    let r = replay_game(ctx, label, seed, gone)?;
    let mut v = (*r).clone();
    let matches = record.as_ref().map(|rec| {
        rec.score == v["score"].as_u64().unwrap_or(0)
            && rec.moves as u64 == v["moves"].as_u64().unwrap_or(0)
    });
    v["record"] = record.map_or(Value::Null, |r| to_value(&r));
    v["matches"] = json!(matches);
    Ok(v)
}

/// `file` + `seed` (a game of a results file, checked against its record), or `policy` +
/// `seed` (any policy on any seed).
pub fn replay(ctx: &Ctx, p: &Params, gone: &Gone) -> Result<Value, ApiError> {
    let seed = seed_param(p)?;
    if let Some(policy) = p.get("policy") {
        return replay_with_record(ctx, policy, seed, None, gone);
    }
    let path = file_param(ctx, p, "file")?;
    if !path.is_file() {
        return Err(ApiError::bad(format!(
            "`{}` is not a file",
            ctx.root.rel(&path)
        )));
    }
    let record = find_record(&ctx.root, &path, seed)?.ok_or_else(|| {
        ApiError::not_found(format!(
            "no game with seed {} in `{}`",
            seed_hex(seed),
            ctx.root.rel(&path)
        ))
    })?;
    let label = record.policy.clone();
    let mut v = replay_with_record(ctx, &label, seed, Some(record), gone)?;
    v["file"] = json!(ctx.root.rel(&path));
    Ok(v)
}

/// A JSON file of the results directory (confined, regular, at most `MAX_FILE` bytes).
fn read_json(root: &Root, path: &Path) -> Option<Value> {
    serde_json::from_str(&root.read_to_string(path, MAX_FILE).ok()?).ok()
}

/// A screen report of the results directory, typed ([`read_report`] reads v1 too); not the
/// `screen.json` manifest, whose arms are names.
fn read_screen_report(root: &Root, path: &Path) -> Option<ScreenReport> {
    read_report(&root.read_to_string(path, MAX_FILE).ok()?).ok()
}

struct Screen {
    report_path: PathBuf,
    /// The screen directory (with `screen.json` and the games files), if any.
    dir: Option<PathBuf>,
    report: ScreenReport,
}

fn open_screen(ctx: &Ctx, rel: &str) -> Result<Screen, ApiError> {
    let path = ctx.root.resolve(rel)?;
    let report_path = if path.is_dir() {
        path.join("report.json")
    } else {
        path
    };
    let report = read_screen_report(&ctx.root, &report_path).ok_or_else(|| {
        ApiError::bad(format!(
            "`{rel}` is not a screen report (report.json of `drop7 screen`)"
        ))
    })?;
    let parent = report_path.parent().map(Path::to_owned);
    let dir = parent.filter(|d| d.join("screen.json").is_file());
    Ok(Screen {
        report_path,
        dir,
        report,
    })
}

impl Screen {
    fn arms(&self) -> Vec<String> {
        self.report
            .arms
            .iter()
            .map(|a| a.scores.name.clone())
            .collect()
    }

    fn games_file(&self, root: &Root, arm: &str) -> Option<PathBuf> {
        let f = self
            .dir
            .as_ref()?
            .join(format!("games-{}.jsonl", file_stem(arm)));
        let real = f.canonicalize().ok()?;
        (real.starts_with(&root.dir) && real.is_file()).then_some(real)
    }

    /// The paired-difference figure of each contrast: `paired-CAND-vs-REF.svg` beside the
    /// report or in a `figures/` folder beside it; for a lone report `screen-X.json` with one
    /// contrast, `paired-X.svg` there too.
    fn figures(&self, root: &Root) -> Vec<Option<String>> {
        let Some(dir) = self.report_path.parent() else {
            return Vec::new();
        };
        let stem = self
            .report_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let contrasts = &self.report.contrasts;
        let lone = contrasts.len() == 1;
        contrasts
            .iter()
            .map(|c| {
                let (cand, reference) = (&c.candidate.name, &c.reference.name);
                let mut names = vec![format!(
                    "paired-{}-vs-{}.svg",
                    file_stem(cand),
                    file_stem(reference)
                )];
                if lone && let Some(x) = stem.strip_prefix("screen-") {
                    names.push(format!("paired-{x}.svg"));
                }
                names.iter().find_map(|n| {
                    [dir.join(n), dir.join("figures").join(n)]
                        .into_iter()
                        .find_map(|f| {
                            let real = f.canonicalize().ok()?;
                            (real.starts_with(&root.dir) && real.is_file()).then(|| root.rel(&real))
                        })
                })
            })
            .collect()
    }

    fn markdown(&self, root: &Root) -> Option<String> {
        let md = if self
            .report_path
            .file_name()
            .is_some_and(|n| n == "report.json")
        {
            self.report_path.with_file_name("report.md")
        } else {
            self.report_path.with_extension("md")
        };
        root.read_to_string(&md, MAX_FILE).ok()
    }

    fn block(&self) -> SeedBlock {
        self.report.seeds
    }

    fn json(&self, root: &Root) -> Value {
        let r = &self.report;
        let arms: Vec<Value> = r
            .arms
            .iter()
            .map(|a| {
                let mut x = to_value(a);
                x["gamesFile"] = json!(self.games_file(root, &a.scores.name).map(|f| root.rel(&f)));
                x
            })
            .collect();
        json!({
            "path": root.rel(&self.report_path),
            "dir": self.dir.as_ref().map(|d| root.rel(d)),
            "format": r.format, "formatNote": if r.format.ends_with("-v1") {
                "format v1: arms were named `policy`; the contrasts' fields are shown under their v2 names"
            } else { "" },
            "seeds": r.seeds, "lease": r.lease, "arms": arms, "contrasts": r.contrasts,
            "figures": self.figures(root), "markdown": self.markdown(root),
        })
    }
}

/// Screens (report files) and training runs (`progress.jsonl`) under the root.
pub fn runs(ctx: &Ctx) -> Result<Value, ApiError> {
    let files = ctx.root.walk();
    let mut screens = Vec::new();
    let mut running = Vec::new();
    let mut seen_dirs = BTreeSet::new();
    for f in files.iter().filter(|f| has_ext(f, &["json"])) {
        if let Some(report) = read_screen_report(&ctx.root, f) {
            let s = Screen {
                report_path: f.clone(),
                dir: f
                    .parent()
                    .filter(|d| d.join("screen.json").is_file())
                    .map(Path::to_owned),
                report,
            };
            if let Some(d) = &s.dir {
                seen_dirs.insert(d.clone());
            }
            let verdicts: Vec<Value> = s
                .report
                .contrasts
                .iter()
                .map(|c| json!({"candidate": c.candidate.name, "reference": c.reference.name, "verdict": c.verdict}))
                .collect();
            screens.push(
                json!({"path": ctx.root.rel(f), "seeds": s.report.seeds, "format": s.report.format,
                "arms": s.arms(), "contrasts": verdicts, "hasGames": s.dir.is_some()}),
            );
        } else if f.file_name().is_some_and(|n| n == "screen.json") {
            running.push(f.clone());
        }
    }
    let in_progress: Vec<Value> = running
        .iter()
        .filter_map(|f| {
            let d = f.parent()?;
            (!seen_dirs.contains(d)).then(|| {
                let v = read_json(&ctx.root, f).unwrap_or(Value::Null);
                json!({"path": ctx.root.rel(d), "seeds": v["seeds"], "arms": v["arms"]})
            })
        })
        .collect();
    let training: Vec<Value> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "progress.jsonl"))
        .map(|f| {
            let recs = read_progress(f).unwrap_or_default();
            let last_moves = recs
                .iter()
                .map(|r| match r {
                    ProgressRecord::Train(t) => t.moves,
                    ProgressRecord::Validation(v) => v.moves,
                })
                .max();
            let validations = recs
                .iter()
                .filter(|r| matches!(r, ProgressRecord::Validation(_)))
                .count();
            let dir = f.parent().unwrap_or(f);
            json!({"path": ctx.root.rel(dir), "progress": ctx.root.rel(f), "records": recs.len(),
                "validations": validations, "moves": last_moves})
        })
        .collect();
    Ok(json!({"screens": screens, "inProgress": in_progress, "training": training}))
}

/// One screen report: arms, contrasts (v1 fields renamed), figures, Markdown, games files.
pub fn screen(ctx: &Ctx, p: &Params) -> Result<Value, ApiError> {
    let s = open_screen(ctx, param(p, "path")?)?;
    Ok(s.json(&ctx.root))
}

/// A screen's contrast on one seed: both arms' games replayed side by side, with their
/// records (when the screen directory has its games files) and the paired difference.
pub fn pair(ctx: &Ctx, p: &Params, gone: &Gone) -> Result<Value, ApiError> {
    let s = open_screen(ctx, param(p, "screen")?)?;
    let seed = seed_param(p)?;
    let contrasts = &s.report.contrasts;
    let i: usize = match p.get("contrast") {
        None => 0,
        Some(c) => c
            .parse()
            .map_err(|_| ApiError::bad(format!("contrast `{c}`: expected an index")))?,
    };
    let c = contrasts.get(i).ok_or_else(|| {
        ApiError::bad(format!(
            "contrast {i}: the screen has {} contrast(s)",
            contrasts.len()
        ))
    })?;
    let b = s.block();
    if !b.seeds().any(|x| x == seed) {
        return Err(ApiError::bad(format!(
            "seed {} is not in the screen's block {b}",
            seed_hex(seed)
        )));
    }
    let mut sides = Vec::new();
    for arm in [&c.candidate.name, &c.reference.name] {
        let record = match s.games_file(&ctx.root, arm) {
            Some(f) => find_record(&ctx.root, &f, seed)?,
            None => None,
        };
        sides.push(replay_with_record(ctx, arm, seed, record, gone)?);
    }
    let score = |v: &Value| {
        v["record"]["score"]
            .as_f64()
            .or(v["score"].as_f64())
            .unwrap_or(0.0)
    };
    let recorded = sides.iter().all(|v| !v["record"].is_null());
    let delta = score(&sides[0]) - score(&sides[1]);
    let reference = sides.pop();
    let candidate = sides.pop();
    Ok(json!({
        "screen": ctx.root.rel(&s.report_path), "contrast": i, "seed": seed, "seedHex": seed_hex(seed),
        "candidate": candidate, "reference": reference, "delta": delta, "recorded": recorded,
        "deltaMean": c.delta_mean,
    }))
}

fn progress_path(ctx: &Ctx, p: &Params) -> Result<PathBuf, ApiError> {
    let path = file_param(ctx, p, "path")?;
    let f = if path.is_dir() {
        path.join("progress.jsonl")
    } else {
        path
    };
    if f.file_name().is_none_or(|n| n != "progress.jsonl") || f.symlink_metadata().is_err() {
        return Err(ApiError::not_found(format!(
            "`{}` is not a training run (no progress.jsonl)",
            param(p, "path")?
        )));
    }
    // The file a directory names is checked as the directory was (inside, regular).
    ctx.root.confine(&f)
}

/// A progress file the library could not read, its message naming the file as the client
/// named it (relative to the root): the server's own paths stay on the server (issue 36).
fn progress_error(ctx: &Ctx, f: &Path, e: impl std::fmt::Display) -> ApiError {
    let shown = ctx.root.rel(f);
    ApiError::new(422, e.to_string().replace(&f.display().to_string(), &shown))
}

/// A training run's progress records (training points, validation points) and checkpoint.
pub fn training(ctx: &Ctx, p: &Params) -> Result<Value, ApiError> {
    let f = progress_path(ctx, p)?;
    let recs = read_progress(&f).map_err(|e| progress_error(ctx, &f, e))?;
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for r in &recs {
        match r {
            ProgressRecord::Train(t) => train.push(to_value(t)),
            ProgressRecord::Validation(v) => validation.push(to_value(v)),
        }
    }
    let dir = f.parent().unwrap_or(&f);
    let checkpoint = read_json(&ctx.root, &dir.join("checkpoint.json"));
    Ok(
        json!({"path": ctx.root.rel(dir), "train": train, "validation": validation, "checkpoint": checkpoint}),
    )
}

/// The training curve (the library's own figure) of a run.
pub fn training_svg(ctx: &Ctx, p: &Params) -> Result<Body, ApiError> {
    let f = progress_path(ctx, p)?;
    let recs = read_progress(&f).map_err(|e| progress_error(ctx, &f, e))?;
    Ok(Body::Bytes(
        training_curve(&recs).into_bytes(),
        "image/svg+xml",
    ))
}

/// A file of the results directory as it is (figures, reports, results), by kind.
pub fn raw_file(ctx: &Ctx, rel: &str) -> Result<Body, ApiError> {
    let rel = super::percent_decode(rel)?;
    let path = ctx.root.resolve(&rel)?;
    if !path.is_file() {
        return Err(ApiError::not_found(format!("`{rel}` is not a file")));
    }
    let kind = content_type(&path).ok_or_else(|| {
        ApiError::forbidden(format!(
            "`{rel}`: only svg, png, json, jsonl, md and txt files are served"
        ))
    })?;
    let bytes = ctx.root.read(&path, MAX_FILE)?;
    Ok(Body::Bytes(bytes, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntuple::layout::Layout;
    use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};

    fn model(spec: &str) -> Model {
        let t = Tables::new(Layout::parse(spec).unwrap(), OPTIMISTIC_TOTAL, false).unwrap();
        Model {
            tables: Arc::new(t),
            sha256: spec.into(),
        }
    }

    #[test]
    fn the_model_cache_evicts_the_least_recently_used_beyond_its_bound() {
        let m = model("win23,phase=none");
        let each = ModelCache::bytes(&m);
        assert!(each > 0);
        let fit = (MODEL_CACHE_BYTES / each) as usize;
        assert!(fit >= 2, "{each} bytes a model");
        let mut c = ModelCache::default();
        for i in 0..fit {
            c.insert(PathBuf::from(format!("m{i}")), m.clone());
        }
        assert_eq!(c.len(), fit);
        // m0 used again: m1 is now the least recently used and goes first.
        assert!(c.get(Path::new("m0")).is_some());
        c.insert(PathBuf::from("new"), m.clone());
        assert_eq!(c.len(), fit);
        assert!(c.get(Path::new("m0")).is_some());
        assert!(c.get(Path::new("m1")).is_none());
        assert!(c.get(Path::new("new")).is_some());
        // A model larger than the whole bound is kept alone.
        c.make_room(MODEL_CACHE_BYTES + 1);
        assert!(c.is_empty());
    }
}
