//! `D7NTUP01` model files (SPEC §7), little-endian:
//! magic `D7NTUP01`; u32 spec length; spec bytes; u64 entry count; u8 flag (1 = the E and A
//! accumulators follow); the weights as f32; then all E, then all A when the flag is 1.
//!
//! A name ending in `.zst` is zstd-compressed. Every file is written atomically with a
//! sidecar `<file>.sha256`; loading recomputes the hash and refuses a mismatch, a bad magic,
//! a wrong entry count or a truncated file with a message that says which.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use sha2::{Digest, Sha256};

use crate::Error;
use crate::layout::Layout;
use crate::tables::{Tables, check_memory};

pub const MAGIC: &[u8; 8] = b"D7NTUP01";

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
    #[error("not a D7NTUP01 model (magic {0:?})")]
    NotAModel(String),
    #[error("corrupt model file: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
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

/// Reads through from an inner reader while hashing.
struct HashReader<R: Read> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for HashReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

fn is_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".sha256");
    PathBuf::from(s)
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

/// The body of [`save`]: the whole file into `file`; returns its SHA-256.
fn write_model(
    tables: &Tables,
    zst: bool,
    file: &mut std::fs::File,
    with_coherence: bool,
) -> std::io::Result<String> {
    let mut hw = HashWriter {
        inner: BufWriter::with_capacity(1 << 22, file),
        hasher: Sha256::new(),
    };
    let acc = tables.coherence.as_ref().filter(|_| with_coherence);
    let body = |w: &mut dyn Write| -> std::io::Result<()> {
        let spec = tables.layout.spec();
        w.write_all(MAGIC)?;
        w.write_all(&(spec.len() as u32).to_le_bytes())?;
        w.write_all(spec.as_bytes())?;
        w.write_all(&tables.layout.total.to_le_bytes())?;
        w.write_all(&[acc.is_some() as u8])?;
        let mut w = w;
        write_f32s(&mut w, &tables.layout, &tables.weights)?;
        if let Some((e, a)) = acc {
            write_f32s(&mut w, &tables.layout, e)?;
            write_f32s(&mut w, &tables.layout, a)?;
        }
        Ok(())
    };
    if zst {
        let mut enc = zstd::Encoder::new(&mut hw, 3)?;
        body(&mut enc)?;
        enc.finish()?;
    } else {
        body(&mut hw)?;
    }
    hw.flush()?;
    Ok(hex(&hw.hasher.finalize()))
}

/// Save `tables` (with accumulators if `with_coherence` and present). Returns the SHA-256 of
/// the file as written (hex). The write is atomic (a uniquely named temporary file, synced,
/// renamed; removed if anything fails, so a full disk leaves no gigabytes behind), then the
/// `.sha256` sidecar is written the same way.
pub fn save(tables: &Tables, path: &Path, with_coherence: bool) -> Result<String, Error> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    let mut hash = String::new();
    evidence::atomic_write_with(path, |f| {
        hash = write_model(tables, is_zst(path), f, with_coherence)?;
        Ok(())
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    evidence::atomic_write(&sidecar(path), format!("{hash}  {name}\n").as_bytes())?;
    Ok(hash)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Header of a model file.
#[derive(Debug, Clone)]
pub struct Header {
    pub layout: Layout,
    pub entries: u64,
    pub has_coherence: bool,
}

fn read_exact(r: &mut impl Read, buf: &mut [u8], what: &'static str) -> Result<(), Fault> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Fault::Truncated(what)
        } else {
            Fault::Read { what, source: e }
        }
    })
}

fn read_header(r: &mut impl Read) -> Result<Header, Fault> {
    let mut magic = [0u8; 8];
    read_exact(r, &mut magic, "magic")?;
    if &magic != MAGIC {
        return Err(Fault::NotAModel(
            String::from_utf8_lossy(&magic).into_owned(),
        ));
    }
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
        layout,
        entries,
        has_coherence: flag[0] == 1,
    })
}

/// Read one value per entry in spec (file) order into `out`, which is in storage order.
fn read_f32s(
    r: &mut impl Read,
    layout: &Layout,
    out: &[AtomicU32],
    what: &'static str,
) -> Result<(), Fault> {
    let mut buf = vec![0u8; 1 << 20];
    for class in layout.classes() {
        let (start, stride) = (class.start as usize, class.stride as usize);
        for j in (0..class.count as usize).step_by(1 << 18) {
            let n = (class.count as usize - j).min(1 << 18);
            let bytes = &mut buf[..n * 4];
            read_exact(r, bytes, what)?;
            for (k, b) in (j..j + n).zip(bytes.chunks_exact(4)) {
                out[start + k * stride]
                    .store(u32::from_le_bytes([b[0], b[1], b[2], b[3]]), Relaxed);
            }
        }
    }
    Ok(())
}

/// What a load found.
#[derive(Debug, Clone)]
pub struct LoadInfo {
    pub sha256: String,
    /// `Some(true)` if a sidecar hash was present and matched.
    pub verified: Option<bool>,
    pub has_coherence: bool,
}

fn open_reader(path: &Path) -> Result<HashReader<BufReader<std::fs::File>>, Error> {
    let f = std::fs::File::open(path).map_err(Error::io(path))?;
    Ok(HashReader {
        inner: BufReader::with_capacity(1 << 22, f),
        hasher: Sha256::new(),
    })
}

/// Load a model. `trainable` also reads (or, if absent, creates zeroed) accumulators.
pub fn load(path: &Path, trainable: bool) -> Result<(Tables, LoadInfo), Error> {
    let mut hr = open_reader(path)?;
    let (tables, has_coherence) = read_body(path, &mut hr, trainable).map_err(|f| f.at(path))?;
    let sha256 = hex(&hr.hasher.finalize());
    let verified = match std::fs::read_to_string(sidecar(path)) {
        Ok(s) => {
            let want = s.split_whitespace().next().unwrap_or("").to_lowercase();
            if want != sha256 {
                return Err(Error::Model {
                    path: path.to_owned(),
                    message: format!(
                        "SHA-256 mismatch: file hashes to {sha256}, {} says {want}",
                        sidecar(path).display()
                    ),
                });
            }
            Some(true)
        }
        Err(_) => None,
    };
    Ok((
        tables,
        LoadInfo {
            sha256,
            verified,
            has_coherence,
        },
    ))
}

/// Everything after opening: header, weights, accumulators, the check for trailing bytes.
fn read_body(
    path: &Path,
    hr: &mut HashReader<BufReader<std::fs::File>>,
    trainable: bool,
) -> Result<(Tables, bool), Fault> {
    let mut r: Box<dyn Read> = if is_zst(path) {
        Box::new(zstd::Decoder::new(hr)?)
    } else {
        Box::new(hr)
    };
    let h = read_header(&mut r)?;
    check_memory(&h.layout, trainable)?;
    let zero = || crate::tables::filled(h.entries, 0.0);
    let weights = zero();
    read_f32s(&mut r, &h.layout, &weights, "weights")?;
    let coherence = if trainable {
        let (e, a) = (zero(), zero());
        if h.has_coherence {
            read_f32s(&mut r, &h.layout, &e, "E accumulators")?;
            read_f32s(&mut r, &h.layout, &a, "A accumulators")?;
        }
        Some((e, a))
    } else {
        None
    };
    // Anything left (trailing data, or accumulators we skip) must still be hashed.
    if !trainable || !h.has_coherence {
        let mut sink = [0u8; 1 << 16];
        let mut extra = 0u64;
        loop {
            let n = r.read(&mut sink)?;
            if n == 0 {
                break;
            }
            extra += n as u64;
        }
        let expected_extra = if h.has_coherence { 8 * h.entries } else { 0 };
        if extra != expected_extra {
            return Err(Fault::Corrupt(format!("{extra} unexpected trailing bytes")));
        }
    } else {
        let mut one = [0u8; 1];
        if r.read(&mut one)? != 0 {
            return Err(Fault::Corrupt(
                "trailing bytes after the accumulators".into(),
            ));
        }
    }
    Ok((
        Tables {
            layout: h.layout,
            weights,
            coherence,
        },
        h.has_coherence,
    ))
}

/// Read only the header (cheap `model info`).
pub fn read_info(path: &Path) -> Result<Header, Error> {
    let mut hr = open_reader(path)?;
    let header = |hr| -> Result<Header, Fault> {
        let mut r: Box<dyn Read> = if is_zst(path) {
            Box::new(zstd::Decoder::new(hr)?)
        } else {
            Box::new(hr)
        };
        read_header(&mut r)
    };
    header(&mut hr).map_err(|f| f.at(path))
}

/// Statistics of a table set (for `model info`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub layout: String,
    pub entries: u64,
    pub active: usize,
    /// Entries still bit-equal to the optimistic initial value (never updated).
    pub untouched: u64,
    pub mean: f64,
    pub min: f32,
    pub max: f32,
}

pub fn stats(t: &Tables) -> Stats {
    let init = t.initial_weight().to_bits();
    let (mut untouched, mut sum, mut min, mut max) = (0u64, 0f64, f32::INFINITY, f32::NEG_INFINITY);
    for w in &t.weights {
        let b = w.load(Relaxed);
        untouched += (b == init) as u64;
        let v = f32::from_bits(b);
        sum += v as f64;
        min = min.min(v);
        max = max.max(v);
    }
    Stats {
        layout: t.layout.spec(),
        entries: t.layout.total,
        active: t.layout.active(),
        untouched,
        mean: sum / t.layout.total as f64,
        min,
        max,
    }
}

/// "Zeroed" edit: every never-updated entry (bit-equal to the initial value) becomes 0.
/// Returns how many entries changed.
pub fn zero_untouched(t: &Tables) -> u64 {
    let init = t.initial_weight().to_bits();
    let mut n = 0;
    for w in &t.weights {
        if w.load(Relaxed) == init {
            w.store(0, Relaxed);
            n += 1;
        }
    }
    n
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
            assert_eq!(info.verified, Some(true));
            let (e1, _) = t.coherence.as_ref().unwrap();
            let (e2, _) = back.coherence.as_ref().unwrap();
            assert_eq!(e1[5].load(Relaxed), e2[5].load(Relaxed));
            // frozen load skips the accumulators
            let (frozen, _) = load(&p, false).unwrap();
            assert!(frozen.coherence.is_none() && same(&t, &frozen));
        }
    }

    /// Files keep SPEC §7's phase-major order whatever the memory order: an entry written
    /// through its storage index sits at its spec number in the file, and a conditioned
    /// layout round-trips with its accumulators.
    #[test]
    fn files_are_in_spec_order() {
        let _heavy = crate::heavy_test();
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
        let digest = |t: &Tables| {
            let (e, a) = t.coherence.as_ref().unwrap();
            let mut h = Sha256::new();
            for w in t.weights.iter().chain(e.iter()).chain(a.iter()) {
                h.update(w.load(Relaxed).to_le_bytes());
            }
            hex(&h.finalize())
        };
        let before = (t.layout.clone(), digest(&t));
        drop(t);
        let (back, _) = load(&p, true).unwrap();
        assert_eq!((back.layout.clone(), digest(&back)), before);
    }

    #[test]
    fn corruption_and_truncation_are_reported() {
        let _heavy = crate::heavy_test();
        let t = small();
        let (_dir, p) = tmp("c.bin");
        save(&t, &p, false).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        // flip one weight bit: the hash catches it
        let k = bytes.len() / 2;
        bytes[k] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        let e = load(&p, false).err().unwrap();
        assert!(e.to_string().contains("SHA-256 mismatch"), "{e}");
        // truncation is named even without a sidecar
        bytes[k] ^= 1;
        std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
        std::fs::remove_file(sidecar(&p)).unwrap();
        let e = load(&p, false).err().unwrap();
        assert!(e.to_string().contains("truncated"), "{e}");
        std::fs::write(&p, b"NOTAMODEL").unwrap();
        assert!(
            load(&p, false)
                .err()
                .unwrap()
                .to_string()
                .contains("not a D7NTUP01")
        );
    }

    #[test]
    fn edits() {
        let _heavy = crate::heavy_test();
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
}
