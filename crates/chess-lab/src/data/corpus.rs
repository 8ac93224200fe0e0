//! The self-play corpus: compact binary game records, written in chunks that are committed to
//! the repository one by one, with a manifest line per chunk (its SHA-256 and what made it).
//! The format is specified in `docs/chess/corpus-format.md`; this module is its only reader
//! and writer.
//!
//! A game is stored once as its start position (after the book line and the random plies)
//! and then 4 bytes a searched ply (the move played and the search score before it), so a
//! training position costs about 4.8 bytes instead of the 66 of a `FEN | score | result`
//! line. Every searched position is kept; what a consumer wants (quiet positions, not the
//! first searched plies, ...) is chosen by the [`Filter`] of the [`Loader`].
//!
//! Integrity: each game record carries its length and a CRC-32 of its bytes, so a torn tail
//! (a killed writer, a truncated copy) loses only the game being written, and a flipped byte
//! anywhere is refused with the chunk's name and the record's offset. The manifest's SHA-256
//! covers each closed chunk whole.
//!
//! Every manifest field is a function of its chunk (header settings and records), so a chunk
//! closed by a writer that died before appending its manifest line is entered on the next run.
//!
//! Corpora played apart (a Slurm job array's tasks, each a series of ids of its own) are
//! joined by [`merge_corpora`](super::merge::merge_corpora) (`actuary corpus-merge`, in
//! [`super::merge`]): closed chunks copied whole into the main corpus, every one checked
//! first, ids still growing from chunk to chunk.

use chess::board::{Board, Color, Move, Piece, Square, parse_fen_with, to_fen};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// First 8 bytes of every chunk.
pub const MAGIC: &[u8; 8] = b"ACTGAMES";
/// The format version after the magic (little-endian u16).
pub const VERSION: u16 = 1;
/// A chunk is closed once it reaches this many bytes (the repository's 50 MB file limit,
/// less room for the game being appended).
pub const CHUNK_BYTES: u64 = 48_000_000;
/// The manifest file in a corpus directory.
pub const MANIFEST: &str = "manifest.jsonl";
/// Bytes of a record before its plies: length u32, id u64, millis u32, result u8, reason u8,
/// plies u16, FEN length u8.
const RECORD_HEAD: usize = 4 + 8 + 4 + 1 + 1 + 2 + 1;

/// Why a corpus could not be read or written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a corpus chunk (bad magic or version)", path.display())]
    NotAChunk { path: PathBuf },
    #[error("{}: corrupt at byte {offset}: {why}", path.display())]
    Corrupt {
        path: PathBuf,
        offset: u64,
        why: String,
    },
    /// A record that decodes but is wrong as chess, or counts the manifest contradicts: no
    /// byte offset to name (the old "corrupt at byte 0" pointed at the file's first byte).
    #[error("{}: {why}", path.display())]
    Invalid { path: PathBuf, why: String },
    #[error("{}: sha256 {found}, the manifest says {want}", path.display())]
    Checksum {
        path: PathBuf,
        found: String,
        want: String,
    },
    #[error("{}: not a corpus directory (no {MANIFEST}; `actuary datagen --corpus` makes one)", path.display())]
    NotACorpus { path: PathBuf },
    #[error("{}: chunk {chunk} asked for, the manifest lists {listed}", path.display())]
    NoSuchChunk {
        path: PathBuf,
        chunk: u32,
        listed: usize,
    },
    #[error("{}:{line}: {why}", path.display())]
    Manifest {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The most bytes a chunk (or the part being written) may have: chunks close at a few MB and
/// the repository takes no file over 50 MB, so anything larger is not a chunk (`/dev/zero`
/// named as one used to be read until memory ran out).
pub const MAX_CHUNK_BYTES: u64 = 64 << 20;
/// The most bytes a manifest may have (a line of about 300 bytes a chunk).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// A whole chunk file: a regular file of at most [`MAX_CHUNK_BYTES`] ([`fileio::read`]).
pub(super) fn read_bytes(path: &Path) -> Result<Vec<u8>, CorpusError> {
    fileio::read(path, MAX_CHUNK_BYTES).map_err(|e| io(path)(e.into_io()))
}

/// How a game ended (one byte in the record). `pool::self_play` checks the rules (mate and
/// stalemate, fifty moves, material, repetition) before each search, and the adjudications
/// and the cap after each move: so a last move that mates or repeats under an adjudication
/// or the cap is recorded as that adjudication or the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum EndReason {
    Mate = 0,
    Stalemate = 1,
    FiftyMoves = 2,
    Material = 3,
    Repetition = 4,
    /// The last `win_plies` searches in a row (both sides', one a ply; signs not compared)
    /// all scored |score| ≥ `win_score`; the side the last score favours wins.
    AdjudicatedWin = 5,
    /// At least `draw_after` plies stored and the last `draw_plies` searches in a row all
    /// scored |score| ≤ `draw_score`.
    AdjudicatedDraw = 6,
    /// `max_plies` plies stored (a draw, even if the last move mates).
    Cap = 7,
}

impl EndReason {
    fn from_u8(v: u8) -> Option<Self> {
        use EndReason::*;
        [
            Mate,
            Stalemate,
            FiftyMoves,
            Material,
            Repetition,
            AdjudicatedWin,
            AdjudicatedDraw,
            Cap,
        ]
        .get(v as usize)
        .copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            EndReason::Mate => "mate",
            EndReason::Stalemate => "stalemate",
            EndReason::FiftyMoves => "draw-50",
            EndReason::Material => "draw-material",
            EndReason::Repetition => "draw-repetition",
            EndReason::AdjudicatedWin => "adjudicated-win",
            EndReason::AdjudicatedDraw => "adjudicated-draw",
            EndReason::Cap => "draw-cap",
        }
    }
}

/// One ply of a game: the move played and the search score before it, in centipawns from
/// the side to move's view. |score| ≥ 31,744 (`MATE_BOUND`) is a mate in 32,000 − |score|
/// plies (positive: the side to move mates); anything smaller is an ordinary score, which may
/// be as large as 31,743. Clamped to ±32,000 when written (the engine never goes beyond).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    pub mv: Move,
    pub score: i16,
}

/// One game as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// Unique in the corpus; the game is a function of (id, settings).
    pub id: u64,
    /// Wall-clock milliseconds (not CPU time) from the start of the opening's draw to the end
    /// of the game, on the thread that played it; the manifest's `core_seconds` adds these up.
    pub millis: u32,
    /// White's points times two: 0, 1 or 2.
    pub white_points2: u8,
    pub reason: EndReason,
    /// The start position as FEN: the position after the book line and the random plies,
    /// where the first searched ply is played (cozy-chess's FEN: `KQkq` castling letters, an
    /// en-passant square after every double push). The loader also reads Chess960 castling.
    pub start: String,
    /// The searched plies, one stored position each (the position after the last is not).
    pub plies: Vec<Ply>,
}

impl Game {
    /// White's result: 0, 0.5 or 1.
    pub fn white_result(&self) -> f32 {
        f32::from(self.white_points2) / 2.0
    }
}

/// Move as 16 bits: from (6) | to (6) << 6 | promotion (4 bits: 0 none, 1 N, 2 B, 3 R, 4 Q)
/// << 12. Squares are `file + 8 × rank` (a1 = 0, h1 = 7, a8 = 56, h8 = 63). Castling is
/// king-takes-own-rook (e1h1, e1a1), as the board library plays it.
pub fn encode_move(mv: Move) -> u16 {
    let promo = match mv.promotion {
        None => 0,
        Some(Piece::Knight) => 1,
        Some(Piece::Bishop) => 2,
        Some(Piece::Rook) => 3,
        Some(_) => 4,
    };
    mv.from as u16 | (mv.to as u16) << 6 | promo << 12
}

/// The inverse of [`encode_move`]; `None` for a promotion code above 4 or high bits set.
pub fn decode_move(v: u16) -> Option<Move> {
    let promotion = match v >> 12 {
        0 => None,
        1 => Some(Piece::Knight),
        2 => Some(Piece::Bishop),
        3 => Some(Piece::Rook),
        4 => Some(Piece::Queen),
        _ => return None,
    };
    Some(Move {
        from: Square::index(usize::from(v & 63)),
        to: Square::index(usize::from((v >> 6) & 63)),
        promotion,
    })
}

/// The bytes of one record (see the format page).
pub fn encode_game(g: &Game) -> Vec<u8> {
    let fen = g.start.as_bytes();
    assert!(fen.len() <= 255, "a FEN is under 100 bytes");
    assert!(
        g.plies.len() <= u16::MAX as usize,
        "plies are capped far below"
    );
    let body_len = RECORD_HEAD - 4 + fen.len() + 4 * g.plies.len() + 4;
    let mut out = Vec::with_capacity(4 + body_len);
    out.extend_from_slice(&(body_len as u32).to_le_bytes());
    out.extend_from_slice(&g.id.to_le_bytes());
    out.extend_from_slice(&g.millis.to_le_bytes());
    out.push(g.white_points2);
    out.push(g.reason as u8);
    out.extend_from_slice(&(g.plies.len() as u16).to_le_bytes());
    out.push(fen.len() as u8);
    out.extend_from_slice(fen);
    for p in &g.plies {
        out.extend_from_slice(&encode_move(p.mv).to_le_bytes());
        out.extend_from_slice(&p.score.to_le_bytes());
    }
    let crc = crc32fast::hash(&out[4..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// What made a chunk: every setting that changes its games. Written in the chunk's header
/// (so a chunk describes itself) and copied into its manifest line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Node budget of every move (the hard limit when `soft_nodes` is set).
    pub nodes: u64,
    /// The soft node limit of every move: no new iteration once this many nodes are
    /// searched. Absent from the chunks made before it existed (their moves had the hard
    /// limit alone), and then not written, so their headers and checksums are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_nodes: Option<u64>,
    /// `book` (the book's lines, shuffled by seed) or `startpos`.
    pub opening: String,
    /// The book file for `opening = book`.
    pub book: Option<String>,
    /// Random legal plies after the book line or the start position.
    pub random_plies: u32,
    /// An opening whose short search scores beyond this (centipawns) is drawn again.
    pub opening_max_score: i32,
    pub seed: u64,
    /// When games were adjudicated (its fields appear at this level in the JSON).
    #[serde(flatten)]
    pub adjudication: crate::data::pool::Adjudication,
    pub hash_mb: u64,
    /// `actuary bench` node count of the engine that played (its signature).
    pub bench: u64,
}

/// A chunk's header: magic, version, then the settings as JSON (u32 length first).
fn encode_header(s: &Settings, commit: &str) -> Vec<u8> {
    let json = serde_json::to_vec(&HeaderJson {
        settings: s.clone(),
        commit: commit.to_owned(),
    })
    .expect("settings serialise");
    let mut out = Vec::with_capacity(14 + json.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out
}

#[derive(Serialize, Deserialize)]
struct HeaderJson {
    settings: Settings,
    /// The commit of the program that opened the chunk.
    commit: String,
}

/// A chunk as read: its header, its whole games, and where a torn tail began (if any).
#[derive(Debug)]
pub struct Chunk {
    pub settings: Settings,
    pub commit: String,
    pub games: Vec<Game>,
    /// Bytes up to the end of the last whole game.
    pub whole_len: u64,
    /// A cut-off last record began here (a killed writer or a truncated file).
    pub torn_at: Option<u64>,
}

/// Every game of the closed chunks a corpus's manifest lists, in id order, wall times
/// cleared: the games as a function of their ids and settings alone, so two corpora that
/// played the same games in other runs, orders or machines compare equal.
pub fn games_by_id(dir: &Path) -> Result<Vec<Game>, CorpusError> {
    let mut games = Vec::new();
    for e in read_manifest(dir)? {
        games.extend(
            read_chunk(&dir.join(&e.chunk))?
                .games
                .into_iter()
                .map(|mut g| {
                    g.millis = 0;
                    g
                }),
        );
    }
    games.sort_by_key(|g| g.id);
    Ok(games)
}

/// Read a chunk (closed or being written). A torn last record is reported in
/// [`Chunk::torn_at`] and left out; a record that is whole but wrong is an error naming the
/// file and its offset.
pub fn read_chunk(path: &Path) -> Result<Chunk, CorpusError> {
    let bytes = read_bytes(path)?;
    parse_chunk(path, &bytes)
}

fn parse_chunk(path: &Path, bytes: &[u8]) -> Result<Chunk, CorpusError> {
    let corrupt = |offset: usize, why: &str| CorpusError::Corrupt {
        path: path.to_owned(),
        offset: offset as u64,
        why: why.to_owned(),
    };
    if bytes.len() < 14 || &bytes[..8] != MAGIC || bytes[8..10] != VERSION.to_le_bytes() {
        return Err(CorpusError::NotAChunk {
            path: path.to_owned(),
        });
    }
    let hlen = u32::from_le_bytes(bytes[10..14].try_into().expect("4 bytes")) as usize;
    let header: HeaderJson = bytes
        .get(14..14 + hlen)
        .ok_or_else(|| corrupt(10, "header longer than the file"))
        .and_then(|h| serde_json::from_slice(h).map_err(|e| corrupt(14, &e.to_string())))?;
    let mut games = Vec::new();
    let mut at = 14 + hlen;
    let mut torn_at = None;
    while at < bytes.len() {
        let Some(len) = bytes.get(at..at + 4) else {
            torn_at = Some(at as u64);
            break;
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let Some(rec) = bytes.get(at + 4..at + 4 + len) else {
            torn_at = Some(at as u64);
            break;
        };
        if len < RECORD_HEAD - 4 + 4 {
            return Err(corrupt(at, "record shorter than its header"));
        }
        let (body, crc) = rec.split_at(len - 4);
        if crc32fast::hash(body).to_le_bytes() != crc {
            return Err(corrupt(at, "record checksum mismatch"));
        }
        games.push(decode_body(body).map_err(|why| corrupt(at, why))?);
        at += 4 + len;
    }
    let whole_len = torn_at.unwrap_or(bytes.len() as u64);
    Ok(Chunk {
        settings: header.settings,
        commit: header.commit,
        games,
        whole_len,
        torn_at,
    })
}

fn decode_body(b: &[u8]) -> Result<Game, &'static str> {
    let id = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    let millis = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
    let white_points2 = b[12];
    if white_points2 > 2 {
        return Err("result is not 0, 1 or 2");
    }
    let reason = EndReason::from_u8(b[13]).ok_or("unknown end reason")?;
    let n = usize::from(u16::from_le_bytes([b[14], b[15]]));
    let fen_len = usize::from(b[16]);
    if b.len() != 17 + fen_len + 4 * n {
        return Err("record length disagrees with its ply count");
    }
    let start = std::str::from_utf8(&b[17..17 + fen_len])
        .map_err(|_| "start FEN is not text")?
        .to_owned();
    let mut plies = Vec::with_capacity(n);
    for p in b[17 + fen_len..].chunks_exact(4) {
        plies.push(Ply {
            mv: decode_move(u16::from_le_bytes([p[0], p[1]])).ok_or("bad move code")?,
            score: i16::from_le_bytes([p[2], p[3]]),
        });
    }
    Ok(Game {
        id,
        millis,
        white_points2,
        reason,
        start,
        plies,
    })
}

/// One manifest line: a closed chunk, what it holds and what made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub chunk: String,
    pub sha256: String,
    pub bytes: u64,
    pub games: u64,
    /// The sum of the records' ply counts (searched positions; no start or final position).
    pub positions: u64,
    /// The smallest game id in the chunk (records are in finishing order, not id order).
    pub first_game: u64,
    /// The largest game id in the chunk (ids in between may be missing).
    pub last_game: u64,
    /// The sum of the records' wall-clock milliseconds, in seconds (not CPU time).
    pub core_seconds: f64,
    pub commit: String,
    pub settings: Settings,
}

/// SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, CorpusError> {
    let bytes = read_bytes(path)?;
    Ok(hex(&Sha256::digest(&bytes)))
}

pub(super) fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The manifest entry of a closed chunk, from the chunk alone.
pub fn describe_chunk(path: &Path) -> Result<ManifestEntry, CorpusError> {
    let bytes = read_bytes(path)?;
    let c = parse_chunk(path, &bytes)?;
    if let Some(at) = c.torn_at {
        return Err(CorpusError::Corrupt {
            path: path.to_owned(),
            offset: at,
            why: "a closed chunk ends inside a record".into(),
        });
    }
    Ok(ManifestEntry {
        chunk: file_name(path),
        sha256: hex(&Sha256::digest(&bytes)),
        bytes: bytes.len() as u64,
        games: c.games.len() as u64,
        positions: c.games.iter().map(|g| g.plies.len() as u64).sum(),
        first_game: c.games.iter().map(|g| g.id).min().unwrap_or(0),
        last_game: c.games.iter().map(|g| g.id).max().unwrap_or(0),
        core_seconds: c.games.iter().map(|g| f64::from(g.millis)).sum::<f64>() / 1000.0,
        commit: c.commit,
        settings: c.settings,
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Read `DIR/manifest.jsonl` (empty if absent).
pub fn read_manifest(dir: &Path) -> Result<Vec<ManifestEntry>, CorpusError> {
    let path = dir.join(MANIFEST);
    let text = match fileio::read_to_string(&path, MAX_MANIFEST_BYTES).map_err(|e| e.into_io()) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&path)(e)),
    };
    let mut entries: Vec<ManifestEntry> = Vec::new();
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let bad = |why: String| CorpusError::Manifest {
            path: path.clone(),
            line: i + 1,
            why,
        };
        let e: ManifestEntry = serde_json::from_str(l).map_err(|e| bad(e.to_string()))?;
        check_entry(&e, &entries).map_err(bad)?;
        entries.push(e);
    }
    Ok(entries)
}

/// A manifest line must name a chunk beside the manifest (a plain file name: no `../`, no
/// absolute path), once, with game ids of its own: a copied line or chunk would count its
/// games twice, and a path out of the directory would read any file.
pub(super) fn check_entry(e: &ManifestEntry, before: &[ManifestEntry]) -> Result<(), String> {
    let plain = !e.chunk.is_empty() && !e.chunk.contains(['/', '\\']) && !e.chunk.starts_with('.');
    if !plain {
        return Err(format!(
            "chunk `{}` is not a file name in this directory",
            e.chunk
        ));
    }
    if e.first_game > e.last_game || e.games > e.last_game - e.first_game + 1 {
        return Err(format!(
            "chunk `{}`: {} games cannot have ids {}..={}",
            e.chunk, e.games, e.first_game, e.last_game
        ));
    }
    for b in before {
        if b.chunk == e.chunk || b.sha256 == e.sha256 {
            return Err(format!(
                "chunk `{}` is listed twice (or copied as `{}`)",
                e.chunk, b.chunk
            ));
        }
        if e.first_game <= b.last_game && b.first_game <= e.last_game {
            return Err(format!(
                "chunk `{}`'s game ids {}..={} overlap `{}`'s {}..={}",
                e.chunk, e.first_game, e.last_game, b.chunk, b.first_game, b.last_game
            ));
        }
    }
    Ok(())
}

/// The first game id of the `chunk`-th chunk (1-based, in manifest order) of `dir`. Game ids
/// only grow from chunk to chunk (a writer continues after the largest id), so "this chunk
/// and every later one" is "game id at least this": how a trainer drops the games of engines
/// older than a given chunk without touching the hold-out split, which is by game id.
pub fn first_game_of_chunk(dir: &Path, chunk: u32) -> Result<u64, CorpusError> {
    let entries = read_manifest(dir)?;
    match chunk.checked_sub(1).and_then(|i| entries.get(i as usize)) {
        Some(e) => Ok(e.first_game),
        None => Err(CorpusError::NoSuchChunk {
            path: dir.join(MANIFEST),
            chunk,
            listed: entries.len(),
        }),
    }
}

/// Chunk file name for sequence number `seq`.
pub fn chunk_name(seq: u32) -> String {
    format!("chunk-{seq:06}.bin")
}

/// The part file a writer appends to before the chunk is closed.
pub fn part_path(dir: &Path) -> PathBuf {
    dir.join("current.part")
}

/// A corpus directory opened for writing: the manifest, the part being written, and the
/// lock that keeps a second writer out.
pub struct CorpusWriter {
    dir: PathBuf,
    _lock: std::fs::File,
    part: Option<std::fs::File>,
    part_len: u64,
    settings: Settings,
    commit: String,
    entries: Vec<ManifestEntry>,
    /// The largest game id in the corpus, part included.
    max_id: Option<u64>,
    /// Games and positions of the part so far.
    part_games: u64,
    part_positions: u64,
    /// A write to the part failed: it was cut back to its last whole game and takes no more
    /// (a record after a partial one would corrupt the middle of the chunk).
    failed: bool,
    /// The part of other settings that opening closed (so `--close` can say what it closed).
    closed_on_open: Option<ManifestEntry>,
    /// Close the part once it holds this many bytes ([`CHUNK_BYTES`]; smaller in tests).
    chunk_bytes: u64,
}

impl CorpusWriter {
    /// Open `dir` for writing games made with `settings`: take its lock (a second writer is
    /// refused), enter closed chunks the manifest lacks, and keep appending to the part if it
    /// was made with the same settings (its torn tail cut off), else close it first.
    pub fn open(dir: &Path, settings: Settings, commit: &str) -> Result<Self, CorpusError> {
        let lock = lock_dir(dir)?;
        let mut w = CorpusWriter {
            dir: dir.to_owned(),
            _lock: lock,
            part: None,
            part_len: 0,
            settings,
            commit: commit.to_owned(),
            entries: Vec::new(),
            max_id: None,
            part_games: 0,
            part_positions: 0,
            failed: false,
            closed_on_open: None,
            chunk_bytes: CHUNK_BYTES,
        };
        w.entries = read_manifest(dir)?;
        w.enter_unlisted_chunks()?;
        w.max_id = w.entries.iter().map(|e| e.last_game).max();
        let part = part_path(dir);
        if part.exists() {
            let c = read_chunk(&part)?;
            if c.settings == w.settings {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&part)
                    .map_err(io(&part))?;
                f.set_len(c.whole_len).map_err(io(&part))?;
                w.part_len = c.whole_len;
                w.part_games = c.games.len() as u64;
                w.part_positions = c.games.iter().map(|g| g.plies.len() as u64).sum();
                w.max_id = w.max_id.max(c.games.iter().map(|g| g.id).max());
                w.part = Some(append(&part)?);
            } else {
                w.closed_on_open = w.close_part()?;
            }
        }
        Ok(w)
    }

    /// Close the part and say what was closed: the part of these settings, or the one of
    /// other settings that opening the writer closed already (`datagen --close` without the
    /// part's settings used to close it and then report "no part to close").
    pub fn close(&mut self) -> Result<Option<ManifestEntry>, CorpusError> {
        Ok(self.close_part()?.or_else(|| self.closed_on_open.take()))
    }

    /// Closed chunks in the directory that the manifest does not list (a writer died between
    /// the rename and the manifest line): describe and enter them.
    fn enter_unlisted_chunks(&mut self) -> Result<(), CorpusError> {
        for n in unlisted_chunks(&self.dir, &self.entries)? {
            let e = describe_chunk(&self.dir.join(&n))?;
            self.append_manifest(&e)?;
        }
        Ok(())
    }

    fn append_manifest(&mut self, e: &ManifestEntry) -> Result<(), CorpusError> {
        append_manifest_line(&self.dir, e)?;
        self.entries.push(e.clone());
        Ok(())
    }

    /// Close parts at `bytes` instead of [`CHUNK_BYTES`] (tests of the roll-over).
    #[cfg(test)]
    pub(crate) fn set_chunk_bytes(&mut self, bytes: u64) {
        self.chunk_bytes = bytes;
    }

    /// The corpus directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The next game id to play (one past the largest in the corpus).
    pub fn next_id(&self) -> u64 {
        self.max_id.map_or(0, |m| m + 1)
    }

    /// Closed chunks so far.
    pub fn entries(&self) -> &[ManifestEntry] {
        &self.entries
    }

    /// Games and positions in the part being written.
    pub fn part_counts(&self) -> (u64, u64) {
        (self.part_games, self.part_positions)
    }

    /// Append one game (one write of its whole record); close the chunk when it is full.
    pub fn push(&mut self, g: &Game) -> Result<(), CorpusError> {
        let path = part_path(&self.dir);
        if self.failed {
            return Err(io(&path)(std::io::Error::other(
                "an earlier write failed; the part takes no more games",
            )));
        }
        if self.part.is_none() {
            // The header goes to a temporary file renamed into place, so a part is never
            // seen without its whole header (a kill between the two writes).
            let h = encode_header(&self.settings, &self.commit);
            fileio::write_atomic(&path, &h).map_err(|e| io(&path)(e.into_io()))?;
            self.part = Some(append(&path)?);
            self.part_len = h.len() as u64;
        }
        let rec = encode_game(g);
        let f = self.part.as_mut().expect("opened above");
        if let Err(e) = f.write_all(&rec) {
            // Cut back to the last whole game, and take nothing more.
            self.failed = true;
            let _ = f.set_len(self.part_len);
            return Err(io(&path)(e));
        }
        self.part_len += rec.len() as u64;
        self.part_games += 1;
        self.part_positions += g.plies.len() as u64;
        self.max_id = self.max_id.max(Some(g.id));
        if self.part_len >= self.chunk_bytes {
            self.close_part()?;
        }
        Ok(())
    }

    /// Close the part being written (if it holds a game): cut a torn tail, rename it to the
    /// next chunk name and enter it in the manifest. Returns the entry.
    pub fn close_part(&mut self) -> Result<Option<ManifestEntry>, CorpusError> {
        let path = part_path(&self.dir);
        if let Some(f) = self.part.take() {
            f.sync_all().map_err(io(&path))?;
        }
        if !path.exists() {
            return Ok(None);
        }
        let c = read_chunk(&path)?;
        if c.torn_at.is_some() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io(&path))?;
            f.set_len(c.whole_len).map_err(io(&path))?;
            f.sync_all().map_err(io(&path))?;
        }
        if c.games.is_empty() {
            std::fs::remove_file(&path).map_err(io(&path))?;
            return Ok(None);
        }
        let dest = self.dir.join(chunk_name(next_seq(&self.entries)));
        std::fs::rename(&path, &dest).map_err(io(&dest))?;
        let e = describe_chunk(&dest)?;
        self.append_manifest(&e)?;
        // The closed chunk's games keep their ids: the next game comes after them.
        self.max_id = self.max_id.max(Some(e.last_game));
        self.part_len = 0;
        self.part_games = 0;
        self.part_positions = 0;
        Ok(Some(e))
    }
}

fn append(path: &Path) -> Result<std::fs::File, CorpusError> {
    fileio::open_append(path).map_err(|e| io(path)(e.into_io()))
}

/// Take `dir`'s writer lock (`DIR/.lock`), making the directory if it is absent. The one lock
/// both writers of a corpus take, `datagen` and `corpus-merge`, so neither writes while the
/// other does. On a file system without locks there is none to take and the run goes on.
pub(super) fn lock_dir(dir: &Path) -> Result<std::fs::File, CorpusError> {
    // a file where the directory should be: say so (create_dir_all said "File exists")
    if dir.metadata().is_ok_and(|m| !m.is_dir()) {
        return Err(io(dir)(std::io::Error::other(
            "not a directory (a corpus is a directory of chunks)",
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock_path = dir.join(".lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(&lock_path))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(io(dir)(std::io::Error::other(
                "another datagen or corpus-merge is writing this corpus (it is locked)",
            )));
        }
        Err(std::fs::TryLockError::Error(_)) => {} // no locks on this file system
    }
    Ok(lock)
}

/// Closed chunk files (`chunk-*.bin`) in `dir` that `entries` does not list, by name: chunks
/// renamed into place by a writer (or a merge) that stopped before appending their line.
pub(super) fn unlisted_chunks(
    dir: &Path,
    entries: &[ManifestEntry],
) -> Result<Vec<String>, CorpusError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("chunk-") && n.ends_with(".bin"))
        .filter(|n| !entries.iter().any(|e| &e.chunk == n))
        .collect();
    names.sort();
    Ok(names)
}

/// Append `e`'s line to `dir`'s manifest in one write of the whole line, flushed to disk
/// before the caller goes on (the next chunk's number is read from these lines).
pub(super) fn append_manifest_line(dir: &Path, e: &ManifestEntry) -> Result<(), CorpusError> {
    let path = dir.join(MANIFEST);
    let mut f = append(&path)?;
    let mut line = serde_json::to_string(e).expect("entry serialises");
    line.push('\n');
    f.write_all(line.as_bytes()).map_err(io(&path))?;
    f.sync_all().map_err(io(&path))?;
    Ok(())
}

/// The next chunk number: one more than the largest `chunk-NNNNNN.bin` among `entries` (1 for
/// none).
pub(super) fn next_seq(entries: &[ManifestEntry]) -> u32 {
    entries
        .iter()
        .filter_map(|e| e.chunk.strip_prefix("chunk-")?.strip_suffix(".bin"))
        .filter_map(|n| n.parse::<u32>().ok())
        .max()
        .map_or(1, |m| m + 1)
}

/// Which positions a consumer takes from the games.
#[derive(Clone, Debug)]
pub struct Filter {
    /// Skip the first `skip_plies` stored plies of every game. These are searched moves: the
    /// record starts after the book line and the random plies, which are not stored.
    pub skip_plies: u32,
    /// Skip positions whose side to move is in check.
    pub no_check: bool,
    /// Skip positions whose played move is a capture or a promotion.
    pub no_tactical: bool,
    /// Skip positions whose score is at or beyond this (mate scores and decided games).
    pub max_abs_score: i32,
}

impl Filter {
    /// Every stored position (for checks that the whole record comes back).
    pub const ALL: Filter = Filter {
        skip_plies: 0,
        no_check: false,
        no_tactical: false,
        max_abs_score: i32::MAX,
    };
}

impl Default for Filter {
    /// What the evaluation fits take: not the first 8 searched plies, no check, no tactical
    /// move, |score| below 3,000 (no mate).
    fn default() -> Self {
        Filter {
            skip_plies: 8,
            no_check: true,
            no_tactical: true,
            max_abs_score: 3000,
        }
    }
}

/// One training position: the board, the search score and the game's result, both from
/// White's view, and the game id (for the hold-out split).
#[derive(Clone, Debug)]
pub struct Sample {
    pub board: Board,
    pub white_score: i32,
    pub white_result: f32,
    pub game: u64,
}

/// Is game `id` in the hold-out share `percent` (0–100)? A hash of the id alone, so the
/// split of a game never depends on the files, their order or how many games there are.
pub fn is_holdout(id: u64, percent: f64) -> bool {
    let z = chess::board::mix64(id.wrapping_add(chess::board::GOLDEN_GAMMA));
    ((z >> 11) as f64 / (1u64 << 53) as f64) * 100.0 < percent
}

/// Counts of a load: what was read and what each filter dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LoadCounts {
    pub chunks: u64,
    pub games: u64,
    pub positions: u64,
    pub kept: u64,
    pub opening: u64,
    pub in_check: u64,
    pub tactical: u64,
    pub decided: u64,
    pub holdout_games: u64,
    pub holdout_positions: u64,
}

/// Streams a corpus: every chunk the manifest lists (its SHA-256 checked first), game by
/// game, position by position, through a [`Filter`].
pub struct Loader {
    pub filter: Filter,
    pub holdout_percent: f64,
}

impl Loader {
    /// Replay every game of `dir` and call `each(sample, is_holdout)` for every position the
    /// filter keeps. Chunks are read one at a time (memory is one chunk, whatever the corpus).
    pub fn for_each(
        &self,
        dir: &Path,
        mut each: impl FnMut(&Sample, bool),
    ) -> Result<LoadCounts, CorpusError> {
        let mut counts = LoadCounts::default();
        for e in read_manifest(dir)? {
            let path = dir.join(&e.chunk);
            let bytes = read_bytes(&path)?;
            let found = hex(&Sha256::digest(&bytes));
            if found != e.sha256 {
                return Err(CorpusError::Checksum {
                    path,
                    found,
                    want: e.sha256,
                });
            }
            let c = parse_chunk(&path, &bytes)?;
            // The manifest's counts and ids are the chunk's (a line edited or copied from
            // another chunk's would count games that are not there).
            let positions: u64 = c.games.iter().map(|g| g.plies.len() as u64).sum();
            // (first and last game are the smallest and largest id: threads finish out of order)
            let ids = c
                .games
                .iter()
                .map(|g| g.id)
                .min()
                .zip(c.games.iter().map(|g| g.id).max());
            if c.games.len() as u64 != e.games
                || positions != e.positions
                || ids.is_some_and(|(a, b)| (a, b) != (e.first_game, e.last_game))
            {
                return Err(CorpusError::Invalid {
                    path,
                    why: format!(
                        "holds {} games ({positions} positions, ids {ids:?}); the manifest says {} ({} positions, ids {}..={})",
                        c.games.len(),
                        e.games,
                        e.positions,
                        e.first_game,
                        e.last_game
                    ),
                });
            }
            counts.chunks += 1;
            for g in &c.games {
                self.replay(&path, g, &mut counts, &mut each)?;
            }
        }
        Ok(counts)
    }

    /// The positions of one game through the filter.
    pub fn replay(
        &self,
        path: &Path,
        g: &Game,
        counts: &mut LoadCounts,
        each: &mut impl FnMut(&Sample, bool),
    ) -> Result<(), CorpusError> {
        let bad = |why: String| CorpusError::Invalid {
            path: path.to_owned(),
            why: format!("game {}: {why}", g.id),
        };
        let mut board = parse_fen_with(&g.start, true).map_err(|e| bad(e.to_string()))?;
        let hold = is_holdout(g.id, self.holdout_percent);
        counts.games += 1;
        counts.holdout_games += hold as u64;
        let f = &self.filter;
        for (ply, p) in g.plies.iter().enumerate() {
            counts.positions += 1;
            let keep = if (ply as u32) < f.skip_plies {
                counts.opening += 1;
                false
            } else if f.no_check && !board.checkers().is_empty() {
                counts.in_check += 1;
                false
            } else if f.no_tactical && chess::board::is_tactical(&board, p.mv) {
                counts.tactical += 1;
                false
            } else if i32::from(p.score).abs() >= f.max_abs_score {
                counts.decided += 1;
                false
            } else {
                true
            };
            if keep {
                counts.kept += 1;
                counts.holdout_positions += hold as u64;
                let white = board.side_to_move() == Color::White;
                let s = Sample {
                    board: board.clone(),
                    white_score: if white {
                        i32::from(p.score)
                    } else {
                        -i32::from(p.score)
                    },
                    white_result: g.white_result(),
                    game: g.id,
                };
                each(&s, hold);
            }
            if !board.is_legal(p.mv) {
                return Err(bad(format!("ply {ply}: {} is not legal", p.mv)));
            }
            board.play_unchecked(p.mv);
        }
        Ok(())
    }
}

/// The start position as stored: cozy-chess's FEN, castling rights always as `KQkq` letters.
pub fn start_fen(board: &Board) -> String {
    to_fen(board)
}

/// `actuary corpus DIR`: verify every chunk (SHA-256 and record checksums), replay every
/// game, and count what the loader's filters keep and the hold-out split holds.
#[derive(Debug, clap::Args)]
pub struct CorpusArgs {
    /// The corpus directory (with its manifest.jsonl), e.g. data/chess/selfplay.
    pub dir: PathBuf,
    /// Percent of games held out (by a hash of the game id).
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub holdout: f64,
    /// Skip the first N stored plies of every game (searched moves: the record starts after
    /// the random plies).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub skip_plies: u32,
    /// Keep positions whose side to move is in check.
    #[arg(long)]
    pub keep_check: bool,
    /// Keep positions whose played move is a capture or promotion.
    #[arg(long)]
    pub keep_tactical: bool,
    /// Drop positions whose |score| is at least this (centipawns).
    #[arg(long, value_name = "CP", default_value_t = 3000)]
    pub max_score: i32,
    /// Print the counts as JSON.
    #[arg(long)]
    pub json: bool,
}

impl CorpusArgs {
    pub fn loader(&self) -> Loader {
        Loader {
            filter: Filter {
                skip_plies: self.skip_plies,
                no_check: !self.keep_check,
                no_tactical: !self.keep_tactical,
                max_abs_score: self.max_score,
            },
            holdout_percent: self.holdout,
        }
    }

    pub fn run(&self) -> Result<std::process::ExitCode, crate::LabError> {
        if !(0.0..=100.0).contains(&self.holdout) {
            return Err(crate::LabError::Switch(format!(
                "--holdout {} is not a percentage",
                self.holdout
            )));
        }
        if !self.dir.join(MANIFEST).is_file() {
            return Err(CorpusError::NotACorpus {
                path: self.dir.clone(),
            }
            .into());
        }
        let c = self.loader().for_each(&self.dir, |_, _| {})?;
        let sha = sha256_file(&self.dir.join(MANIFEST))?;
        if self.json {
            let mut v = serde_json::to_value(&c).expect("counts serialise");
            v["manifest_sha256"] = sha.into();
            println!("{v}");
        } else {
            println!(
                "{}: {} chunks, {} games, {} positions; kept {} (dropped: opening {}, in check {}, tactical {}, decided {}); hold-out {} games, {} positions; manifest sha256 {sha}",
                self.dir.display(),
                c.chunks,
                c.games,
                c.positions,
                c.kept,
                c.opening,
                c.in_check,
                c.tactical,
                c.decided,
                c.holdout_games,
                c.holdout_positions
            );
        }
        Ok(std::process::ExitCode::SUCCESS)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chess::board::legal_moves;

    /// Issue 68, serious item 6: a device or a FIFO named as a chunk (or entered in a
    /// manifest) was read until memory ran out, or forever; now it is refused at once.
    #[test]
    fn devices_and_fifos_are_not_chunks() {
        for p in ["/dev/zero", "/dev/null"] {
            let e = read_chunk(Path::new(p)).unwrap_err().to_string();
            assert!(e.contains(p) && e.contains("not a regular file"), "{e}");
            assert!(sha256_file(Path::new(p)).is_err());
        }
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("chunk-000001.bin");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_chunk(&fifo).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        // A manifest that is a directory is refused, not read as empty.
        std::fs::create_dir(dir.path().join(MANIFEST)).unwrap();
        assert!(read_manifest(dir.path()).is_err());
    }

    pub(crate) fn settings() -> Settings {
        Settings {
            nodes: 100,
            soft_nodes: None,
            opening: "startpos".into(),
            book: None,
            random_plies: 0,
            opening_max_score: 400,
            seed: 1,
            adjudication: crate::data::pool::Adjudication {
                win_score: 1000,
                win_plies: 6,
                draw_score: 10,
                draw_plies: 10,
                draw_after: 70,
                max_plies: 400,
            },
            hash_mb: 1,
            bench: 1,
        }
    }

    /// A game of `n` plies: always the first legal move, scores -n..; from the start position.
    pub(crate) fn game(id: u64, n: usize) -> Game {
        let mut b = Board::default();
        let mut plies = Vec::new();
        for i in 0..n {
            let mv = legal_moves(&b)[0];
            plies.push(Ply {
                mv,
                score: i as i16 - 3,
            });
            b.play_unchecked(mv);
        }
        Game {
            id,
            millis: 7,
            white_points2: 1,
            reason: EndReason::AdjudicatedDraw,
            start: to_fen(&Board::default()),
            plies,
        }
    }

    #[test]
    fn every_move_code_round_trips() {
        for from in 0..64 {
            for to in 0..64 {
                for promotion in [
                    None,
                    Some(Piece::Knight),
                    Some(Piece::Bishop),
                    Some(Piece::Rook),
                    Some(Piece::Queen),
                ] {
                    let mv = Move {
                        from: Square::index(from),
                        to: Square::index(to),
                        promotion,
                    };
                    assert_eq!(decode_move(encode_move(mv)), Some(mv));
                }
            }
        }
        assert_eq!(decode_move(5 << 12), None);
        // The documented layout: e2e4 is from 12, to 28.
        let e2e4 = Move {
            from: Square::E2,
            to: Square::E4,
            promotion: None,
        };
        assert_eq!(encode_move(e2e4), 12 | 28 << 6);
    }

    #[test]
    fn chunks_round_trip_and_are_entered_in_the_manifest() {
        let d = tempfile::tempdir().unwrap();
        let games: Vec<Game> = (0..5).map(|i| game(10 + i, 3 + i as usize * 7)).collect();
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        assert_eq!(w.next_id(), 0);
        for g in &games {
            w.push(g).unwrap();
        }
        assert_eq!(w.next_id(), 15);
        let e = w.close_part().unwrap().unwrap();
        assert_eq!(e.chunk, "chunk-000001.bin");
        assert_eq!((e.games, e.first_game, e.last_game), (5, 10, 14));
        assert_eq!(
            e.positions,
            games.iter().map(|g| g.plies.len() as u64).sum::<u64>()
        );
        assert_eq!(e.commit, "abc");
        let c = read_chunk(&d.path().join("chunk-000001.bin")).unwrap();
        assert_eq!(c.games, games);
        assert_eq!(c.settings, settings());
        assert_eq!(c.torn_at, None);
        // The manifest holds exactly the entry, its hash the file's.
        assert_eq!(read_manifest(d.path()).unwrap(), vec![e.clone()]);
        assert_eq!(
            sha256_file(&d.path().join("chunk-000001.bin")).unwrap(),
            e.sha256
        );
        // A second writer on the same directory is refused while the first holds it.
        let err = CorpusWriter::open(d.path(), settings(), "abc")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("locked"), "{err}");
        drop(w);
        // Reopened: ids continue after the largest.
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        assert_eq!(w.next_id(), 15);
        // A second chunk: `first_game_of_chunk` names each chunk's first id, and refuses 0
        // and a chunk the manifest does not list.
        w.push(&game(15, 4)).unwrap();
        w.close_part().unwrap().unwrap();
        assert_eq!(first_game_of_chunk(d.path(), 1).unwrap(), 10);
        assert_eq!(first_game_of_chunk(d.path(), 2).unwrap(), 15);
        for bad in [0, 3] {
            let err = first_game_of_chunk(d.path(), bad).unwrap_err().to_string();
            assert!(
                err.contains(&format!("chunk {bad} asked for, the manifest lists 2")),
                "{err}"
            );
        }
    }

    /// Issue 68, defect 4: a manifest trusted beyond its checksums counted a copied line's
    /// games twice, read chunks named `../x` or `/x`, and never compared its counts with the
    /// chunk's.
    #[test]
    fn manifest_lines_are_checked_against_each_other_and_the_chunk() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        for i in 0..3 {
            w.push(&game(i, 5)).unwrap();
        }
        w.close_part().unwrap().unwrap();
        drop(w);
        let manifest = d.path().join(MANIFEST);
        let good = std::fs::read_to_string(&manifest).unwrap();
        let loader = Loader {
            filter: Filter::default(),
            holdout_percent: 10.0,
        };
        loader.for_each(d.path(), |_, _| {}).unwrap();
        let refused = |text: &str, says: &str| {
            std::fs::write(&manifest, text).unwrap();
            let e = read_manifest(d.path())
                .map(|_| ())
                .and_then(|()| loader.for_each(d.path(), |_, _| {}).map(|_| ()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{e}");
        };
        refused(&format!("{good}{good}"), "listed twice");
        refused(
            &good.replace("chunk-000001.bin", "../chunk-000001.bin"),
            "not a file name",
        );
        refused(
            &good.replace("chunk-000001.bin", "/etc/passwd"),
            "not a file name",
        );
        refused(
            &good.replace("\"games\":3", "\"games\":4"),
            "4 games cannot have ids 0..=2",
        );
        refused(
            &good.replace("\"games\":3", "\"games\":2"),
            "the manifest says 2",
        );
        refused(
            &good.replace("\"positions\":15", "\"positions\":16"),
            "the manifest says 3 (16",
        );
        std::fs::write(&manifest, &good).unwrap();
        loader.for_each(d.path(), |_, _| {}).unwrap();
    }

    #[test]
    fn an_illegal_move_is_named_by_game_and_ply_not_by_byte_0() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        let mut bad = game(4, 3);
        bad.plies[0].mv = Move {
            from: Square::E2,
            to: Square::E5,
            promotion: None,
        };
        w.push(&game(3, 3)).unwrap();
        w.push(&bad).unwrap();
        w.close_part().unwrap().unwrap();
        drop(w);
        let loader = Loader {
            filter: Filter::default(),
            holdout_percent: 10.0,
        };
        let e = loader
            .for_each(d.path(), |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("chunk-000001.bin: game 4: ply 0: e2e5 is not legal"),
            "{e}"
        );
    }

    #[test]
    fn a_torn_part_keeps_its_whole_games_and_resumes() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        for i in 0..3 {
            w.push(&game(i, 20)).unwrap();
        }
        drop(w);
        let part = part_path(d.path());
        let full = std::fs::read(&part).unwrap();
        // Cut inside the third game's record.
        let cut = full.len() - 30;
        std::fs::write(&part, &full[..cut]).unwrap();
        let c = read_chunk(&part).unwrap();
        assert_eq!(c.games, vec![game(0, 20), game(1, 20)]);
        let torn = c.torn_at.unwrap();
        assert!(torn < cut as u64 && c.whole_len == torn);
        // A writer reopening it cuts the tail and appends after the whole games.
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        assert_eq!(w.next_id(), 2);
        w.push(&game(2, 20)).unwrap();
        let e = w.close_part().unwrap().unwrap();
        assert_eq!(e.games, 3);
        let c = read_chunk(&d.path().join(&e.chunk)).unwrap();
        assert_eq!(c.games, vec![game(0, 20), game(1, 20), game(2, 20)]);
    }

    #[test]
    fn a_part_of_other_settings_is_closed_and_its_ids_stay_taken() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "a").unwrap();
        for i in 0..3 {
            w.push(&game(i, 10)).unwrap();
        }
        drop(w); // killed: the part stays open
        // Another engine (another bench): the old part is closed first, ids continue.
        let mut other = settings();
        other.bench = 2;
        let mut w = CorpusWriter::open(d.path(), other.clone(), "b").unwrap();
        assert_eq!(w.entries().len(), 1);
        assert_eq!(w.next_id(), 3);
        w.push(&game(w.next_id(), 10)).unwrap();
        let e = w.close_part().unwrap().unwrap();
        assert_eq!((e.first_game, e.last_game, e.settings.bench), (3, 3, 2));
        drop(w);
        // Issue 68, defect 11: `--close` with other settings than the part's closed it on
        // opening and then said "no part to close"; now it names what it closed.
        let mut w = CorpusWriter::open(d.path(), settings(), "a").unwrap();
        w.push(&game(w.next_id(), 10)).unwrap();
        drop(w);
        let mut w = CorpusWriter::open(d.path(), other, "b").unwrap();
        let e = w.close().unwrap().expect("the part closed on opening");
        assert_eq!((e.first_game, e.settings.bench), (4, settings().bench));
        assert!(w.close().unwrap().is_none(), "nothing left to close");
    }

    #[test]
    fn corruption_is_refused_with_the_chunk_and_offset() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "abc").unwrap();
        for i in 0..3 {
            w.push(&game(i, 20)).unwrap();
        }
        let e = w.close_part().unwrap().unwrap();
        let path = d.path().join(&e.chunk);
        let mut bytes = std::fs::read(&path).unwrap();
        // Each record: length 4, head 17, the start FEN, 4 bytes a ply, CRC 4.
        let record = 4 + 17 + to_fen(&Board::default()).len() + 4 * 20 + 4;
        let third = bytes.len() - record;
        // Flip one score byte in the last game: its record's checksum no longer matches.
        let last_score = bytes.len() - 4 - 2;
        bytes[last_score] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let err = read_chunk(&path).unwrap_err().to_string();
        assert!(
            err.contains("chunk-000001.bin: corrupt at byte") && err.contains("checksum"),
            "{err}"
        );
        assert!(
            err.contains(&format!("byte {third}:")),
            "{err} (want {third})"
        );
        // The loader checks the manifest's SHA-256 before anything else.
        let l = Loader {
            filter: Filter::default(),
            holdout_percent: 10.0,
        };
        let err = l.for_each(d.path(), |_, _| {}).unwrap_err().to_string();
        assert!(err.contains("chunk-000001.bin: sha256"), "{err}");
        // Not a chunk at all.
        std::fs::write(&path, b"hello world, not games").unwrap();
        let err = read_chunk(&path).unwrap_err().to_string();
        assert!(err.contains("not a corpus chunk"), "{err}");
    }

    #[test]
    fn holdout_depends_on_the_game_id_only() {
        // The same ids give the same split in any order and any corpus size.
        let a: Vec<bool> = (0..1000).map(|i| is_holdout(i, 10.0)).collect();
        let b: Vec<bool> = (0..1000).rev().map(|i| is_holdout(i, 10.0)).collect();
        assert!(a.iter().eq(b.iter().rev()));
        let share = a.iter().filter(|h| **h).count();
        assert!((60..=140).contains(&share), "{share} of 1000 held out");
        assert!(!is_holdout(3, 0.0) && is_holdout(3, 100.0));
        // Through the loader: two corpora holding the same games in different chunk orders
        // hold out the same positions.
        let load = |order: &[u64]| {
            let d = tempfile::tempdir().unwrap();
            let mut w = CorpusWriter::open(d.path(), settings(), "x").unwrap();
            for &i in order {
                w.push(&game(i, 30)).unwrap();
                if i % 3 == 0 {
                    w.close_part().unwrap();
                }
            }
            w.close_part().unwrap();
            let l = Loader {
                filter: Filter::default(),
                holdout_percent: 30.0,
            };
            let mut held = std::collections::BTreeSet::new();
            let counts = l
                .for_each(d.path(), |s, h| {
                    if h {
                        held.insert((s.game, s.board.hash()));
                    }
                })
                .unwrap();
            (held, counts.kept)
        };
        let (h1, k1) = load(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let (h2, k2) = load(&[9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(h1, h2);
        assert_eq!(k1, k2);
        assert!(!h1.is_empty());
    }

    #[test]
    fn the_loader_filters_and_labels_from_whites_view() {
        let d = tempfile::tempdir().unwrap();
        let mut w = CorpusWriter::open(d.path(), settings(), "x").unwrap();
        w.push(&game(0, 12)).unwrap();
        w.close_part().unwrap();
        let l = Loader {
            filter: Filter {
                skip_plies: 2,
                no_check: false,
                no_tactical: false,
                max_abs_score: 5,
            },
            holdout_percent: 0.0,
        };
        let mut got = Vec::new();
        let c = l
            .for_each(d.path(), |s, _| got.push((s.white_score, s.white_result)))
            .unwrap();
        // Plies 0-1 skipped (opening); scores i-3 for ply i: |score| >= 5 from ply 8 on.
        assert_eq!(c.positions, 12);
        assert_eq!(c.opening, 2);
        assert_eq!(c.decided, 4);
        assert_eq!(c.kept, 6);
        // Ply 2 is White's move (score -1), ply 3 Black's (score 0 → White 0), ...
        assert_eq!(
            got,
            vec![
                (-1, 0.5),
                (0, 0.5),
                (1, 0.5),
                (-2, 0.5),
                (3, 0.5),
                (-4, 0.5)
            ]
        );
    }
}
