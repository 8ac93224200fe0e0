//! Packed models (`D7NTPK01`, issue 35 item 3): the entries training changed, quantised, in a
//! file small enough to commit, so a model survives a sitting and a screen can span several.
//!
//! A trained `D7NTUP02` file holds every entry of its layout as f32 (240 MB for the small
//! layout, 4 GB for the large ones) although only a small share was ever updated; the rest
//! still hold the initial value. The pack lists the others only: entry `i` of the model is
//! `initial + q_i · step` (f32 arithmetic) for the listed entries and `initial` for all
//! others. `q_i = round((w_i − initial) / step)`; an entry within `--drop-within` of the
//! initial value is not listed.
//!
//! Layout (little-endian), the whole file one zstd frame:
//!
//! ```text
//! "D7NTPK01"
//! u32 spec length, spec bytes      the layout (as D7NTUP02 writes it)
//! u64 entries                      must equal the layout's total
//! f32 initial, f32 step, f32 drop-within
//! u64 listed
//! listed × (LEB128 gap, zigzag LEB128 q)   gap = index − previous index − 1 (the first: index)
//! 32 bytes SHA-256 of every byte above (uncompressed)
//! ```
//!
//! **Parts.** The repository takes no file over 50 MB, and a large model's pack can be more.
//! A compressed stream longer than the part size (`--part-bytes`, 48 MB by default) is cut
//! into `NAME.part000`, `NAME.part001`, … beside a small text index at `NAME`:
//!
//! ```text
//! D7NTPK01 parts
//! bytes <total> sha256 <SHA-256 of the whole stream>
//! <SHA-256>  <bytes>  NAME.part000
//! …
//! ```
//!
//! Reading the index reads, checks and joins the parts (a missing, changed, cut or lengthened
//! part is refused by name), so the joined stream is exactly the one-file pack of the same
//! tables: same bytes, same SHA-256, whatever the part size.
//!
//! Unpacking restores exactly the values the pack describes (tested); the loss is the
//! quantisation, at most `step / 2` an entry, plus the dropped entries' `drop-within`.
//! [`crate::model::load`] reads packs directly, so a policy can name a pack
//! (`ntuple-d3s7@model.d7pk`).

use crate::Error;
use crate::layout::Layout;
use crate::tables::{Tables, check_memory, filled};
use sha2::{Digest, Sha256};
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

pub const PACK_MAGIC: &[u8; 8] = b"D7NTPK01";

/// First line of a parted pack's index.
pub const PARTS_MAGIC: &[u8] = b"D7NTPK01 parts\n";

/// Default largest part: under the 50 MB a repository file may have.
pub const DEFAULT_PART_BYTES: u64 = 48_000_000;

/// An index longer than this is not an index (a part line is under 100 bytes).
const MAX_INDEX_BYTES: u64 = 1 << 20;

/// What a pack holds (or what [`pack`] wrote).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackInfo {
    pub layout: String,
    pub entries: u64,
    pub listed: u64,
    pub initial: f32,
    pub step: f32,
    pub drop_within: f32,
    /// The largest |value − original| of the packed entries (from [`pack`]; 0 when read).
    pub max_error: f32,
    /// SHA-256 of the file as stored.
    pub sha256: String,
    pub bytes: u64,
    /// Files the stream is stored in (1: the pack is one file; more: an index and its parts).
    pub parts: u32,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Model {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The pack settings a caller can check before loading a model (`model pack --step 0` was
/// refused only after reading gigabytes): a finite step > 0, a finite drop-within ≥ 0.
pub fn check_settings(step: f32, drop_within: f32) -> Result<(), String> {
    if !(step.is_finite() && step > 0.0) {
        return Err(format!("step {step}: must be finite and > 0"));
    }
    if !(drop_within.is_finite() && drop_within >= 0.0) {
        return Err(format!(
            "drop-within {drop_within}: must be finite and >= 0"
        ));
    }
    Ok(())
}

/// The uncompressed pack stream of `tables` and the largest quantisation error.
pub fn pack_bytes(
    tables: &Tables,
    step: f32,
    drop_within: f32,
) -> Result<(Vec<u8>, u64, f32), String> {
    check_settings(step, drop_within)?;
    let initial = tables.initial_weight();
    let spec = tables.layout.to_string();
    let mut out = Vec::with_capacity(1 << 20);
    out.extend_from_slice(PACK_MAGIC);
    out.extend_from_slice(&(spec.len() as u32).to_le_bytes());
    out.extend_from_slice(spec.as_bytes());
    out.extend_from_slice(&tables.layout.total.to_le_bytes());
    for f in [initial, step, drop_within] {
        out.extend_from_slice(&f.to_le_bytes());
    }
    let count_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    let (mut listed, mut prev, mut max_error) = (0u64, None::<u64>, 0f32);
    for (i, w) in tables.weights.iter().enumerate() {
        let w = f32::from_bits(w.load(Relaxed));
        if !w.is_finite() {
            return Err(format!(
                "entry {i} is {w}: a model with non-finite weights cannot be packed"
            ));
        }
        let d = w - initial;
        if d.abs() <= drop_within {
            max_error = max_error.max(d.abs());
            continue;
        }
        let q = (d / step).round() as i64;
        if q == 0 {
            max_error = max_error.max(d.abs());
            continue;
        }
        let i = i as u64;
        put_varint(&mut out, prev.map_or(i, |p| i - p - 1));
        put_varint(&mut out, zigzag(q));
        prev = Some(i);
        listed += 1;
        max_error = max_error.max((initial + q as f32 * step - w).abs());
    }
    out[count_at..count_at + 8].copy_from_slice(&listed.to_le_bytes());
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    Ok((out, listed, max_error))
}

/// Pack `tables` into `path` (atomically, with a `.sha256` sidecar like model files); a
/// stream longer than `part_bytes` is stored as an index at `path` and parts beside it.
pub fn pack(
    tables: &Tables,
    path: &Path,
    step: f32,
    drop_within: f32,
    part_bytes: u64,
) -> Result<PackInfo, Error> {
    if part_bytes < 1024 {
        return Err(bad(
            path,
            format!("part size {part_bytes} bytes: must be at least 1024"),
        ));
    }
    let (bytes, listed, max_error) =
        pack_bytes(tables, step, drop_within).map_err(|m| bad(path, m))?;
    let compressed = zstd::encode_all(&bytes[..], 19).map_err(Error::io(path))?;
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    let sha256 = hex(&Sha256::digest(&compressed));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| bad(path, "no file name"))?;
    let parts = if compressed.len() as u64 <= part_bytes {
        evidence::atomic_write(path, &compressed)?;
        1
    } else {
        // The index is built (and its size checked against what the reader accepts) before
        // anything is written. Then parts first, the index last: an index never names a
        // part that is not written.
        let (index, chunks) =
            parts_index(&name, &compressed, &sha256, part_bytes).map_err(|m| bad(path, m))?;
        for (i, chunk) in chunks.iter().enumerate() {
            let part = format!("{name}.part{i:03}");
            evidence::atomic_write(&path.with_file_name(&part), chunk)?;
        }
        evidence::atomic_write(path, index.as_bytes())?;
        chunks.len() as u32
    };
    let mut side = path.as_os_str().to_owned();
    side.push(".sha256");
    evidence::atomic_write(Path::new(&side), format!("{sha256}  {name}\n").as_bytes())?;
    Ok(PackInfo {
        layout: tables.layout.to_string(),
        entries: tables.layout.total,
        listed,
        initial: tables.initial_weight(),
        step,
        drop_within,
        max_error,
        sha256,
        bytes: compressed.len() as u64,
        parts,
    })
}

/// The index of `compressed` cut into parts of `part_bytes` (named `NAME.partNNN`), and the
/// parts; refused when the index would exceed what the reader accepts (`--part-bytes 1024`
/// on a 12 MB stream made an index its own reader refused: issue 68, defect 9), naming a
/// part size that fits.
fn parts_index<'a>(
    name: &str,
    compressed: &'a [u8],
    sha256: &str,
    part_bytes: u64,
) -> Result<(String, Vec<&'a [u8]>), String> {
    let mut index = String::from_utf8(PARTS_MAGIC.to_vec()).expect("ascii");
    index += &format!("bytes {} sha256 {sha256}\n", compressed.len());
    let chunks: Vec<&[u8]> = compressed.chunks(part_bytes as usize).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let part = format!("{name}.part{i:03}");
        index += &format!("{}  {}  {part}\n", hex(&Sha256::digest(chunk)), chunk.len());
    }
    if index.len() as u64 > MAX_INDEX_BYTES {
        // a line is at most this long with fewer parts, so this many fit
        let line = (index.len() / chunks.len()) as u64 + 1;
        let fit = (MAX_INDEX_BYTES - 256) / line;
        return Err(format!(
            "part size {part_bytes} bytes: {} parts, an index over {MAX_INDEX_BYTES} bytes; \
             use parts of at least {} bytes",
            chunks.len(),
            (compressed.len() as u64).div_ceil(fit)
        ));
    }
    Ok((index, chunks))
}

/// Does the regular file `path` start with the parted-pack index line?
fn is_index(path: &Path) -> bool {
    // A regular file only ([`fileio::open`]): a FIFO named as a pack would block the open.
    let Ok(f) = fileio::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(PARTS_MAGIC.len());
    f.take(PARTS_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .is_ok()
        && head == PARTS_MAGIC
}

/// The stored stream of a pack and the number of files it came from: the file itself, or
/// the parts its index names, each checked against the index.
fn read_stored(path: &Path) -> Result<(Vec<u8>, u32), Error> {
    if !is_index(path) {
        // A one-file pack is read whole, as it is decoded whole: never more than the memory
        // left (as in `decode_bounded`), which is what a pack of any real model fits in.
        let limit = drop7::memory::available_memory()
            .map_or(u64::MAX, |m| m.saturating_sub(drop7::memory::HEADROOM));
        let stored = fileio::read(path, limit).map_err(|e| Error::io(path)(e.into_io()))?;
        return Ok((stored, 1));
    }
    let len = std::fs::metadata(path).map_err(Error::io(path))?.len();
    if len > MAX_INDEX_BYTES {
        return Err(bad(path, format!("a parts index of {len} bytes")));
    }
    let text = fileio::read_to_string(path, MAX_INDEX_BYTES)
        .map_err(|e| bad(path, format!("parts index is not text ({})", e.into_io())))?;
    let mut lines = text.lines().skip(1);
    let (total, whole_sha) = match lines
        .next()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .as_deref()
    {
        Some(["bytes", n, "sha256", sha]) => (
            n.parse::<u64>()
                .map_err(|_| bad(path, format!("parts index: total `{n}` is not a count")))?,
            sha.to_string(),
        ),
        _ => return Err(bad(path, "parts index: no `bytes N sha256 H` line")),
    };
    if let Some(free) = drop7::memory::shortfall(total) {
        return Err(bad(
            path,
            format!("parts index: {total} bytes, more than the {free} bytes of memory free"),
        ));
    }
    let mut stored = Vec::new();
    let mut parts = 0u32;
    let mut seen = std::collections::HashSet::new();
    for (n, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [sha, bytes, name] = fields[..] else {
            return Err(bad(path, format!("parts index line {}: `{line}`", n + 3)));
        };
        // A part lives beside its index: no directories, no way out of it.
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad(path, format!("parts index names `{name}`")));
        }
        if !seen.insert(name) {
            return Err(bad(path, format!("parts index names `{name}` twice")));
        }
        let part = path.with_file_name(name);
        // A part is a file beside its index, not a link to somewhere else.
        if std::fs::symlink_metadata(&part).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(bad(&part, format!("part {n} is a symbolic link")));
        }
        // Never read more than the index leaves for it: a part is checked against its size
        // before it is read whole.
        let room = total - stored.len() as u64;
        let data = fileio::read(&part, room).map_err(|e| {
            bad(
                &part,
                format!("part {n} of {}: {}", path.display(), e.into_io()),
            )
        })?;
        if bytes.parse::<u64>().ok() != Some(data.len() as u64) {
            return Err(bad(
                &part,
                format!(
                    "part {n} has {} bytes, the index says {bytes}: cut or lengthened",
                    data.len()
                ),
            ));
        }
        if hex(&Sha256::digest(&data)) != sha {
            return Err(bad(
                &part,
                format!("part {n}: checksum mismatch, the part was changed or damaged"),
            ));
        }
        if stored.len() as u64 + data.len() as u64 > total {
            return Err(bad(path, "parts index: parts longer than the total"));
        }
        stored.extend_from_slice(&data);
        parts += 1;
    }
    if stored.len() as u64 != total || hex(&Sha256::digest(&stored)) != whole_sha {
        return Err(bad(
            path,
            format!(
                "parts join to {} bytes, the index says {total} with another checksum: a part is missing from the index",
                stored.len()
            ),
        ));
    }
    Ok((stored, parts))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The layout a pack holds, from the first bytes of its stream alone (the first part of a
/// parted pack): what a reader needs to make room before it loads the pack (checked whole
/// by [`unpack`]).
pub fn layout_of(path: &Path) -> Result<Layout, Error> {
    let open = |p: &Path| fileio::open(p).map_err(|e| bad(p, e.into_io().to_string()));
    // The stream: the file, or its parts in order (read lazily: only the first bytes are
    // decoded, and those may span a part's end).
    let stream: Box<dyn Read> = if is_index(path) {
        let text = fileio::read_to_string(path, MAX_INDEX_BYTES)
            .map_err(|e| bad(path, format!("parts index: {}", e.into_io())))?;
        let mut joined: Box<dyn Read> = Box::new(std::io::empty());
        for line in text.lines().skip(2) {
            let name = line
                .split_whitespace()
                .nth(2)
                .filter(|n| !n.contains(['/', '\\']) && !n.starts_with('.'))
                .ok_or_else(|| bad(path, format!("parts index line `{line}`")))?;
            joined = Box::new(joined.chain(open(&path.with_file_name(name))?));
        }
        joined
    } else {
        Box::new(open(path)?)
    };
    let unreadable = |e: std::io::Error| bad(path, format!("not a readable zstd stream ({e})"));
    let mut d = zstd::Decoder::new(BufReader::new(stream)).map_err(unreadable)?;
    let mut head = [0u8; 12];
    d.read_exact(&mut head).map_err(unreadable)?;
    if &head[..8] != PACK_MAGIC {
        return Err(bad(path, "not a packed model (no D7NTPK01 magic)"));
    }
    let spec_len = u32::from_le_bytes(head[8..12].try_into().expect("4")) as usize;
    if spec_len > 4096 {
        return Err(bad(path, format!("layout spec of {spec_len} bytes")));
    }
    let mut spec = vec![0u8; spec_len];
    d.read_exact(&mut spec).map_err(unreadable)?;
    let spec = std::str::from_utf8(&spec).map_err(|_| bad(path, "layout spec is not UTF-8"))?;
    Layout::parse(spec).map_err(|e| bad(path, format!("layout `{spec}`: {e}")))
}

/// The entries (f32 each in memory) of the model in `path`, a model file or a pack, from its
/// header alone: how much room loading it takes.
pub fn entries_of(path: &Path) -> Result<u64, Error> {
    if is_pack(path) {
        Ok(layout_of(path)?.total)
    } else {
        Ok(crate::model::read_info(path)?.entries)
    }
}

/// Is `path` a pack (a zstd frame whose first bytes are the pack magic)?
pub fn is_pack(path: &Path) -> bool {
    // Only a regular file is opened: opening a FIFO would block (the model loader says what
    // is wrong with anything else).
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    if is_index(path) {
        return true;
    }
    let Ok(f) = fileio::open(path) else {
        return false;
    };
    let Ok(mut d) = zstd::Decoder::new(BufReader::new(f)) else {
        return false;
    };
    let mut magic = [0u8; 8];
    d.read_exact(&mut magic).is_ok() && &magic == PACK_MAGIC
}

/// The most a pack's header (magic, layout spec, counts) can take before its records.
const MAX_HEADER: usize = 8 + 4 + 4096 + 8 + 12 + 8;
/// The most bytes a record can take (two 64-bit LEB128 varints).
const MAX_RECORD: u64 = 20;

/// Decompress a pack's stream, never to more bytes than its own header allows: the header
/// says how many records follow, and a record is at most [`MAX_RECORD`] bytes. A stream that
/// decompresses further (a "zip bomb": 135 KB of zstd that expand to 4 GB of zeros aborted
/// every reader) is refused after that many bytes, not after memory ran out.
fn decode_bounded(path: &Path, stored: &[u8]) -> Result<Vec<u8>, Error> {
    let unreadable = |e: std::io::Error| {
        bad(
            path,
            format!("not a readable zstd stream ({e}): truncated or damaged"),
        )
    };
    let mut d = zstd::Decoder::new(stored).map_err(unreadable)?;
    let mut bytes = Vec::new();
    (&mut d)
        .take(MAX_HEADER as u64)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() < 8 + 4 || &bytes[..8] != PACK_MAGIC {
        return Err(bad(path, "not a packed model (no D7NTPK01 magic)"));
    }
    let spec_len = u32::from_le_bytes(bytes[8..12].try_into().expect("4")) as usize;
    let listed_at = 12 + spec_len + 8 + 12;
    let listed = bytes
        .get(listed_at..listed_at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
        .ok_or_else(|| bad(path, "header cut short"))?;
    let limit = ((listed_at + 8) as u64)
        .saturating_add(listed.saturating_mul(MAX_RECORD))
        .saturating_add(32);
    // And never more than the memory left (a header may claim billions of records).
    let free = drop7::memory::available_memory()
        .map_or(u64::MAX, |m| m.saturating_sub(drop7::memory::HEADROOM));
    let limit = limit.min(free).max(bytes.len() as u64);
    let rest = limit - bytes.len() as u64;
    d.take(rest + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(bad(
            path,
            format!(
                "decompresses to more than the {limit} bytes its header allows (or memory holds)"
            ),
        ));
    }
    Ok(bytes)
}

/// Read a pack into tables (frozen, no accumulators): its checksum, layout, counts and every
/// record checked; a truncated, damaged or padded file is refused with what is wrong.
pub fn unpack(path: &Path) -> Result<(Tables, PackInfo), Error> {
    let meta = std::fs::metadata(path).map_err(Error::io(path))?;
    if !meta.is_file() {
        return Err(bad(path, "not a regular file"));
    }
    let (stored, parts) = read_stored(path)?;
    let bytes = decode_bounded(path, &stored)?;
    if bytes.len() < 8 + 4 + 8 + 12 + 8 + 32 || &bytes[..8] != PACK_MAGIC {
        return Err(bad(path, "not a packed model (no D7NTPK01 magic)"));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body).as_slice() != digest {
        return Err(bad(
            path,
            "checksum mismatch: the pack was changed or damaged",
        ));
    }
    let mut at = 8usize;
    let mut take = |n: usize| -> Result<&[u8], Error> {
        let s = body
            .get(at..at + n)
            .ok_or_else(|| bad(path, "header cut short"))?;
        at += n;
        Ok(s)
    };
    let spec_len = u32::from_le_bytes(take(4)?.try_into().expect("4")) as usize;
    if spec_len > 4096 {
        return Err(bad(path, format!("layout spec of {spec_len} bytes")));
    }
    let spec = std::str::from_utf8(take(spec_len)?)
        .map_err(|_| bad(path, "layout spec is not UTF-8"))?
        .to_owned();
    let layout = Layout::parse(&spec).map_err(|e| bad(path, format!("layout `{spec}`: {e}")))?;
    let entries = u64::from_le_bytes(take(8)?.try_into().expect("8"));
    if entries != layout.total {
        return Err(bad(
            path,
            format!(
                "{entries} entries, the layout `{spec}` has {}",
                layout.total
            ),
        ));
    }
    let f = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4"));
    let initial = f(take(4)?);
    let step = f(take(4)?);
    let drop_within = f(take(4)?);
    let listed = u64::from_le_bytes(take(8)?.try_into().expect("8"));
    if !(step.is_finite() && step > 0.0 && initial.is_finite() && drop_within.is_finite()) {
        return Err(bad(path, "bad quantisation header"));
    }
    let expected_initial = crate::tables::OPTIMISTIC_TOTAL / layout.active() as f32;
    if initial.to_bits() != expected_initial.to_bits() {
        return Err(bad(
            path,
            format!("initial value {initial}, the layout's is {expected_initial}"),
        ));
    }
    check_memory(&layout, false)?;
    let weights = filled(entries, initial);
    let mut rest = &body[at..];
    let mut varint = |what: &str| -> Result<u64, Error> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, tail) = rest
                .split_first()
                .ok_or_else(|| bad(path, format!("records cut short ({what})")))?;
            rest = tail;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad(path, format!("a varint of more than 64 bits ({what})")))
    };
    let mut next = 0u64;
    for n in 0..listed {
        let i = next
            .checked_add(varint("index")?)
            .filter(|&i| i < entries)
            .ok_or_else(|| {
                bad(
                    path,
                    format!("record {n}: index beyond the {entries} entries"),
                )
            })?;
        let q = unzigzag(varint("value")?);
        let w = initial + q as f32 * step;
        if !w.is_finite() {
            return Err(bad(path, format!("record {n}: value {w}")));
        }
        weights[i as usize].store(w.to_bits(), Relaxed);
        next = i + 1;
    }
    if !rest.is_empty() {
        return Err(bad(
            path,
            format!("{} bytes after the last record", rest.len()),
        ));
    }
    let info = PackInfo {
        layout: spec,
        entries,
        listed,
        initial,
        step,
        drop_within,
        max_error: 0.0,
        sha256: hex(&Sha256::digest(&stored)),
        bytes: stored.len() as u64,
        parts,
    };
    Ok((
        Tables {
            layout,
            weights,
            coherence: None,
        },
        info,
    ))
}

/// Write the tables a pack describes as a `D7NTUP02` model file.
pub fn unpack_to(src: &Path, dst: &Path) -> Result<(PackInfo, String), Error> {
    let (tables, info) = unpack(src)?;
    let sha = crate::model::save(&tables, dst, false)?;
    Ok((info, sha))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Tables {
        let layout = Layout::parse("win23,phase=none").unwrap();
        Tables::new(layout, crate::tables::OPTIMISTIC_TOTAL, false).unwrap()
    }

    /// Issue 68, serious item 2: a stream that decompresses far past what its header says
    /// (135 KB of zstd expanding to 4 GB of zeros aborted every reader) is refused once it
    /// passes the bytes its records could take; an index naming one part many times, or a
    /// part that is a link, is refused before anything is joined.
    #[test]
    fn bombs_repeated_parts_and_linked_parts_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::parse("win23,phase=none").unwrap();
        let spec = layout.spec();
        let mut head = PACK_MAGIC.to_vec();
        head.extend((spec.len() as u32).to_le_bytes());
        head.extend(spec.as_bytes());
        head.extend(layout.total.to_le_bytes());
        let initial = crate::tables::OPTIMISTIC_TOTAL / layout.active() as f32;
        for f in [initial, 1.0, 0.0] {
            head.extend(f.to_le_bytes());
        }
        head.extend(0u64.to_le_bytes()); // no record listed
        let mut stream = head.clone();
        stream.resize(head.len() + (64 << 20), 0); // then 64 MB of zeros
        let bomb = dir.path().join("bomb.d7pk");
        std::fs::write(&bomb, zstd::encode_all(&stream[..], 3).unwrap()).unwrap();
        assert!(std::fs::metadata(&bomb).unwrap().len() < 64 << 10);
        let e = unpack(&bomb).err().expect("refused").to_string();
        assert!(e.contains("decompresses to more than the"), "{e}");

        // A real pack cut into parts, its index then naming one part twice.
        let t = small();
        let split = dir.path().join("split.d7pk");
        let mut x = 1u64;
        for i in 0..3000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            t.set_weight(i * 89, t.initial_weight() + (x >> 40) as f32 / 1e7);
        }
        let info = pack(&t, &split, 0.001, 0.0, 1024).unwrap();
        assert!(info.parts >= 2);
        let index = std::fs::read_to_string(&split).unwrap();
        let first_part = index.lines().nth(2).unwrap().to_string();
        let doubled = index.replacen(&index.lines().nth(3).unwrap().to_string(), &first_part, 1);
        std::fs::write(&split, &doubled).unwrap();
        let e = unpack(&split).err().expect("refused").to_string();
        assert!(e.contains("twice"), "{e}");
        // A part that is a link to a file elsewhere.
        std::fs::write(&split, &index).unwrap();
        unpack(&split).unwrap();
        let part0 = dir.path().join("split.d7pk.part000");
        let away = dir.path().join("elsewhere.bin");
        std::fs::rename(&part0, &away).unwrap();
        std::os::unix::fs::symlink(&away, &part0).unwrap();
        let e = unpack(&split).err().expect("refused").to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
    }

    /// Unpacking gives back exactly `initial + q·step` for every listed entry and `initial`
    /// for the rest; packing the unpacked tables gives the same bytes.
    #[test]
    fn unpack_restores_what_was_packed() {
        let t = small();
        let init = t.initial_weight();
        let changes = [
            (0u64, init + 0.0123),
            (5, init - 0.5),
            (6, init + 3.0),
            (999_999, init - 0.00001),
        ];
        for &(i, w) in &changes {
            t.set_weight(i, w);
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.d7pk");
        let info = pack(&t, &p, 0.001, 0.0001, DEFAULT_PART_BYTES).unwrap();
        assert_eq!(info.listed, 3, "the last change is within drop-within");
        assert!(info.max_error <= 0.0005 + 1e-6, "{}", info.max_error);
        assert!(is_pack(&p));
        let (u, read) = unpack(&p).unwrap();
        assert_eq!((read.listed, read.entries), (3, t.layout.total));
        let want = |w: f32| init + ((w - init) / 0.001).round() * 0.001;
        assert_eq!(u.weight(0), want(init + 0.0123));
        assert_eq!(u.weight(5), want(init - 0.5));
        assert_eq!(u.weight(6), want(init + 3.0));
        assert_eq!(u.weight(999_999), init);
        assert_eq!(u.weight(7), init);
        let (again, _, _) = pack_bytes(&u, 0.001, 0.0001).unwrap();
        let (first, _, _) = pack_bytes(&t, 0.001, 0.0001).unwrap();
        assert_eq!(again, first);
        // The model loader reads packs too.
        let (m, li) = crate::model::load(&p, false).unwrap();
        assert_eq!(m.weight(6), u.weight(6));
        assert_eq!(li.sha256, read.sha256);
    }

    #[test]
    fn damaged_and_truncated_packs_are_refused() {
        let t = small();
        t.set_weight(10, t.initial_weight() + 1.0);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.d7pk");
        pack(&t, &p, 0.01, 0.0, DEFAULT_PART_BYTES).unwrap();
        let raw = zstd::decode_all(&std::fs::read(&p).unwrap()[..]).unwrap();
        let write = |b: &[u8]| std::fs::write(&p, zstd::encode_all(b, 3).unwrap()).unwrap();
        let mut changed = raw.clone();
        let n = changed.len();
        changed[n - 40] ^= 1;
        write(&changed);
        assert!(unpack(&p).err().unwrap().to_string().contains("checksum"));
        write(&raw[..n - 5]);
        assert!(unpack(&p).is_err());
        let whole = std::fs::read(dir.path().join("m.d7pk.sha256")).unwrap();
        assert!(!whole.is_empty());
        std::fs::write(&p, &zstd::encode_all(&raw[..], 3).unwrap()[..20]).unwrap();
        assert!(unpack(&p).err().unwrap().to_string().contains("zstd"));
    }

    /// A pack cut into parts reads as the one-file pack of the same tables (same stream, same
    /// SHA-256); a missing, changed or cut part, or an index naming a path, is refused by name.
    #[test]
    fn the_writer_makes_no_index_its_reader_refuses() {
        // 13 MB in parts of 1,024 bytes: 12,696 index lines, over the reader's limit.
        let stream: Vec<u8> = (0..13_000_000u32).map(|i| ((i * 7) >> 3) as u8).collect();
        let e = match parts_index("m.d7pk", &stream, "00", 1024) {
            Err(e) => e,
            Ok((index, _)) => panic!("accepted: an index of {} bytes", index.len()),
        };
        assert!(e.contains("12696 parts") && e.contains("at least"), "{e}");
        let fits: u64 = e.split_whitespace().rev().nth(1).unwrap().parse().unwrap();
        let (index, parts) = parts_index("m.d7pk", &stream, "00", fits).expect("it fits");
        assert!(index.len() as u64 <= MAX_INDEX_BYTES, "{}", index.len());
        assert_eq!(parts.concat(), stream);
        // the suggestion is near the least that fits
        assert!(parts_index("m.d7pk", &stream, "00", fits * 9 / 10).is_err());
    }

    #[test]
    fn parted_packs_read_as_one_and_refuse_bad_parts() {
        let t = small();
        let init = t.initial_weight();
        // Scattered, irregular changes, so the stream does not compress to nothing.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let q = (x >> 40) as f32 / (1u64 << 24) as f32;
            t.set_weight(i * 97, init + q - 0.5);
        }
        let dir = tempfile::tempdir().unwrap();
        let one = dir.path().join("one.d7pk");
        let split = dir.path().join("split.d7pk");
        let a = pack(&t, &one, 0.001, 0.0, DEFAULT_PART_BYTES).unwrap();
        let b = pack(&t, &split, 0.001, 0.0, 2048).unwrap();
        assert_eq!(a.parts, 1);
        assert!(b.parts >= 3, "{} parts of {} bytes", b.parts, b.bytes);
        assert_eq!(a.sha256, b.sha256);
        assert!(is_pack(&split));
        let (u, read) = unpack(&split).unwrap();
        assert_eq!(
            (read.sha256.as_str(), read.parts),
            (a.sha256.as_str(), b.parts)
        );
        for i in [0u64, 97, 97 * 4999, 5] {
            assert_eq!(u.weight(i), unpack(&one).unwrap().0.weight(i));
        }
        // The layout, and so the room a reader makes, from the header alone.
        for p in [&one, &split] {
            assert_eq!(layout_of(p).unwrap().spec(), "win23,phase=none");
            assert_eq!(entries_of(p).unwrap(), t.layout.total);
        }
        let joined: Vec<u8> = (0..b.parts)
            .flat_map(|i| std::fs::read(dir.path().join(format!("split.d7pk.part{i:03}"))).unwrap())
            .collect();
        assert_eq!(joined, std::fs::read(&one).unwrap());

        let part1 = dir.path().join("split.d7pk.part001");
        let good = std::fs::read(&part1).unwrap();
        let err = |p: &Path| unpack(p).err().expect("refused").to_string();
        let mut changed = good.clone();
        changed[10] ^= 1;
        std::fs::write(&part1, &changed).unwrap();
        let e = err(&split);
        assert!(
            e.contains("split.d7pk.part001") && e.contains("checksum"),
            "{e}"
        );
        std::fs::write(&part1, &good[..good.len() - 1]).unwrap();
        assert!(err(&split).contains("cut or lengthened"));
        std::fs::remove_file(&part1).unwrap();
        assert!(err(&split).contains("split.d7pk.part001"));
        std::fs::write(&part1, &good).unwrap();
        assert!(unpack(&split).is_ok());

        let index = std::fs::read_to_string(&split).unwrap();
        let lines: Vec<&str> = index.lines().collect();
        let dropped: String = lines
            .iter()
            .take(lines.len() - 1)
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&split, dropped).unwrap();
        assert!(err(&split).contains("missing"));
        std::fs::write(
            &split,
            index.replace("split.d7pk.part000", "../split.d7pk.part000"),
        )
        .unwrap();
        assert!(err(&split).contains("names"));
    }
}
