//! The bad-input corpus (`tests/data/bad-input.json`): hostile and careless command lines,
//! each with its expected outcome. Every case must end by itself within its time bound,
//! without a panic or a signal, with the expected exit status; a refusal says so in one
//! `error:` line holding the expected text and writes nothing to stdout; an accepted case
//! writes the JSON report to stdout.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

fn fake() -> &'static str {
    env!("CARGO_BIN_EXE_arbiter-fake-engine")
}

fn book() -> String {
    format!(
        "{}/../../data/chess/books/2moves_v1.epd",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn subst(s: &str, dir: &Path) -> String {
    s.replace("$FAKE", fake())
        .replace("$DIR", &dir.display().to_string())
        .replace("$BOOK", &book())
}

/// Run one case; `Err` describes how it failed.
fn run_case(case: &Value) -> Result<(), String> {
    let name = case["name"].as_str().ok_or("a case without a name")?;
    let dir = tempfile::Builder::new()
        .prefix("arbiter-bad-input-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let d = dir.path();
    if let Some(files) = case["files"].as_object() {
        for (f, content) in files {
            let bytes = match content {
                Value::String(s) => s.clone().into_bytes(),
                v => {
                    let hex = v["hex"].as_str().ok_or("files: text or {hex}")?;
                    (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                        .collect()
                }
            };
            std::fs::write(d.join(f), bytes).map_err(|e| e.to_string())?;
        }
    }
    for fifo in case["fifos"].as_array().into_iter().flatten() {
        let p = d.join(fifo.as_str().unwrap());
        let ok = Command::new("mkfifo")
            .arg(&p)
            .status()
            .map_err(|e| e.to_string())?;
        assert!(ok.success(), "mkfifo {}", p.display());
    }
    let mut args = Vec::new();
    for a in case["args"].as_array().ok_or("no args")? {
        match a.as_str().ok_or("args are strings")? {
            "$ENGINES" => args.extend(
                [
                    "--engine",
                    "name=a",
                    "cmd=$FAKE",
                    "--engine",
                    "name=b",
                    "cmd=$FAKE",
                ]
                .map(|w| subst(w, d)),
            ),
            a => args.push(subst(a, d)),
        }
    }
    let want_exit = case["exit"].as_i64().ok_or("no exit")? as i32;
    let says = case["says"].as_str().map(|s| subst(s, d));
    let max = Duration::from_secs_f64(case["max_seconds"].as_f64().unwrap_or(10.0));

    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Drain both pipes while waiting, so that a chatty run cannot block on a full pipe.
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
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
    let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    let fail = |why: String| {
        Err(format!(
            "{name}: {why}\n--- stderr:\n{stderr}\n--- stdout:\n{stdout}"
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
    if want_exit != 0 {
        if !stdout.is_empty() {
            return fail("a refusal wrote to stdout".into());
        }
        // A refusal (2): the whole of stderr is the one `error:` line. A stopped match (1)
        // has its progress before it: the one `error:` line ends stderr.
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        let line = match (want_exit, &errors[..]) {
            (2, [l]) if stderr.lines().count() == 1 => *l,
            (1, [l]) if stderr.trim_end().ends_with(l) => *l,
            _ => return fail("stderr is not as the one-line error rule says".into()),
        };
        if let Some(s) = &says
            && !line.contains(s.as_str())
        {
            return fail(format!("the error line does not say `{s}`"));
        }
    } else {
        let report: Value = serde_json::from_str(&stdout)
            .map_err(|e| format!("{name}: stdout is not the JSON report ({e}): {stdout}"))?;
        if let Some(s) = &says
            && !stderr.contains(s.as_str())
        {
            return fail(format!("stderr does not say `{s}`"));
        }
        for (pointer, want) in case["report"].as_object().into_iter().flatten() {
            if report.pointer(pointer) != Some(want) {
                return fail(format!(
                    "report {pointer} = {:?}, expected {want}",
                    report.pointer(pointer)
                ));
            }
        }
    }
    // Files the run left: `{"name": {"contains": [...], "lacks": [...]}}`.
    for (f, want) in case["files_after"].as_object().into_iter().flatten() {
        let text = std::fs::read_to_string(d.join(f)).unwrap_or_default();
        for c in want["contains"].as_array().into_iter().flatten() {
            let c = subst(c.as_str().unwrap(), d);
            if !text.contains(&c) {
                return fail(format!("{f} lacks `{c}`:\n{text}"));
            }
        }
        for c in want["lacks"].as_array().into_iter().flatten() {
            let c = subst(c.as_str().unwrap(), d);
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
    assert!(cases.len() >= 60, "the corpus lost cases");
    // A few cases at a time: most are refusals in milliseconds, some wait on a timeout.
    let next = Mutex::new(cases.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
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
