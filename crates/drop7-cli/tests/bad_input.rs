//! The bad-input corpus (`tests/data/bad-input.json`): hostile and careless `drop7` command
//! lines, standard inputs and files, each with its expected outcome. Every case must end by
//! itself within its time bound, without a panic or a signal, with the expected exit status;
//! a refusal says so in one `error:` line holding the expected text and writes nothing to
//! stdout (see the corpus's `about` for the fields).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ntuple::layout::Layout;
use ntuple::model;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};
use serde_json::Value;

/// Model files every case may name as `$MODELS/...`, made once per run by the test (small
/// layout: 120 MB of weights, most of the fixtures compressed to almost nothing) in a
/// directory it removes at the end.
static MODELS: OnceLock<PathBuf> = OnceLock::new();

fn models() -> &'static Path {
    MODELS.get().expect("the models are made first")
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn make_models(d: &Path) {
    let layout = Layout::parse("win23,phase=none").unwrap();
    let t = Tables::new(layout, OPTIMISTIC_TOTAL, false).unwrap();
    for (i, v) in [(0u64, 1.5f32), (77, -2.0), (4_000_000, 0.25)] {
        t.set_weight(i, v);
    }
    // intact: plain with its sidecar, and compressed
    model::save(&t, &d.join("good.bin"), false).unwrap();
    model::save(&t, &d.join("good.bin.zst"), false).unwrap();
    let bytes = std::fs::read(d.join("good.bin")).unwrap();
    let header = 8 + 4 + "win23,phase=none".len() + 8 + 1;
    // the brief's case: copied without its sidecar, one byte changed in the middle
    let mut flipped = bytes.clone();
    flipped[header + bytes.len() / 2 / 4 * 4 + 2] ^= 0x40;
    std::fs::write(d.join("flipped.bin"), &flipped).unwrap();
    // compressed, and changed before compression (decompresses cleanly)
    let mut changed = bytes.clone();
    changed[header + 4 * 1_000_000] ^= 1;
    std::fs::write(
        d.join("changed.bin.zst"),
        zstd::encode_all(&changed[..], 3).unwrap(),
    )
    .unwrap();
    // cut inside the weights; and inside the checksum
    std::fs::write(d.join("truncated.bin"), &bytes[..header + 4000]).unwrap();
    std::fs::write(
        d.join("cut-checksum.bin.zst"),
        zstd::encode_all(&bytes[..bytes.len() - 5], 3).unwrap(),
    )
    .unwrap();
    // trailing bytes
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"\n");
    std::fs::write(
        d.join("trailing.bin.zst"),
        zstd::encode_all(&longer[..], 3).unwrap(),
    )
    .unwrap();
    // intact, but a sidecar that names another file's hash
    std::fs::write(
        d.join("stale.bin.zst"),
        std::fs::read(d.join("good.bin.zst")).unwrap(),
    )
    .unwrap();
    std::fs::write(
        d.join("stale.bin.zst.sha256"),
        format!("{}  stale.bin.zst\n", "ab".repeat(32)),
    )
    .unwrap();
    // D7NTUP01 (before 2026-12-01): no checksum; with and without its sidecar
    let mut v1 = bytes[..bytes.len() - 32].to_vec();
    v1[..8].copy_from_slice(b"D7NTUP01");
    let v1z = zstd::encode_all(&v1[..], 3).unwrap();
    std::fs::write(d.join("old.bin.zst"), &v1z).unwrap();
    std::fs::write(
        d.join("old.bin.zst.sha256"),
        format!("{}  old.bin.zst\n", sha256_hex(&v1z)),
    )
    .unwrap();
    std::fs::write(d.join("old-nosidecar.bin.zst"), &v1z).unwrap();
    // NaN and infinite weights
    let nan = Tables::new(
        Layout::parse("win23,phase=none").unwrap(),
        OPTIMISTIC_TOTAL,
        false,
    )
    .unwrap();
    for i in 10..1010 {
        nan.set_weight(i, f32::NAN);
    }
    nan.set_weight(2000, f32::INFINITY);
    model::save(&nan, &d.join("nan.bin.zst"), false).unwrap();
    for w in &nan.weights {
        w.store(f32::NAN.to_bits(), std::sync::atomic::Ordering::Relaxed);
    }
    model::save(&nan, &d.join("all-nan.bin.zst"), false).unwrap();
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex length: {s}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("{s}: {e}")))
        .collect()
}

fn subst(s: &str, dir: &Path) -> String {
    s.replace("$DIR", &dir.display().to_string())
        .replace("$MODELS", &models().display().to_string())
}

/// Bytes of a `files` entry or a `stdin` item: text, `{"hex"}` or `{"repeat", "times"}`.
fn bytes_of(v: &Value, dir: &Path) -> Result<Vec<u8>, String> {
    match v {
        Value::String(s) => Ok(subst(s, dir).into_bytes()),
        v if v["hex"].is_string() => hex(v["hex"].as_str().unwrap()),
        v if v["repeat"].is_string() => {
            let times = v["times"].as_u64().ok_or("repeat without times")? as usize;
            Ok(v["repeat"].as_str().unwrap().repeat(times).into_bytes())
        }
        v => Err(format!("not text, hex or repeat: {v}")),
    }
}

fn strings(v: &Value, dir: &Path) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .map(|s| subst(s, dir))
        .collect()
}

/// Run one case; `Err` describes how it failed.
fn run_case(case: &Value) -> Result<(), String> {
    let name = case["name"].as_str().ok_or("a case without a name")?;
    let tmp = tempfile::Builder::new()
        .prefix("drop7-bad-input-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let d = tmp.path();
    for dir in strings(&case["dirs"], d) {
        std::fs::create_dir_all(d.join(dir)).map_err(|e| e.to_string())?;
    }
    for (f, content) in case["files"].as_object().into_iter().flatten() {
        let p = d.join(f);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&p, bytes_of(content, d)?).map_err(|e| e.to_string())?;
    }
    for (link, target) in case["symlinks"].as_object().into_iter().flatten() {
        let target = subst(target.as_str().ok_or("symlink targets are strings")?, d);
        std::os::unix::fs::symlink(target, d.join(link)).map_err(|e| e.to_string())?;
    }
    for fifo in strings(&case["fifos"], d) {
        let ok = Command::new("mkfifo")
            .arg(d.join(&fifo))
            .status()
            .map_err(|e| e.to_string())?;
        if !ok.success() {
            return Err(format!("{name}: mkfifo {fifo}"));
        }
    }
    let args = strings(&case["args"], d);
    let want_exit = case["exit"].as_i64().ok_or("no exit")? as i32;
    let says = case["says"].as_str().map(|s| subst(s, d));
    let max = Duration::from_secs_f64(case["max_seconds"].as_f64().unwrap_or(10.0));
    let mut input = Vec::new();
    for it in case["stdin"].as_array().into_iter().flatten() {
        input.extend(bytes_of(it, d)?);
    }
    // DROP7_BIN: run the corpus against another build (say, one from before a fix).
    let bin = std::env::var("DROP7_BIN").unwrap_or(env!("CARGO_BIN_EXE_drop7").into());
    let mut cmd = Command::new(&bin);
    cmd.args(&args)
        .current_dir(d)
        .env_remove("DROP7_MODEL")
        .env_remove("DROP7_LEDGER")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("SLURM_ARRAY_TASK_COUNT")
        .env_remove("SLURM_ARRAY_TASK_MIN")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in case["env"].as_object().into_iter().flatten() {
        cmd.env(k, subst(v.as_str().ok_or("env values are strings")?, d));
    }
    let to_full = case["stdout_to"].as_str() == Some("/dev/full");
    if to_full {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .map_err(|e| e.to_string())?;
        cmd.stdout(full);
    } else {
        cmd.stdout(Stdio::piped());
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("{name}: {bin}: {e}"))?;
    // Feed stdin and drain both pipes while waiting, so that nothing blocks on a full pipe.
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t0.elapsed() > max {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{name}: still running after {max:?} (killed)"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = t0.elapsed();
    let _ = feeder.join();
    let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    let fail = |why: String| {
        Err(format!(
            "{name}: {why}\n--- args: {args:?}\n--- stderr:\n{stderr}\n--- stdout:\n{}",
            stdout.chars().take(2000).collect::<String>()
        ))
    };
    let Some(code) = status.code() else {
        return fail(format!("killed by a signal ({status})"));
    };
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return fail("panicked".into());
    }
    if code != want_exit {
        return fail(format!("exit status {code}, expected {want_exit}"));
    }
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    if want_exit != 0 {
        if !stdout.is_empty() {
            return fail("a refusal wrote to stdout".into());
        }
        // The whole of stderr is the one `error:` line.
        let [line] = errors[..] else {
            return fail(format!("{} `error:` lines, expected one", errors.len()));
        };
        if stderr.lines().count() != 1 {
            return fail("stderr holds more than the one `error:` line".into());
        }
        if let Some(s) = &says
            && !line.contains(s.as_str())
        {
            return fail(format!("the error line does not say `{s}`"));
        }
    } else {
        if !errors.is_empty() {
            return fail("an accepted case printed an `error:` line".into());
        }
        if let Some(s) = &says
            && !stderr.contains(s.as_str())
        {
            return fail(format!("stderr does not say `{s}`"));
        }
    }
    for s in strings(&case["stdout_has"], d) {
        if !stdout.contains(&s) {
            return fail(format!("stdout lacks `{s}`"));
        }
    }
    for s in strings(&case["stdout_lacks"], d) {
        if stdout.contains(&s) {
            return fail(format!("stdout holds `{s}`"));
        }
    }
    if let Some(n) = case["stdout_lines"].as_u64()
        && stdout.lines().count() as u64 != n
    {
        return fail(format!(
            "{} stdout lines, expected {n}",
            stdout.lines().count()
        ));
    }
    // Paths the run must not have left (e.g. a lock file beside a device).
    for p in strings(&case["absent_after"], d) {
        let p = PathBuf::from(p);
        let p = if p.is_absolute() { p } else { d.join(p) };
        if p.symlink_metadata().is_ok() {
            return fail(format!("{} exists after the run", p.display()));
        }
    }
    // Files the run left: `{"name": {"contains": [...], "lacks": [...]}}`.
    for (f, want) in case["files_after"].as_object().into_iter().flatten() {
        let text = std::fs::read_to_string(d.join(f)).unwrap_or_default();
        for c in strings(&want["contains"], d) {
            if !text.contains(&c) {
                return fail(format!("{f} lacks `{c}`:\n{text}"));
            }
        }
        for c in strings(&want["lacks"], d) {
            if text.contains(&c) {
                return fail(format!("{f} holds `{c}`:\n{text}"));
            }
        }
    }
    if took > max {
        return fail(format!("took {took:?}, more than {max:?}"));
    }
    Ok(())
}

#[test]
fn every_bad_input_has_its_expected_outcome() {
    let path = format!("{}/tests/data/bad-input.json", env!("CARGO_MANIFEST_DIR"));
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 100, "the corpus lost cases");
    let mut names = std::collections::HashSet::new();
    for c in cases {
        assert!(names.insert(c["name"].as_str().unwrap()), "{c}: name twice");
    }
    // CASE=substring runs only the cases whose name holds it.
    let only = std::env::var("CASE").ok();
    let cases: Vec<&Value> = cases
        .iter()
        .filter(|c| {
            only.as_deref()
                .is_none_or(|o| c["name"].as_str().unwrap().contains(o))
        })
        .collect();
    let models_dir = tempfile::Builder::new()
        .prefix("drop7-bad-input-models-")
        .tempdir()
        .unwrap();
    make_models(models_dir.path());
    MODELS.set(models_dir.path().to_owned()).unwrap();
    // Two cases at a time: most are refusals in milliseconds; model loads take a moment.
    let next = Mutex::new(cases.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some(case) = next.lock().unwrap().next() else {
                        break;
                    };
                    if let Err(e) = run_case(case) {
                        failures.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
