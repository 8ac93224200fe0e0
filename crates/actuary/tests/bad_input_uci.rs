//! The bad-input corpus (`tests/data/bad-input-uci.json`): hostile and careless UCI
//! sessions and command lines for `actuary`, each with its expected outcome. Every case
//! must end by itself within its time bound, without a panic or a signal, with the
//! expected exit status and output (see the corpus's `about` for the fields).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex length: {s}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("{s}: {e}")))
        .collect()
}

/// `fragments` must all occur in `text`, each after the previous one.
fn in_order(text: &str, fragments: &[String]) -> Result<(), String> {
    let mut at = 0;
    for f in fragments {
        match text[at..].find(f.as_str()) {
            Some(i) => at += i + f.len(),
            None => return Err(format!("`{f}` missing (or out of order)")),
        }
    }
    Ok(())
}

fn strings(v: &Value, dir: &str) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .map(|s| s.replace("$DIR", dir))
        .collect()
}

/// Run one case; `Err` describes how it failed.
fn run_case(case: &Value) -> Result<(), String> {
    let name = case["name"].as_str().ok_or("a case without a name")?;
    let tmp = tempfile::Builder::new()
        .prefix("actuary-bad-input-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let dir = tmp.path().display().to_string();
    for (f, content) in case["files"].as_object().into_iter().flatten() {
        let text = content.as_str().ok_or("files are texts")?;
        std::fs::write(tmp.path().join(f), text).map_err(|e| e.to_string())?;
    }
    let args = strings(&case["args"], &dir);
    let want_exit = case["exit"].as_i64().ok_or("no exit")? as i32;
    let max = Duration::from_secs_f64(case["max_seconds"].as_f64().unwrap_or(10.0));
    // ACTUARY_BIN: run the corpus against another build (say, one from before a fix).
    let bin = std::env::var("ACTUARY_BIN").unwrap_or(env!("CARGO_BIN_EXE_actuary").into());
    let mut cmd = match case["ulimit_kb"].as_u64() {
        // The same allocation failure on every machine, whatever its memory.
        Some(kb) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
                .arg(&bin)
                .args(&args);
            c
        }
        None => {
            let mut c = Command::new(&bin);
            c.args(&args);
            c
        }
    };
    // Stdin items: lines, raw bytes, pauses.
    let mut items = Vec::new();
    for it in case["stdin"].as_array().into_iter().flatten() {
        items.push(match it {
            Value::String(s) if s == "$LONG" => Ok(format!("{}\n", "a".repeat(300_000)).into()),
            Value::String(s) => Ok(format!("{}\n", s.replace("$DIR", &dir)).into_bytes()),
            v if v["hex"].is_string() => Ok(hex(v["hex"].as_str().unwrap())?),
            v => Err(Duration::from_millis(
                v["sleep_ms"]
                    .as_u64()
                    .ok_or("stdin: line, {hex} or {sleep_ms}")?,
            )),
        });
    }

    // `stdout`: "full" writes to /dev/full (every write fails); "closed" closes the reading
    // end at once (every write meets a gone reader).
    let stdout_to = case["stdout"].as_str();
    let t0 = Instant::now();
    let out_pipe = match stdout_to {
        Some("full") => Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .map_err(|e| e.to_string())?,
        ),
        _ => Stdio::piped(),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(out_pipe)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    if stdout_to == Some("closed") {
        drop(child.stdout.take());
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for it in items {
            match it {
                // The engine may have exited already (a refusal): a broken pipe is fine.
                Ok(bytes) => {
                    if stdin.write_all(&bytes).and_then(|_| stdin.flush()).is_err() {
                        break;
                    }
                }
                Err(pause) => std::thread::sleep(pause),
            }
        }
        // Dropping stdin closes it: end of input.
    });
    let (so, mut se) = (child.stdout.take(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut so) = so {
            let _ = so.read_to_end(&mut v);
        }
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
    let _ = writer.join();
    let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    let shown = |s: &str| s.chars().take(4000).collect::<String>();
    let fail = |why: String| {
        Err(format!(
            "{name}: {why}\n--- stderr:\n{}\n--- stdout:\n{}",
            shown(&stderr),
            shown(&stdout)
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
    let want_err = strings(&case["err"], &dir);
    // Exit 2 is a refusal; exit 1 a run whose checks failed (perft-suite), with its output.
    if want_exit == 2 {
        if !stdout.is_empty() {
            return fail("a refusal wrote to stdout".into());
        }
        // The whole of stderr is the one `error:` line.
        let line = match stderr.strip_suffix('\n').unwrap_or(&stderr) {
            l if l.starts_with("error:") && !l.contains('\n') => l,
            _ => return fail("stderr is not exactly one `error:` line".into()),
        };
        if let Err(e) = in_order(line, &want_err) {
            return fail(format!("the error line: {e}"));
        }
    } else if let Err(e) = in_order(&stderr, &want_err) {
        return fail(format!("stderr: {e}"));
    }
    if let Err(e) = in_order(&stdout, &strings(&case["out"], &dir)) {
        return fail(format!("stdout: {e}"));
    }
    for f in strings(&case["out_lacks"], &dir) {
        if stdout.contains(&f) {
            return fail(format!("stdout holds `{f}`"));
        }
    }
    if took > max {
        return fail(format!("took {took:?}, more than {max:?}"));
    }
    Ok(())
}

#[test]
fn every_bad_input_has_its_expected_outcome() {
    let path = format!(
        "{}/tests/data/bad-input-uci.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 50, "the corpus lost cases");
    // Two at a time: several cases pause on purpose (pondering, clocks), and the machine
    // may be busy; timing-sensitive cases keep generous margins.
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
