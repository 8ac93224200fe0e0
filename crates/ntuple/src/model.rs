//! Model files (docs/design/drop7-SPEC.md §7's `D7NTUP01` layout, with a checksum of its own), little-endian:
//! magic `D7NTUP02`; u32 spec length; spec bytes; u64 entry count; u8 flag (1 = the E and A
//! accumulators follow); the weights as f32 in spec order; then all E, then all A when the
//! flag is 1; then the **SHA-256 of every byte before it** (32 bytes).
//!
//! A name ending in `.zst` is zstd-compressed (the checksum is inside, over the uncompressed
//! bytes). Every file is written atomically, with a `<file>.sha256` sidecar (the hash of the
//! file as stored, for `sha256sum -c` and for the names results give models) as a
//! convenience. Loading does not need the sidecar: the embedded checksum is computed while
//! the file streams in (no second copy in memory, whatever the file's size) and compared at
//! its end, so a changed byte anywhere, a truncation or trailing bytes refuse the file with a
//! message that names it and says which. A sidecar that is present must agree too.
//!
//! `D7NTUP01` files (written before 2026-12-01; the same bytes with the other magic and no
//! checksum) are read only when their `.sha256` sidecar verifies them; without one they are
//! refused (nothing could notice a corrupted weight), with a message saying how to rewrite
//! them with their own checksum ([`upgrade`], `drop7 model upgrade`, which copies the weights
//! bit for bit).
//!
//! A model whose weights include NaN or infinities is refused by [`load`] (it cannot be
//! played, trained or edited); [`inspect`] reads it anyway and counts them.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use sha2::{Digest, Sha256};

use crate::Error;
use crate::layout::Layout;
use crate::tables::{Tables, check_memory};

/// The magic of the current format (with the embedded checksum).
pub const MAGIC: &[u8; 8] = b"D7NTUP02";
/// The magic of the format before 2026-12-01 (no checksum of its own).
pub const MAGIC_V1: &[u8; 8] = b"D7NTUP01";
/// Bytes of the embedded checksum at the end of a `D7NTUP02` stream.
pub const CHECKSUM_BYTES: usize = 32;

/// Which format a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Format {
    /// `D7NTUP01`: no checksum of its own (needs its sidecar).
    #[serde(rename = "D7NTUP01")]
    V1,
    /// `D7NTUP02`: the SHA-256 of header and payload at its end.
    #[serde(rename = "D7NTUP02")]
    V2,
    /// `D7NTPK01`: a packed model ([`crate::pack`]), its SHA-256 inside the stream.
    #[serde(rename = "D7NTPK01")]
    Pack,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::V1 => "D7NTUP01",
            Format::V2 => "D7NTUP02",
            Format::Pack => "D7NTPK01",
        })
    }
}

/// What vouched for a file's bytes when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckedBy {
    /// The embedded checksum (no sidecar beside the file).
    Embedded,
    /// The embedded checksum, and the sidecar agreed.
    EmbeddedAndSidecar,
    /// A `D7NTUP01` file's sidecar.
    Sidecar,
    /// Nothing: a `D7NTUP01` file without a sidecar, read because the caller said to trust it
    /// ([`upgrade`] with `trust_unverified`).
    Nothing,
}

impl std::fmt::Display for CheckedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CheckedBy::Embedded => "its embedded checksum",
            CheckedBy::EmbeddedAndSidecar => "its embedded checksum and its .sha256 sidecar",
            CheckedBy::Sidecar => "its .sha256 sidecar",
            CheckedBy::Nothing => "nothing (trusted as it is)",
        })
    }
}

/// What is wrong inside a model file, before the public functions attach its path.
#[derive(Debug, thiserror::Error)]
enum Fault {
    #[error("truncated model file: it ends inside the {0}")]
    Truncated(&'static str),
    #[error("reading the {what}: {source}")]
    Read {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("not a regular file (a model is one)")]
    NotAFile,
    #[error("not a D7NTUP model file (it starts with {0:?})")]
    NotAModel(String),
    #[error("corrupt model file: {0}")]
    Corrupt(String),
    #[error(
        "corrupt model file: its embedded SHA-256 is {stored} but its header and payload hash to {actual} (changed after it was written)"
    )]
    Checksum { stored: String, actual: String },
    #[error("SHA-256 mismatch: file hashes to {actual}, {} says {stored}", sidecar.display())]
    Sidecar {
        sidecar: PathBuf,
        stored: String,
        actual: String,
    },
    #[error(
        "a D7NTUP01 model (the format before 2026-12-01, which carries no checksum) without its {} sidecar: refused, since nothing could notice a corrupted weight. Put the sidecar back beside it, or, if you trust the file, rewrite it with its own checksum: drop7 model upgrade FILE --out NEW --unverified",
        sidecar.display()
    )]
    Unverifiable { sidecar: PathBuf },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Writing the output of [`upgrade`] failed (reported against that file).
    #[error("{0}")]
    Write(std::io::Error),
    #[error(transparent)]
    Other(#[from] Error),
}

impl Fault {
    fn at(self, path: &Path) -> Error {
        match self {
            Fault::Other(e) => e,
            Fault::Io(source) => Error::Io {
                path: path.to_owned(),
                source,
            },
            f => Error::Model {
                path: path.to_owned(),
                message: f.to_string(),
            },
        }
    }
}

/// Writes through to an inner writer while hashing.
struct HashWriter<W: Write> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Reads through from an inner reader, hashing what passes if it has a hasher.
struct HashReader<R: Read> {
    inner: R,
    hasher: Option<Sha256>,
}

impl<R: Read> Read for HashReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}

fn is_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// `<file>.sha256`.
pub fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".sha256");
    PathBuf::from(s)
}

/// The hash a sidecar states (its first word, lowercased), if there is a readable one.
fn read_sidecar(path: &Path) -> Option<String> {
    // A regular file only ([`fileio::open`]); its first 4 KB hold the hash.
    let f = fileio::open(&sidecar(path)).ok()?;
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text).ok()?;
    Some(text.split_whitespace().next().unwrap_or("").to_lowercase())
}

/// Write `values` (one per entry, in storage order) in spec order, the order of the file.
fn write_f32s(w: &mut impl Write, layout: &Layout, values: &[AtomicU32]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 20);
    for class in layout.classes() {
        let (start, stride) = (class.start as usize, class.stride as usize);
        for j in (0..class.count as usize).step_by(1 << 18) {
            let n = (class.count as usize - j).min(1 << 18);
            buf.clear();
            for k in j..j + n {
                buf.extend_from_slice(&values[start + k * stride].load(Relaxed).to_le_bytes());
            }
            w.write_all(&buf)?;
        }
    }
    Ok(())
}

/// Header fields in file order (after the magic).
fn write_header(w: &mut impl Write, layout: &Layout, with_coherence: bool) -> std::io::Result<()> {
    let spec = layout.spec();
    w.write_all(MAGIC)?;
    w.write_all(&(spec.len() as u32).to_le_bytes())?;
    w.write_all(spec.as_bytes())?;
    w.write_all(&layout.total.to_le_bytes())?;
    w.write_all(&[with_coherence as u8])
}

/// The uncompressed stream: header, payload, and the checksum of both.
fn write_content<W: Write>(
    w: &mut HashWriter<W>,
    tables: &Tables,
    with_coherence: bool,
) -> std::io::Result<()> {
    let acc = tables.coherence.as_ref().filter(|_| with_coherence);
    write_header(w, &tables.layout, acc.is_some())?;
    write_f32s(w, &tables.layout, &tables.weights)?;
    if let Some((e, a)) = acc {
        write_f32s(w, &tables.layout, e)?;
        write_f32s(w, &tables.layout, a)?;
    }
    let digest = w.hasher.clone().finalize();
    w.write_all(&digest)
}

/// The body of [`save`]: the whole file into `file`; returns the file's SHA-256.
fn write_model(
    tables: &Tables,
    zst: bool,
    file: &mut std::fs::File,
    with_coherence: bool,
) -> std::io::Result<String> {
    let buffered = BufWriter::with_capacity(1 << 22, file);
    if zst {
        let mut fw = HashWriter {
            inner: buffered,
            hasher: Sha256::new(),
        };
        let mut cw = HashWriter {
            inner: zstd::Encoder::new(&mut fw, 3)?,
            hasher: Sha256::new(),
        };
        write_content(&mut cw, tables, with_coherence)?;
        cw.inner.finish()?;
        fw.flush()?;
        Ok(hex(&fw.hasher.finalize()))
    } else {
        // uncompressed, the stream is the file: one hash serves as both
        let mut cw = HashWriter {
            inner: buffered,
            hasher: Sha256::new(),
        };
        write_content(&mut cw, tables, with_coherence)?;
        cw.flush()?;
        Ok(hex(&cw.hasher.finalize()))
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Write the `.sha256` sidecar of `path` (`HASH  NAME`, as `sha256sum` prints it).
fn write_sidecar(path: &Path, hash: &str) -> Result<(), Error> {
    let line = format!("{hash}  {}\n", file_name(path));
    Ok(evidence::atomic_write(&sidecar(path), line.as_bytes())?)
}

/// Save `tables` (with accumulators if `with_coherence` and present) as `D7NTUP02`. Returns
/// the SHA-256 of the file as written (hex). The write is atomic (a uniquely named temporary
/// file, synced, renamed; removed if anything fails, so a full disk leaves no gigabytes
/// behind), then the `.sha256` sidecar is written the same way.
pub fn save(tables: &Tables, path: &Path, with_coherence: bool) -> Result<String, Error> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    let mut hash = String::new();
    evidence::atomic_write_with(path, |f| {
        hash = write_model(tables, is_zst(path), f, with_coherence)?;
        Ok(())
    })?;
    write_sidecar(path, &hash)?;
    Ok(hash)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Header of a model file.
#[derive(Debug, Clone)]
pub struct Header {
    pub format: Format,
    pub layout: Layout,
    pub entries: u64,
    pub has_coherence: bool,
}

impl Header {
    /// Bytes after the header and before the checksum: weights, and E and A if present.
    pub fn payload_bytes(&self) -> u64 {
        self.entries * 4 * if self.has_coherence { 3 } else { 1 }
    }
}

fn read_exact<R: Read + ?Sized>(
    r: &mut R,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), Fault> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Fault::Truncated(what)
        } else {
            Fault::Read { what, source: e }
        }
    })
}

/// Read until `buf` is full or the input ends; how many bytes were read.
fn read_up_to<R: Read + ?Sized>(
    r: &mut R,
    buf: &mut [u8],
    what: &'static str,
) -> Result<usize, Fault> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Fault::Read { what, source: e }),
        }
    }
    Ok(n)
}

fn read_header<R: Read + ?Sized>(r: &mut R) -> Result<Header, Fault> {
    let mut magic = [0u8; 8];
    let n = read_up_to(r, &mut magic, "magic")?;
    let family = &MAGIC[..7];
    if magic[..n.min(7)] != family[..n.min(7)] {
        return Err(Fault::NotAModel(
            String::from_utf8_lossy(&magic[..n]).into_owned(),
        ));
    }
    if n < 8 {
        return Err(Fault::Truncated("magic"));
    }
    let format = match &magic {
        m if m == MAGIC => Format::V2,
        m if m == MAGIC_V1 => Format::V1,
        m => {
            return Err(Fault::Corrupt(format!(
                "magic {:?}: this build reads D7NTUP01 and D7NTUP02",
                String::from_utf8_lossy(m)
            )));
        }
    };
    let mut b4 = [0u8; 4];
    read_exact(r, &mut b4, "spec length")?;
    let len = u32::from_le_bytes(b4) as usize;
    if len > 4096 {
        return Err(Fault::Corrupt(format!("layout spec length {len}")));
    }
    let mut spec = vec![0u8; len];
    read_exact(r, &mut spec, "layout spec")?;
    let spec =
        String::from_utf8(spec).map_err(|_| Fault::Corrupt("layout spec is not UTF-8".into()))?;
    let layout = Layout::parse(&spec)?;
    let mut b8 = [0u8; 8];
    read_exact(r, &mut b8, "entry count")?;
    let entries = u64::from_le_bytes(b8);
    if entries != layout.total {
        return Err(Fault::Corrupt(format!(
            "{entries} entries but layout `{spec}` has {}",
            layout.total
        )));
    }
    let mut flag = [0u8; 1];
    read_exact(r, &mut flag, "flag")?;
    if flag[0] > 1 {
        return Err(Fault::Corrupt(format!("flag {}", flag[0])));
    }
    Ok(Header {
        format,
        layout,
        entries,
        has_coherence: flag[0] == 1,
    })
}

/// NaN and infinite values among the weights, counted as they are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NonFinite {
    pub nan: u64,
    pub infinite: u64,
    /// The entry (in the file's spec order) of the first one.
    pub first: Option<u64>,
}

impl NonFinite {
    pub fn count(&self) -> u64 {
        self.nan + self.infinite
    }

    fn see(&mut self, bits: u32, at: u64) {
        if bits & 0x7f80_0000 == 0x7f80_0000 {
            if bits & 0x007f_ffff != 0 {
                self.nan += 1;
            } else {
                self.infinite += 1;
            }
            self.first.get_or_insert(at);
        }
    }
}

/// Read one value per entry in spec (file) order into `out`, which is in storage order;
/// counts the non-finite values.
fn read_f32s<R: Read + ?Sized>(
    r: &mut R,
    layout: &Layout,
    out: &[AtomicU32],
    what: &'static str,
) -> Result<NonFinite, Fault> {
    let mut buf = vec![0u8; 1 << 20];
    let mut bad = NonFinite::default();
    let mut at = 0u64;
    for class in layout.classes() {
        let (start, stride) = (class.start as usize, class.stride as usize);
        for j in (0..class.count as usize).step_by(1 << 18) {
            let n = (class.count as usize - j).min(1 << 18);
            let bytes = &mut buf[..n * 4];
            read_exact(r, bytes, what)?;
            for (k, b) in (j..j + n).zip(bytes.chunks_exact(4)) {
                let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                bad.see(bits, at);
                at += 1;
                out[start + k * stride].store(bits, Relaxed);
            }
        }
    }
    Ok(bad)
}

/// Read and drop exactly `len` bytes (hashed on the way, like everything else).
fn skip(r: &mut dyn Read, len: u64, what: &'static str) -> Result<(), Fault> {
    let got = std::io::copy(&mut r.take(len), &mut std::io::sink())
        .map_err(|source| Fault::Read { what, source })?;
    if got < len {
        return Err(Fault::Truncated(what));
    }
    Ok(())
}

/// What a load found.
#[derive(Debug, Clone)]
pub struct LoadInfo {
    /// SHA-256 of the file as stored (what its sidecar says; results name models by it).
    pub sha256: String,
    pub format: Format,
    pub checked_by: CheckedBy,
    pub has_coherence: bool,
    /// NaN and infinite weights (accumulators are not counted).
    pub non_finite: NonFinite,
}

impl LoadInfo {
    /// The bytes were checked (embedded checksum or sidecar), not taken on trust.
    pub fn verified(&self) -> bool {
        self.checked_by != CheckedBy::Nothing
    }
}

/// What one pass over a file established, besides what the payload reader returned.
struct Passed {
    header: Header,
    sha256: String,
    checked_by: CheckedBy,
}

/// Open a model file to stream it: a regular file only ([`fileio::open`]; opening a FIFO or
/// a device could block, or never end), refused as [`Fault::NotAFile`].
fn open_model(path: &Path) -> Result<std::fs::File, Fault> {
    fileio::open(path).map_err(|e| match e {
        fileio::FileError::NotRegular { .. } => Fault::NotAFile,
        e => Fault::Io(e.into_io()),
    })
}

/// Stream the model file at `path` once: the header (checked), then `payload`, which must
/// consume exactly [`Header::payload_bytes`], then the embedded checksum and the end of the
/// file; the file's SHA-256 is computed on the way and checked against its sidecar. A
/// `D7NTUP01` file without a sidecar is refused right after its header unless
/// `trust_unverified`.
fn stream<T>(
    path: &Path,
    trust_unverified: bool,
    payload: impl FnOnce(&mut dyn Read, &Header) -> Result<T, Fault>,
) -> Result<(T, Passed), Fault> {
    // never open a FIFO or a device (it could block, or never end); a model may be many GB,
    // so it is streamed from the opened file, not read whole
    let f = open_model(path)?;
    let stated = read_sidecar(path);
    let zst = is_zst(path);
    // Compressed, the file's hash and the stream's checksum cover different bytes; plain,
    // the stream is the file and one hash serves both.
    let mut file = HashReader {
        inner: BufReader::with_capacity(1 << 22, f),
        hasher: zst.then(Sha256::new),
    };
    let (value, header, stream_sha) = {
        let inner: Box<dyn Read + '_> = if zst {
            Box::new(zstd::Decoder::new(&mut file)?)
        } else {
            Box::new(&mut file)
        };
        let mut r = HashReader {
            inner,
            hasher: Some(Sha256::new()),
        };
        let header = read_header(&mut r)?;
        if header.format == Format::V1 && stated.is_none() && !trust_unverified {
            return Err(Fault::Unverifiable {
                sidecar: sidecar(path),
            });
        }
        let value = payload(&mut r, &header)?;
        if header.format == Format::V2 {
            let actual = r.hasher.as_ref().expect("hashing").clone().finalize();
            let mut stored = [0u8; CHECKSUM_BYTES];
            read_exact(&mut r, &mut stored, "checksum")?;
            if stored[..] != actual[..] {
                return Err(Fault::Checksum {
                    stored: hex(&stored),
                    actual: hex(&actual),
                });
            }
        }
        let mut more = [0u8; 1 << 12];
        let extra = read_up_to(&mut r, &mut more, "end of the file")?;
        if extra > 0 {
            return Err(Fault::Corrupt(format!(
                "{}{extra} unexpected trailing bytes",
                if extra == more.len() { "at least " } else { "" }
            )));
        }
        let stream_sha = hex(&r.hasher.take().expect("hashing").finalize());
        (value, header, stream_sha)
    };
    let sha256 = match file.hasher.take() {
        Some(mut h) => {
            // whatever the decoder left unread (nothing, for a well-formed file)
            let mut rest = Vec::new();
            file.inner
                .read_to_end(&mut rest)
                .map_err(|source| Fault::Read {
                    what: "end of the file",
                    source,
                })?;
            h.update(&rest);
            hex(&h.finalize())
        }
        None => stream_sha,
    };
    let checked_by = match (&stated, header.format) {
        (Some(s), _) if *s != sha256 => {
            return Err(Fault::Sidecar {
                sidecar: sidecar(path),
                stored: s.clone(),
                actual: sha256,
            });
        }
        (Some(_), Format::V2 | Format::Pack) => CheckedBy::EmbeddedAndSidecar,
        (None, Format::V2 | Format::Pack) => CheckedBy::Embedded,
        (Some(_), Format::V1) => CheckedBy::Sidecar,
        (None, Format::V1) => CheckedBy::Nothing,
    };
    Ok((
        value,
        Passed {
            header,
            sha256,
            checked_by,
        },
    ))
}

/// Read a model's tables, checked; `trainable` also reads (or, if absent, creates zeroed)
/// accumulators. Non-finite weights are counted, not refused.
fn read_tables(path: &Path, trainable: bool) -> Result<(Tables, LoadInfo), Error> {
    let read = |r: &mut dyn Read, h: &Header| -> Result<_, Fault> {
        check_memory(&h.layout, trainable)?;
        let zero = || crate::tables::filled(h.entries, 0.0);
        let weights = zero();
        let non_finite = read_f32s(r, &h.layout, &weights, "weights")?;
        let coherence = if trainable {
            let (e, a) = (zero(), zero());
            if h.has_coherence {
                read_f32s(r, &h.layout, &e, "E accumulators")?;
                read_f32s(r, &h.layout, &a, "A accumulators")?;
            }
            Some((e, a))
        } else {
            if h.has_coherence {
                skip(r, 8 * h.entries, "accumulators")?;
            }
            None
        };
        Ok((weights, coherence, non_finite))
    };
    let ((weights, coherence, non_finite), p) =
        stream(path, false, read).map_err(|f| f.at(path))?;
    let info = LoadInfo {
        sha256: p.sha256,
        format: p.header.format,
        checked_by: p.checked_by,
        has_coherence: p.header.has_coherence,
        non_finite,
    };
    let tables = Tables {
        layout: p.header.layout,
        weights,
        coherence,
    };
    Ok((tables, info))
}

/// Load a model, verified (embedded checksum, or a `D7NTUP01` file's sidecar). `trainable`
/// also reads (or, if absent, creates zeroed) accumulators. A model with NaN or infinite
/// weights is refused: it can be neither played nor trained ([`inspect`] reads it).
pub fn load(path: &Path, trainable: bool) -> Result<(Tables, LoadInfo), Error> {
    if crate::pack::is_pack(path) {
        return load_pack(path, trainable);
    }
    let (tables, info) = read_tables(path, trainable)?;
    let bad = info.non_finite;
    if bad.count() > 0 {
        return Err(Error::Model {
            path: path.to_owned(),
            message: format!(
                "{} NaN and {} infinite weights (the first at entry {}): a model with non-finite weights cannot be played, trained or edited (`drop7 model info` counts them)",
                bad.nan,
                bad.infinite,
                bad.first.unwrap_or(0)
            ),
        });
    }
    Ok((tables, info))
}

/// Load a model's weights for inspection: verified like [`load`], but NaN and infinite
/// weights are only counted (in [`LoadInfo::non_finite`]).
pub fn inspect(path: &Path) -> Result<(Tables, LoadInfo), Error> {
    if crate::pack::is_pack(path) {
        return load_pack(path, false);
    }
    read_tables(path, false)
}

/// A packed model as tables (its values finite by construction); `trainable` adds zeroed
/// accumulators, so training can continue from a committed pack.
fn load_pack(path: &Path, trainable: bool) -> Result<(Tables, LoadInfo), Error> {
    let (mut tables, p) = crate::pack::unpack(path)?;
    if trainable {
        check_memory(&tables.layout, true)?;
        let zero = || crate::tables::filled(tables.layout.total, 0.0);
        tables.coherence = Some((zero(), zero()));
    }
    let info = LoadInfo {
        sha256: p.sha256,
        format: Format::Pack,
        checked_by: CheckedBy::Embedded,
        has_coherence: false,
        non_finite: Default::default(),
    };
    Ok((tables, info))
}

/// What [`upgrade`] did.
#[derive(Debug, Clone)]
pub struct Upgraded {
    /// The source's format and what vouched for it.
    pub from: Format,
    pub checked_by: CheckedBy,
    pub layout: Layout,
    /// SHA-256 of the file written (also in its sidecar).
    pub sha256: String,
}

/// Rewrite the model `src` as a `D7NTUP02` file `dst` (compressed if `dst` ends in `.zst`),
/// streaming: header and payload are copied byte for byte, so the weights (and accumulators)
/// are identical, and memory stays a few megabytes whatever the size. The source is verified
/// as [`load`] would (a `D7NTUP01` file without a sidecar only with `trust_unverified`)
/// before `dst` appears; `dst` may be `src`.
pub fn upgrade(src: &Path, dst: &Path, trust_unverified: bool) -> Result<Upgraded, Error> {
    if let Some(dir) = dst.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    let mut fault = None;
    let mut done = None;
    let written = evidence::atomic_write_with(dst, |f| {
        let buffered = BufWriter::with_capacity(1 << 22, f);
        let copy = |w: &mut dyn Write| {
            stream(src, trust_unverified, |r, h| {
                let mut cw = HashWriter {
                    inner: w,
                    hasher: Sha256::new(),
                };
                write_header(&mut cw, &h.layout, h.has_coherence).map_err(Fault::Write)?;
                let mut buf = vec![0u8; 1 << 20];
                let mut left = h.payload_bytes();
                while left > 0 {
                    let n = left.min(buf.len() as u64) as usize;
                    read_exact(r, &mut buf[..n], "payload")?;
                    cw.write_all(&buf[..n]).map_err(Fault::Write)?;
                    left -= n as u64;
                }
                let digest = cw.hasher.clone().finalize();
                cw.write_all(&digest).map_err(Fault::Write)
            })
        };
        let result = if is_zst(dst) {
            let mut fw = HashWriter {
                inner: buffered,
                hasher: Sha256::new(),
            };
            let mut enc = zstd::Encoder::new(&mut fw, 3)?;
            let r = copy(&mut enc);
            if r.is_ok() {
                enc.finish()?;
            }
            fw.flush()?;
            r.map(|(_, p)| (p, hex(&fw.hasher.finalize())))
        } else {
            let mut fw = HashWriter {
                inner: buffered,
                hasher: Sha256::new(),
            };
            let r = copy(&mut fw);
            fw.flush()?;
            r.map(|(_, p)| (p, hex(&fw.hasher.finalize())))
        };
        match result {
            Ok(p) => {
                done = Some(p);
                Ok(())
            }
            Err(e) => {
                fault = Some(e);
                // abandon the temporary file
                Err(std::io::Error::other("the source was refused"))
            }
        }
    });
    match fault {
        Some(Fault::Write(source)) => {
            return Err(Error::Io {
                path: dst.to_owned(),
                source,
            });
        }
        Some(f) => return Err(f.at(src)),
        None => {}
    }
    written?;
    let (passed, sha256) = done.expect("written");
    write_sidecar(dst, &sha256)?;
    Ok(Upgraded {
        from: passed.header.format,
        checked_by: passed.checked_by,
        layout: passed.header.layout,
        sha256,
    })
}

/// Read only the header (cheap; nothing is verified).
pub fn read_info(path: &Path) -> Result<Header, Error> {
    let f = open_model(path).map_err(|f| f.at(path))?;
    let mut file = BufReader::new(f);
    let header = |file: &mut BufReader<std::fs::File>| -> Result<Header, Fault> {
        let mut r: Box<dyn Read> = if is_zst(path) {
            Box::new(zstd::Decoder::new(file)?)
        } else {
            Box::new(file)
        };
        read_header(&mut r)
    };
    header(&mut file).map_err(|f| f.at(path))
}

/// Statistics of a table set (for `model info`). NaN and infinite weights are counted, and
/// `mean`, `min` and `max` are over the finite weights (null when there are none).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub layout: String,
    pub entries: u64,
    pub active: usize,
    /// Entries still bit-equal to the optimistic initial value (never updated).
    pub untouched: u64,
    pub finite: u64,
    pub nan: u64,
    pub infinite: u64,
    pub mean: Option<f64>,
    pub min: Option<f32>,
    pub max: Option<f32>,
}

/// `drop7 model info`: what a model file holds, after its bytes are checked, as JSON, with
/// the problems a user must be told of (non-finite weights: refused for play, training and
/// edits; the old format without its own checksum).
pub fn info_report(path: &Path) -> Result<(serde_json::Value, Vec<String>), Error> {
    let (t, info) = inspect(path)?;
    let bad = info.non_finite;
    let mut problems = Vec::new();
    if bad.count() > 0 {
        problems.push(format!(
            "{} NaN and {} infinite weights (the first at entry {}): refused for play, training and edits",
            bad.nan,
            bad.infinite,
            bad.first.unwrap_or(0)
        ));
    }
    if info.format == Format::V1 {
        problems.push(
            "D7NTUP01 (no checksum of its own; read because its .sha256 sidecar verifies it): `drop7 model upgrade` rewrites it"
                .into(),
        );
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let j = serde_json::json!({"file": name, "format": info.format, "sha256": info.sha256,
        "verified": info.verified(), "checkedBy": info.checked_by.to_string(),
        "playable": bad.count() == 0, "problems": problems,
        "hasCoherence": info.has_coherence, "stats": stats(&t)});
    Ok((j, problems))
}

pub fn stats(t: &Tables) -> Stats {
    let init = t.initial_weight().to_bits();
    let (mut untouched, mut finite, mut sum) = (0u64, 0u64, 0f64);
    let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
    let mut bad = NonFinite::default();
    for (i, w) in t.weights.iter().enumerate() {
        let b = w.load(Relaxed);
        untouched += (b == init) as u64;
        let v = f32::from_bits(b);
        if v.is_finite() {
            finite += 1;
            sum += v as f64;
            min = min.min(v);
            max = max.max(v);
        } else {
            bad.see(b, i as u64);
        }
    }
    let some = finite > 0;
    Stats {
        layout: t.layout.spec(),
        entries: t.layout.total,
        active: t.layout.active(),
        untouched,
        finite,
        nan: bad.nan,
        infinite: bad.infinite,
        mean: some.then(|| sum / finite as f64),
        min: some.then_some(min),
        max: some.then_some(max),
    }
}

/// "Zeroed" edit: every never-updated entry (bit-equal to the initial value) becomes 0.
/// Returns how many entries changed.
pub fn zero_untouched(t: &Tables) -> u64 {
    scale_untouched(t, 0.0)
}

/// Price unfamiliar patterns between zero and a fresh board's value: every never-updated
/// entry (bit-equal to the initial value) becomes `f` × the initial value. `f = 0` is the
/// zeroed edit, `f = 1` changes nothing. Why a dial rather than the two ends: the reference
/// found zero worth +29k at depth 3 and a loss at depth 4 (a deeper search reads many more
/// unfamiliar boards), so the right price depends on the search depth and is chosen per
/// depth on the validation block. Returns how many entries changed (0 when `f = 1`).
pub fn scale_untouched(t: &Tables, f: f32) -> u64 {
    let init = t.initial_weight();
    let (from, to) = (init.to_bits(), (init * f).to_bits());
    if from == to {
        return 0;
    }
    let mut n = 0;
    for w in &t.weights {
        if w.load(Relaxed) == from {
            w.store(to, Relaxed);
            n += 1;
        }
    }
    n
}

/// The factor `f` of [`scale_untouched`] as a command line writes it: a number from 0 to 1
/// (spaces around it ignored).
pub fn untouched_scale(s: &str) -> Result<f32, Error> {
    s.trim()
        .parse::<f32>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
        .ok_or_else(|| Error::UntouchedScale(s.to_owned()))
}

/// "Class-mean" edit: within each table (one placement, one phase, one fill bucket) every
/// never-updated entry becomes the mean of that table's updated entries (left alone if the
/// table has none). Returns how many entries changed.
pub fn class_mean(t: &Tables) -> u64 {
    let init = t.initial_weight().to_bits();
    let mut changed = 0;
    for class in t.layout.classes() {
        let entries =
            || (0..class.count).map(|j| &t.weights[(class.start + j * class.stride) as usize]);
        let (mut sum, mut n) = (0f64, 0u64);
        for w in entries() {
            let b = w.load(Relaxed);
            if b != init {
                sum += f32::from_bits(b) as f64;
                n += 1;
            }
        }
        if n == 0 {
            continue;
        }
        let m = ((sum / n as f64) as f32).to_bits();
        for w in entries() {
            if w.load(Relaxed) == init {
                w.store(m, Relaxed);
                changed += 1;
            }
        }
    }
    changed
}

/// Weight-space average of two models of one layout, written into `a`: every entry becomes
/// `(a + b) / 2`, summed in f64 so that two large finite weights cannot overflow to infinity
/// (halving is exact, so the result is rounded once either way). Why this is the two models'
/// ensemble at no cost in play: a state's value is the sum of its active entries, so the
/// averaged tables value every state at the mean of the two models' values (to f32 rounding),
/// with one model's memory and one model's time a leaf. An entry only one model updated
/// averages with the other's value for it (its starting value unless edited). Returns how
/// many entries changed; refuses two layouts.
pub fn average_into(a: &Tables, b: &Tables) -> Result<u64, Error> {
    if a.layout != b.layout {
        return Err(Error::LayoutsDiffer(
            a.layout.to_string(),
            b.layout.to_string(),
        ));
    }
    let mut changed = 0;
    for (x, y) in a.weights.iter().zip(&b.weights) {
        let (p, q) = (x.load(Relaxed), y.load(Relaxed));
        if p != q {
            let m = (f32::from_bits(p) as f64 + f32::from_bits(q) as f64) / 2.0;
            let m = (m as f32).to_bits();
            // neighbouring values (or +0 and -0) can round back to `p`: not a change
            if m != p {
                x.store(m, Relaxed);
                changed += 1;
            }
        }
    }
    Ok(changed)
}

/// [`average_into`] for two files: reads both and returns the average and how many entries
/// changed. Why the headers are compared first: a missing file, a file that is not a model or
/// two layouts are refused before gigabytes of weights are read (a pack's layout is known only
/// once it is read, so a pair with a pack is compared after loading). Both models are in memory
/// at once while they are averaged.
pub fn average_files(first: &Path, second: &Path) -> Result<(Tables, u64), Error> {
    let mut layouts = Vec::with_capacity(2);
    for f in [first, second] {
        if !crate::pack::is_pack(f) {
            layouts.push(read_info(f)?.layout.to_string());
        }
    }
    if let [a, b] = &layouts[..]
        && a != b
    {
        return Err(Error::LayoutsDiffer(a.clone(), b.clone()));
    }
    let (a, _) = load(first, false)?;
    let (b, _) = load(second, false)?;
    let changed = average_into(&a, &b)?;
    Ok((a, changed))
}

/// Promote to fill buckets: a new table set with `fill` whose every bucket starts as a copy
/// of the source weights (so the promoted model plays exactly like the source until trained).
pub fn promote(t: &Tables, fill: crate::layout::Fill, trainable: bool) -> Result<Tables, Error> {
    if t.layout.fill != crate::layout::Fill::None {
        return Err(Error::AlreadyFilled(t.layout.to_string()));
    }
    let layout = t.layout.with_fill(fill);
    check_memory(&layout, trainable)?;
    let n = t.layout.total as usize;
    // the same huge-page backed storage as fresh or loaded tables
    let weights = crate::tables::filled(layout.total, 0.0);
    for (i, w) in weights.iter().enumerate() {
        w.store(t.weights[i % n].load(Relaxed), Relaxed);
    }
    let coherence = trainable.then(|| {
        let z = || crate::tables::filled(layout.total, 0.0);
        (z(), z())
    });
    Ok(Tables {
        layout,
        weights,
        coherence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::OPTIMISTIC_TOTAL;

    /// The untouched-entry factor: 0 to 1 inclusive, anything else (NaN, words, 1.5) refused
    /// with the message `drop7 model edit --untouched-scale` prints.
    #[test]
    fn untouched_scale_is_a_number_from_0_to_1() {
        assert_eq!(untouched_scale("0").unwrap(), 0.0);
        assert_eq!(untouched_scale(" 0.25 ").unwrap(), 0.25);
        assert_eq!(untouched_scale("1").unwrap(), 1.0);
        for bad in ["1.5", "-0.1", "NaN", "half", ""] {
            assert_eq!(
                untouched_scale(bad).unwrap_err().to_string(),
                format!("`{bad}` is not a number from 0 to 1 (0 = zero, 1 = unchanged)")
            );
        }
    }

    /// A fresh directory removed on drop, and `name` in it.
    fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::Builder::new()
            .prefix("ntuple-model-")
            .tempdir()
            .unwrap();
        let p = d.path().join(name);
        (d, p)
    }

    /// Fresh optimistic tables of layout `spec`.
    fn fresh(spec: &str, trainable: bool) -> Tables {
        Tables::new(Layout::parse(spec).unwrap(), OPTIMISTIC_TOTAL, trainable).unwrap()
    }

    fn small() -> Tables {
        let t = fresh("win23,phase=none", true);
        for i in [0u64, 5, 123_456, 29_999_999] {
            t.update(&[i], 3.0, 1.0);
        }
        t
    }

    /// [`small`] without accumulators (a third of the memory), for tests of files.
    fn small_frozen() -> Tables {
        let t = fresh("win23,phase=none", false);
        for (i, v) in [
            (0u64, 1.5f32),
            (5, -2.25),
            (123_456, 3.0),
            (29_999_999, 0.5),
        ] {
            t.set_weight(i, v);
        }
        t
    }

    fn same(a: &Tables, b: &Tables) -> bool {
        a.layout == b.layout
            && a.weights
                .iter()
                .zip(&b.weights)
                .all(|(x, y)| x.load(Relaxed) == y.load(Relaxed))
    }

    #[test]
    fn round_trip_plain_and_zstd_with_accumulators() {
        let _heavy = crate::heavy_test();
        let t = small();
        for name in ["m.bin", "m.bin.zst"] {
            let (_dir, p) = tmp(name);
            let hash = save(&t, &p, true).unwrap();
            let (back, info) = load(&p, true).unwrap();
            assert!(same(&t, &back), "{name}");
            assert_eq!(info.sha256, hash);
            assert_eq!(info.checked_by, CheckedBy::EmbeddedAndSidecar);
            assert_eq!(info.format, Format::V2);
            let (e1, _) = t.coherence.as_ref().unwrap();
            let (e2, _) = back.coherence.as_ref().unwrap();
            assert_eq!(e1[5].load(Relaxed), e2[5].load(Relaxed));
            // frozen load skips the accumulators
            let (frozen, _) = load(&p, false).unwrap();
            assert!(frozen.coherence.is_none() && same(&t, &frozen));
        }
    }

    /// Files keep docs/design/drop7-SPEC.md §7's phase-major order whatever the memory order: an entry written
    /// through its storage index sits at its spec number in the file, and a conditioned
    /// layout round-trips with its accumulators.
    #[test]
    fn files_are_in_spec_order() {
        let _heavy = crate::heavy_test_alone();
        let t = fresh("win23,phase=all", true);
        let l = &t.layout;
        // table 2, phase 3, pattern 4,321 — numbered 2·5·10⁶ + 3·10⁶ + 4,321 by the spec
        let spec = 2 * 5_000_000 + 3 * 1_000_000 + 4_321u64;
        t.set_weight(l.storage_index(spec), 7.5);
        t.update(&[l.storage_index(spec + 1)], 2.0, 1.0);
        let (_dir, p) = tmp("order.bin");
        save(&t, &p, true).unwrap();
        // read single entries at their offsets (the file is 1.8 GB: never read it whole)
        let file = std::fs::File::open(&p).unwrap();
        let header = 8 + 4 + "win23,phase=all".len() as u64 + 8 + 1;
        let at = |k: u64| {
            use std::os::unix::fs::FileExt;
            let mut b = [0u8; 4];
            file.read_exact_at(&mut b, header + 4 * k).unwrap();
            f32::from_le_bytes(b)
        };
        assert_eq!(at(spec), 7.5);
        assert_eq!(at(spec + 1), t.weight(l.storage_index(spec + 1)));
        assert_ne!(at(spec + 1), t.initial_weight());
        assert_eq!(at(spec + 2), t.initial_weight());
        // the E accumulator block follows the weights, also in spec order
        let e = |k: u64| at(l.total + k);
        assert_eq!(e(spec + 1), 2.0 - (t.initial_weight()));
        // round trip with accumulators, one table set in memory at a time (1.8 GB each)
        // a position-dependent fold, not SHA-256: 450 M words twice, and any moved, lost or
        // changed word changes it (the file's own checksum is tested elsewhere)
        let digest = |t: &Tables| {
            let (e, a) = t.coherence.as_ref().unwrap();
            let words = t.weights.iter().chain(e.iter()).chain(a.iter());
            words.fold(0u64, |h, w| {
                (h.rotate_left(5) ^ u64::from(w.load(Relaxed))).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            })
        };
        let before = (t.layout.clone(), digest(&t));
        drop(t);
        let (back, _) = load(&p, true).unwrap();
        assert_eq!((back.layout.clone(), digest(&back)), before);
    }

    /// The bytes of a saved model and the offset of its first weight.
    fn saved(t: &Tables, p: &Path) -> (Vec<u8>, usize) {
        save(t, p, false).unwrap();
        let header = 8 + 4 + t.layout.spec().len() + 8 + 1;
        (std::fs::read(p).unwrap(), header)
    }

    fn refused(p: &Path) -> String {
        let e = load(p, false).err().expect("refused").to_string();
        assert!(e.contains(&p.display().to_string()), "names the file: {e}");
        e
    }

    /// The file carries its own checksum: a byte changed in the middle of the weights is
    /// refused with no sidecar beside it, and so are truncations anywhere, trailing bytes,
    /// a stale sidecar and foreign files.
    #[test]
    fn corruption_and_truncation_are_refused_without_a_sidecar() {
        let _heavy = crate::heavy_test();
        let t = small_frozen();
        let (_dir, p) = tmp("c.bin");
        let (mut bytes, header) = saved(&t, &p);
        assert_eq!(
            bytes.len(),
            header + 4 * t.layout.total as usize + CHECKSUM_BYTES
        );
        // intact, with and without its sidecar
        assert_eq!(
            load(&p, false).unwrap().1.checked_by,
            CheckedBy::EmbeddedAndSidecar
        );
        std::fs::remove_file(sidecar(&p)).unwrap();
        let (back, info) = load(&p, false).unwrap();
        assert_eq!(info.checked_by, CheckedBy::Embedded);
        assert!(info.verified() && same(&t, &back));
        drop(back);
        // one bit of one weight in the middle
        let k = header + 4 * (t.layout.total as usize / 2) + 1;
        bytes[k] ^= 0x10;
        std::fs::write(&p, &bytes).unwrap();
        let e = refused(&p);
        assert!(e.contains("embedded SHA-256"), "{e}");
        assert!(inspect(&p).is_err());
        bytes[k] ^= 0x10;
        // truncated inside the header, the weights and the checksum; trailing bytes
        for (cut, says) in [
            (5, "inside the magic"),
            (14, "inside the layout spec"),
            (header + 1000, "inside the weights"),
            (bytes.len() - 1, "inside the checksum"),
        ] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let e = refused(&p);
            assert!(e.contains("truncated") && e.contains(says), "{cut}: {e}");
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"tail");
        std::fs::write(&p, &longer).unwrap();
        assert!(refused(&p).contains("4 unexpected trailing bytes"));
        // the checksum itself damaged
        let n = bytes.len();
        bytes[n - 3] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert!(refused(&p).contains("embedded SHA-256"));
        bytes[n - 3] ^= 1;
        // intact file, stale sidecar (another model's hash): refused
        std::fs::write(&p, &bytes).unwrap();
        std::fs::write(sidecar(&p), format!("{}  c.bin\n", "0".repeat(64))).unwrap();
        assert!(refused(&p).contains("SHA-256 mismatch"));
        std::fs::remove_file(sidecar(&p)).unwrap();
        for not_a_file in [Path::new("/dev/zero"), _dir.path()] {
            let e = load(not_a_file, false).err().expect("refused").to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        for (junk, says) in [
            (&b"NOTAMODEL"[..], "not a D7NTUP model"),
            (b"hello", "not a D7NTUP model"),
            (b"", "inside the magic"),
            (b"D7NTUP", "inside the magic"),
            (b"D7NTUP09xxxxxxxxxxxxxx", "reads D7NTUP01 and D7NTUP02"),
        ] {
            std::fs::write(&p, junk).unwrap();
            let e = refused(&p);
            assert!(e.contains(says), "{junk:?}: {e}");
        }
    }

    /// Compressed files: the checksum covers the uncompressed stream, so a change that
    /// decompresses cleanly is still caught.
    #[test]
    fn compressed_files_carry_the_checksum_inside() {
        let _heavy = crate::heavy_test();
        let t = small_frozen();
        let (_dir, p) = tmp("z.bin.zst");
        save(&t, &p, false).unwrap();
        std::fs::remove_file(sidecar(&p)).unwrap();
        let stream = zstd::decode_all(&std::fs::read(&p).unwrap()[..]).unwrap();
        assert_eq!(&stream[..8], MAGIC);
        let (back, info) = load(&p, false).unwrap();
        assert!(same(&t, &back) && info.checked_by == CheckedBy::Embedded);
        drop(back);
        let mut changed = stream.clone();
        let k = changed.len() / 2;
        changed[k] ^= 4;
        std::fs::write(&p, zstd::encode_all(&changed[..], 3).unwrap()).unwrap();
        assert!(refused(&p).contains("embedded SHA-256"));
        let cut = &stream[..stream.len() - 10];
        std::fs::write(&p, zstd::encode_all(cut, 3).unwrap()).unwrap();
        assert!(refused(&p).contains("inside the checksum"));
    }

    /// `D7NTUP01` files: read when their sidecar verifies them, refused without one (with
    /// the way out), and `upgrade` writes exactly the file `save` writes for the same tables.
    #[test]
    fn old_format_needs_its_sidecar_and_upgrades_bit_for_bit() {
        let _heavy = crate::heavy_test();
        let t = small_frozen();
        let (dir, p2) = tmp("new.bin");
        let (bytes, _) = saved(&t, &p2);
        // the same tables as D7NTUP01: the other magic, no checksum
        let mut v1 = bytes[..bytes.len() - CHECKSUM_BYTES].to_vec();
        v1[..8].copy_from_slice(MAGIC_V1);
        let p1 = dir.path().join("old.bin");
        std::fs::write(&p1, &v1).unwrap();
        let e = refused(&p1);
        assert!(
            e.contains("D7NTUP01")
                && e.contains("drop7 model upgrade")
                && e.contains("--unverified"),
            "{e}"
        );
        // with its sidecar it loads, as D7NTUP01 verified by the sidecar
        let v1_sha = hex(&Sha256::digest(&v1));
        std::fs::write(sidecar(&p1), format!("{v1_sha}  old.bin\n")).unwrap();
        let (back, info) = load(&p1, false).unwrap();
        assert_eq!(
            (info.format, info.checked_by),
            (Format::V1, CheckedBy::Sidecar)
        );
        assert_eq!(info.sha256, v1_sha);
        assert!(same(&t, &back));
        drop(back);
        // corrupted, the sidecar catches it
        let mut bad = v1.clone();
        bad[v1.len() / 2] ^= 1;
        std::fs::write(&p1, &bad).unwrap();
        assert!(refused(&p1).contains("SHA-256 mismatch"));
        assert!(upgrade(&p1, &dir.path().join("x.bin"), true).is_err());
        assert!(!dir.path().join("x.bin").exists());
        std::fs::write(&p1, &v1).unwrap();
        // upgrade: verified by the sidecar, byte-identical to a fresh save
        let up = dir.path().join("up.bin");
        let u = upgrade(&p1, &up, false).unwrap();
        assert_eq!((u.from, u.checked_by), (Format::V1, CheckedBy::Sidecar));
        assert_eq!(std::fs::read(&up).unwrap(), bytes);
        assert_eq!(u.sha256, hex(&Sha256::digest(&bytes)));
        // without a sidecar only when trusted; in place
        std::fs::remove_file(sidecar(&p1)).unwrap();
        assert!(upgrade(&p1, &p1, false).is_err());
        assert_eq!(
            std::fs::read(&p1).unwrap(),
            v1,
            "a refused upgrade leaves the file"
        );
        let u = upgrade(&p1, &p1, true).unwrap();
        assert_eq!(u.checked_by, CheckedBy::Nothing);
        assert_eq!(std::fs::read(&p1).unwrap(), bytes);
        assert_eq!(
            load(&p1, false).unwrap().1.checked_by,
            CheckedBy::EmbeddedAndSidecar
        );
        // and to a compressed file
        let z = dir.path().join("up.bin.zst");
        upgrade(&p2, &z, false).unwrap();
        assert!(same(&t, &load(&z, false).unwrap().0));
    }

    /// Accumulators are covered by the checksum too, and skipped (but hashed) by a frozen
    /// load.
    #[test]
    fn checkpoints_with_accumulators_are_checked_whole() {
        let _heavy = crate::heavy_test();
        let t = small();
        let (_dir, p) = tmp("ck.bin");
        save(&t, &p, true).unwrap();
        std::fs::remove_file(sidecar(&p)).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        let n = bytes.len();
        // a byte in the A accumulators, far past the weights
        bytes[n - CHECKSUM_BYTES - 4 * 1000] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert!(refused(&p).contains("embedded SHA-256"));
        assert!(load(&p, true).is_err());
    }

    /// NaN and infinite weights: refused by `load`, counted by `inspect` and `stats`, whose
    /// mean, min and max are over the finite weights only.
    #[test]
    fn non_finite_weights_are_counted_and_refused() {
        let _heavy = crate::heavy_test();
        let t = small_frozen();
        t.set_weight(7, f32::NAN);
        t.set_weight(8, f32::INFINITY);
        t.set_weight(9, f32::NEG_INFINITY);
        t.set_weight(10, -5.0);
        let (_dir, p) = tmp("nan.bin");
        save(&t, &p, false).unwrap();
        let e = refused(&p);
        assert!(
            e.contains("1 NaN and 2 infinite weights (the first at entry 7)"),
            "{e}"
        );
        let (back, info) = inspect(&p).unwrap();
        assert_eq!(
            info.non_finite,
            NonFinite {
                nan: 1,
                infinite: 2,
                first: Some(7)
            }
        );
        let s = stats(&back);
        assert_eq!((s.nan, s.infinite, s.finite), (1, 2, t.layout.total - 3));
        assert_eq!(s.min, Some(-5.0));
        assert!(s.mean.unwrap().is_finite() && s.max.unwrap().is_finite());
        // all NaN: no finite statistics at all
        for w in &back.weights {
            w.store(f32::NAN.to_bits(), Relaxed);
        }
        let s = stats(&back);
        assert_eq!((s.nan, s.finite, s.untouched), (t.layout.total, 0, 0));
        assert_eq!((s.mean, s.min, s.max), (None, None, None));
        let j = serde_json::to_value(&s).unwrap();
        assert!(j["mean"].is_null() && j["nan"] == t.layout.total);
    }

    #[test]
    fn averaging_is_the_mean_of_the_two_models() {
        let _heavy = crate::heavy_test();
        let a = small_frozen(); // entries 0, 5, 123,456 and 29,999,999 set, the rest at start
        let b = fresh("win23,phase=none", false);
        let init = b.initial_weight();
        b.set_weight(5, 0.25); // both set: the mean of -2.25 and 0.25
        b.set_weight(7, 2.0); // only b set: the mean with a's starting value
        b.set_weight(123_456, 3.0); // both set to the same value: no change
        let big = 2f32.powi(127); // a sum in f32 would overflow to infinity
        a.set_weight(9, big);
        b.set_weight(9, 1.5 * big);
        let s = [0u64, 5, 7, 8];
        let (va, vb) = (a.value(&s), b.value(&s));
        assert_eq!(average_into(&a, &b).unwrap(), 5);
        assert_eq!(a.weight(0), (1.5 + init) / 2.0);
        assert_eq!(a.weight(5), -1.0);
        assert_eq!(a.weight(7), (2.0 + init) / 2.0);
        assert_eq!(a.weight(9), 1.25 * big);
        assert_eq!(a.weight(123_456), 3.0);
        assert_eq!(a.weight(29_999_999), (0.5 + init) / 2.0);
        assert_eq!(a.weight(8), init);
        assert_eq!((b.weight(5), b.weight(9)), (0.25, 1.5 * big)); // b is left as it was
        // a state's value is the mean of the two models' values
        assert!((a.value(&s) - (va + vb) / 2.0).abs() < 1e-5);
        let other = fresh("win32,phase=none", false);
        let e = average_into(&a, &other).unwrap_err().to_string();
        assert!(e.contains("win32") && e.contains("win23"), "{e}");
    }

    /// Two layouts are refused from the headers alone: the second file below is only a header
    /// and 16 bytes of weights, so reading its weights would fail as a truncation instead.
    #[test]
    fn average_files_compares_headers_before_reading_weights() {
        let _heavy = crate::heavy_test();
        let a = small_frozen();
        let (dir, pa) = tmp("a.bin");
        save(&a, &pa, false).unwrap();
        let other = Layout::parse("win32,phase=none").unwrap();
        let spec = other.to_string();
        let mut bytes = MAGIC.to_vec();
        bytes.extend((spec.len() as u32).to_le_bytes());
        bytes.extend(spec.as_bytes());
        bytes.extend(other.total.to_le_bytes());
        bytes.push(0);
        bytes.extend([0u8; 16]);
        let pb = dir.path().join("b.bin");
        std::fs::write(&pb, &bytes).unwrap();
        let e = average_files(&pa, &pb).err().expect("two layouts");
        assert!(matches!(e, Error::LayoutsDiffer(..)), "{e}");
        // the same header read past: the truncation is what refuses it
        let e = load(&pb, false).err().expect("a truncation").to_string();
        assert!(e.contains("truncated"), "{e}");
        // a missing file is named
        let missing = dir.path().join("none.bin");
        let e = average_files(&pa, &missing).err().expect("a missing file");
        let e = e.to_string();
        assert!(e.contains("none.bin"), "{e}");
        // a model averaged with itself changes nothing
        let (m, changed) = average_files(&pa, &pa).unwrap();
        assert_eq!(changed, 0);
        assert!(same(&a, &m));
    }

    #[test]
    fn edits() {
        let _heavy = crate::heavy_test_alone();
        let t = small();
        let s = stats(&t);
        assert_eq!(s.untouched, t.layout.total - 4);
        let c = Tables::new(t.layout.clone(), OPTIMISTIC_TOTAL, false).unwrap();
        for (a, b) in t.weights.iter().zip(&c.weights) {
            b.store(a.load(Relaxed), Relaxed);
        }
        // window table 0 holds entries 0, 5 and 123,456, table 29 entry 29,999,999; the other
        // entries of those two tables take their table's mean, the 28 untouched tables stay.
        assert_eq!(class_mean(&c), 2 * 1_000_000 - 4);
        let m = (t.weight(0) as f64 + t.weight(5) as f64 + t.weight(123_456) as f64) / 3.0;
        assert_eq!(c.weight(1), m as f32);
        // a quarter of the starting value for unfamiliar entries; trained ones stay
        let w5 = t.weight(5);
        assert_eq!(scale_untouched(&t, 1.0), 0);
        assert_eq!(scale_untouched(&t, 0.25), t.layout.total - 4);
        assert_eq!(t.weight(1), 0.25 * t.initial_weight());
        assert_eq!(t.weight(5), w5);
        // entries now off the starting value are no longer "untouched": zeroing finds none
        assert_eq!(zero_untouched(&t), 0);
        let t = small();
        assert_eq!(zero_untouched(&t), t.layout.total - 4);
        assert_eq!(t.weight(1), 0.0);
        assert!(t.weight(5) != 0.0);
        // with phases, a class is one phase of one table (strided in memory)
        let c = fresh("win32,phase=all", false);
        let l = &c.layout;
        let phase1 = 1_000_000u64; // table 0, phase 1, pattern 0 (spec numbering)
        c.set_weight(l.storage_index(phase1 + 10), 1.0);
        c.set_weight(l.storage_index(phase1 + 20), 2.0);
        assert_eq!(class_mean(&c), 1_000_000 - 2);
        assert_eq!(c.weight(l.storage_index(phase1 + 999_999)), 1.5);
        assert_eq!(c.weight(l.storage_index(phase1 - 1)), c.initial_weight());
        assert_eq!(
            c.weight(l.storage_index(phase1 + 1_000_000)),
            c.initial_weight()
        );
        let p = promote(&t, crate::layout::Fill::Hgt5, false).unwrap();
        assert_eq!(p.layout.total, 5 * t.layout.total);
        assert_eq!(p.weight(3 * t.layout.total + 5), t.weight(5));
    }

    mod header_properties {
        use super::super::*;
        use proptest::prelude::*;

        fn spec() -> impl Strategy<Value = String> {
            let families = ["rows", "cols", "win23", "win32", "win24", "win42"];
            (
                proptest::sample::subsequence(families.to_vec(), 1..=6),
                proptest::sample::select(vec!["none", "cols", "all"]),
                proptest::sample::select(vec!["none", "occ5", "hgt5"]),
            )
                .prop_map(|(f, phase, fill)| format!("{},phase={phase},fill={fill}", f.join(",")))
        }

        fn header_bytes(layout: &Layout, coherence: bool) -> Vec<u8> {
            let mut v = Vec::new();
            write_header(&mut v, layout, coherence).unwrap();
            v
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Any bytes: an error or a header, never a panic (and nothing is allocated for
            /// tables by reading a header).
            #[test]
            fn arbitrary_bytes_never_panic(
                prefix in proptest::sample::select(vec![&b""[..], &MAGIC[..], &MAGIC_V1[..], b"D7NTUP"]),
                rest in proptest::collection::vec(any::<u8>(), 0..64),
            ) {
                let mut bytes = prefix.to_vec();
                bytes.extend_from_slice(&rest);
                let _ = read_header(&mut &bytes[..]);
            }

            /// A written header reads back as the same layout, entries and flag; one changed
            /// or missing byte is an error or, at most, another valid header.
            #[test]
            fn headers_round_trip(spec in spec(), coherence: bool, at: usize, bit in 0u8..8) {
                let layout = Layout::parse(&spec).unwrap();
                let bytes = header_bytes(&layout, coherence);
                let h = read_header(&mut &bytes[..]).unwrap();
                prop_assert_eq!(h.format, Format::V2);
                prop_assert_eq!(&h.layout, &layout);
                prop_assert_eq!(h.entries, layout.total);
                prop_assert_eq!(h.has_coherence, coherence);
                let mut bad = bytes.clone();
                let i = at % bad.len();
                bad[i] ^= 1 << bit;
                let _ = read_header(&mut &bad[..]);
                prop_assert!(read_header(&mut &bytes[..i]).is_err());
            }
        }
    }
}
