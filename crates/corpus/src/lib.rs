//! The bad-input corpus runner shared by the tests of `actuary`, `arbiter` and `drop7`
//! (issue 31: one harness, one schema, one error rule).
//!
//! A corpus is a JSON file `{"about": [...], "cases": [...]}`; each case runs the binary once
//! in a fresh directory and must end by itself within `max_seconds` (default 10), without a
//! panic or a signal, with exit status `exit`. The fields of a case:
//!
//! - `name` (unique), `exit`, `args` (strings; `$VAR`s substituted, an argument equal to an
//!   expansion such as `$ENGINES` replaced by its words), `max_seconds`.
//! - Set-up in the case's directory `$DIR` (also the working directory): `files`
//!   (`{path: text | {"hex"} | {"repeat", "times"}}`), `dirs`, `symlinks` (`{link: target}`),
//!   `fifos`; `env` (`{name: value}`); `ulimit_kb` (run under `ulimit -v`, so an allocation
//!   fails the same way on every machine).
//! - `stdin`: items written in order, then stdin is closed: a string is one line (a newline is
//!   added), `{"raw": text}` text as it is, `{"hex"}` bytes, `{"repeat", "times"}` text
//!   repeated, `{"sleep_ms"}` a pause, `{"await": text, "times": n}` waits until stdout holds
//!   `text` n times in all (default 1; at most the case's time): a wait for an answer costs
//!   only as long as the answer takes.
//! - `stdout_to`: `"full"` (every write fails: `/dev/full`) or `"closed"` (the reader has gone).
//!
//! The rule every binary keeps, checked on the whole stderr:
//!
//! - exit 2, a refusal: nothing on stdout, and stderr is exactly one line, starting `error:`.
//! - exit 1, a run that started and then failed: at most one `error:` line, and if there is one
//!   it ends stderr (a match's progress comes before it); a case with `err` needs the line and
//!   finds its fragments in it. Whether stdout may hold anything is the case's `out_lines`.
//! - exit 0: no line of stderr starts with `error:`.
//!
//! Checks: `err`, fragments in that order in the error line (exit 2) or in stderr; `out`,
//! fragments in that order in stdout; `out_lacks`; `out_lines` (stdout's line count);
//! `report` (`{JSON pointer: value}` of stdout read as JSON); `absent_after` (paths that must
//! not exist afterwards); `files_after` (`{path: {"contains": [...], "lacks": [...]}}`).
//!
//! Environment: `CASE=text` runs only the cases whose name holds it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How one binary's corpus runs.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// The binary under test.
    pub bin: PathBuf,
    /// `$NAME` → text, substituted in arguments, stdin lines, files, `env`, checks.
    pub vars: Vec<(String, String)>,
    /// An argument equal to the key is replaced by these words (substituted too).
    pub expand: Vec<(String, Vec<String>)>,
    /// Variables removed from the environment (a developer's settings must not leak in).
    pub env_remove: Vec<String>,
    /// Cases run at a time.
    pub workers: usize,
    /// The corpus must hold at least this many cases (it cannot lose them unnoticed).
    pub min_cases: usize,
}

impl Runner {
    /// Run every case of the corpus file (`workers` at a time); panics listing every failure.
    pub fn run_file(&self, path: &Path) {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let corpus: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cases = corpus["cases"].as_array().expect("a corpus has cases");
        assert!(
            cases.len() >= self.min_cases,
            "{}: {} cases, fewer than {}: the corpus lost cases",
            path.display(),
            cases.len(),
            self.min_cases
        );
        let mut names = std::collections::HashSet::new();
        for c in cases {
            let name = c["name"].as_str().expect("every case has a name");
            assert!(names.insert(name), "{name}: two cases of that name");
            if let Some(unknown) = c
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str())
                .find(|k| !FIELDS.contains(k))
            {
                panic!("{name}: unknown field `{unknown}` (a typo would check nothing)");
            }
            for (f, want) in c["files_after"].as_object().into_iter().flatten() {
                if let Some(k) = want
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.as_str())
                    .find(|k| !["contains", "lacks"].contains(k))
                {
                    panic!("{name}: files_after `{f}`: unknown field `{k}` (contains or lacks)");
                }
            }
        }
        let only = std::env::var("CASE").ok();
        let cases: Vec<&Value> = cases
            .iter()
            .filter(|c| {
                only.as_deref()
                    .is_none_or(|o| c["name"].as_str().unwrap_or("").contains(o))
            })
            .collect();
        if let Some(o) = &only {
            assert!(
                !cases.is_empty(),
                "CASE={o} names no case of {}",
                path.display()
            );
            eprintln!("CASE={o}: {} case(s)", cases.len());
        }
        let next = Mutex::new(cases.iter());
        let failures = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..self.workers.max(1) {
                s.spawn(|| {
                    loop {
                        let Some(case) = next.lock().unwrap().next() else {
                            break;
                        };
                        if let Err(e) = self.run_case(case) {
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

    fn subst(&self, s: &str, dir: &Path) -> String {
        let mut s = s.replace("$DIR", &dir.display().to_string());
        for (k, v) in &self.vars {
            s = s.replace(k.as_str(), v);
        }
        s
    }

    fn strings(&self, v: &Value, dir: &Path) -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str())
            .map(|s| self.subst(s, dir))
            .collect()
    }

    /// Run one case; `Err` says how it failed.
    pub fn run_case(&self, case: &Value) -> Result<(), String> {
        let name = case["name"].as_str().ok_or("a case without a name")?;
        let tmp = tempfile::Builder::new()
            .prefix("bad-input-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let d = tmp.path();
        self.set_up(case, d)
            .map_err(|e| format!("{name}: set-up: {e}"))?;
        let mut args = Vec::new();
        for a in self.strings(&case["args"], d) {
            match self.expand.iter().find(|(k, _)| *k == a) {
                Some((_, words)) => args.extend(words.iter().map(|w| self.subst(w, d))),
                None => args.push(a),
            }
        }
        let want_exit = case["exit"].as_i64().ok_or("no exit")? as i32;
        let max = Duration::from_secs_f64(case["max_seconds"].as_f64().unwrap_or(10.0));
        let mut input = Vec::new();
        for it in case["stdin"].as_array().into_iter().flatten() {
            input.push(self.stdin_item(it, d)?);
        }
        let mut cmd = match case["ulimit_kb"].as_u64() {
            Some(kb) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
                    .arg(&self.bin);
                c
            }
            None => Command::new(&self.bin),
        };
        cmd.args(&args).current_dir(d);
        for k in &self.env_remove {
            cmd.env_remove(k);
        }
        for (k, v) in case["env"].as_object().into_iter().flatten() {
            cmd.env(
                k,
                self.subst(v.as_str().ok_or("env values are strings")?, d),
            );
        }
        let stdout_to = case["stdout_to"].as_str();
        match stdout_to {
            Some("full") => cmd.stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .map_err(|e| e.to_string())?,
            ),
            None | Some("closed") => cmd.stdout(Stdio::piped()),
            Some(other) => return Err(format!("{name}: stdout_to `{other}`: full or closed")),
        };
        let t0 = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{name}: {}: {e}", self.bin.display()))?;
        if stdout_to == Some("closed") {
            drop(child.stdout.take());
        }
        // Feed stdin and drain both pipes while waiting: nothing blocks on a full pipe. The
        // stdout drain shares what it has read so far, for the `await` items.
        let mut stdin = child.stdin.take().expect("piped");
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let drain = |pipe: Option<Box<dyn Read + Send>>, seen: std::sync::Arc<Mutex<Vec<u8>>>| {
            std::thread::spawn(move || {
                if let Some(mut p) = pipe {
                    let mut buf = [0u8; 8192];
                    while let Ok(n @ 1..) = p.read(&mut buf) {
                        seen.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                }
                std::mem::take(&mut *seen.lock().unwrap())
            })
        };
        let out = drain(child.stdout.take().map(|p| Box::new(p) as _), seen.clone());
        let err = drain(
            child.stderr.take().map(|p| Box::new(p) as _),
            Default::default(),
        );
        let feeder = std::thread::spawn(move || {
            for it in input {
                match it {
                    // the binary may have exited already (a refusal): a broken pipe is fine
                    Input::Bytes(bytes) => {
                        if stdin
                            .write_all(&bytes)
                            .and_then(|()| stdin.flush())
                            .is_err()
                        {
                            break;
                        }
                    }
                    Input::Pause(pause) => std::thread::sleep(pause),
                    Input::Await { text, times } => {
                        // a missing answer is the case's failure (its checks or its time)
                        while t0.elapsed() < max {
                            let holds = String::from_utf8_lossy(&seen.lock().unwrap())
                                .matches(text.as_str())
                                .count();
                            if holds >= times {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }
                }
            }
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
        let _ = feeder.join();
        let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
        let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        let shown = |s: &str| s.chars().take(4000).collect::<String>();
        let fail = |why: String| {
            Err(format!(
                "{name}: {why}\n--- args: {args:?}\n--- stderr:\n{}\n--- stdout:\n{}",
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
        let want_err = self.strings(&case["err"], d);
        if let Err(why) = check_stderr(want_exit, &stdout, &stderr, &want_err) {
            return fail(why);
        }
        if let Err(e) = in_order(&stdout, &self.strings(&case["out"], d)) {
            return fail(format!("stdout: {e}"));
        }
        for f in self.strings(&case["out_lacks"], d) {
            if stdout.contains(&f) {
                return fail(format!("stdout holds `{f}`"));
            }
        }
        if let Some(n) = case["out_lines"].as_u64()
            && stdout.lines().count() as u64 != n
        {
            return fail(format!(
                "{} stdout lines, expected {n}",
                stdout.lines().count()
            ));
        }
        if let Some(pointers) = case["report"].as_object() {
            let report: Value = match serde_json::from_str(&stdout) {
                Ok(r) => r,
                Err(e) => return fail(format!("stdout is not the JSON report ({e})")),
            };
            for (pointer, want) in pointers {
                if report.pointer(pointer) != Some(want) {
                    return fail(format!(
                        "report {pointer} = {:?}, expected {want}",
                        report.pointer(pointer)
                    ));
                }
            }
        }
        for p in self.strings(&case["absent_after"], d) {
            let p = PathBuf::from(p);
            let p = if p.is_absolute() { p } else { d.join(p) };
            if p.symlink_metadata().is_ok() {
                return fail(format!("{} exists after the run", p.display()));
            }
        }
        for (f, want) in case["files_after"].as_object().into_iter().flatten() {
            let text = std::fs::read_to_string(d.join(f)).unwrap_or_default();
            for c in self.strings(&want["contains"], d) {
                if !text.contains(&c) {
                    return fail(format!("{f} lacks `{c}`:\n{text}"));
                }
            }
            for c in self.strings(&want["lacks"], d) {
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

    fn set_up(&self, case: &Value, d: &Path) -> Result<(), String> {
        for dir in self.strings(&case["dirs"], d) {
            std::fs::create_dir_all(d.join(dir)).map_err(|e| e.to_string())?;
        }
        for (f, content) in case["files"].as_object().into_iter().flatten() {
            let p = d.join(f);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            let bytes = match content {
                Value::String(s) => self.subst(s, d).into_bytes(),
                v => bytes_of(v)?,
            };
            std::fs::write(&p, bytes).map_err(|e| e.to_string())?;
        }
        for (link, target) in case["symlinks"].as_object().into_iter().flatten() {
            let target = self.subst(target.as_str().ok_or("symlink targets are strings")?, d);
            std::os::unix::fs::symlink(target, d.join(link)).map_err(|e| e.to_string())?;
        }
        for fifo in self.strings(&case["fifos"], d) {
            let ok = Command::new("mkfifo")
                .arg(d.join(&fifo))
                .status()
                .map_err(|e| e.to_string())?;
            if !ok.success() {
                return Err(format!("mkfifo {fifo}"));
            }
        }
        Ok(())
    }

    /// Bytes to write, a pause, or a wait for output.
    fn stdin_item(&self, v: &Value, d: &Path) -> Result<Input, String> {
        Ok(match v {
            Value::String(s) => Input::Bytes((self.subst(s, d) + "\n").into_bytes()),
            v if v["raw"].is_string() => {
                Input::Bytes(self.subst(v["raw"].as_str().unwrap(), d).into_bytes())
            }
            v if v["sleep_ms"].is_u64() => {
                Input::Pause(Duration::from_millis(v["sleep_ms"].as_u64().unwrap()))
            }
            v if v["await"].is_string() => Input::Await {
                text: self.subst(v["await"].as_str().unwrap(), d),
                times: match &v["times"] {
                    Value::Null => 1,
                    t => t.as_u64().ok_or("`times` is a count")? as usize,
                },
            },
            v => Input::Bytes(bytes_of(v)?),
        })
    }
}

/// One item of a case's `stdin`.
#[derive(Debug, PartialEq)]
enum Input {
    Bytes(Vec<u8>),
    Pause(Duration),
    /// Wait until stdout holds `text` this many times in all.
    Await {
        text: String,
        times: usize,
    },
}

/// Every field a case may have (anything else is a typo, refused).
const FIELDS: &[&str] = &[
    "name",
    "exit",
    "args",
    "max_seconds",
    "files",
    "dirs",
    "symlinks",
    "fifos",
    "env",
    "ulimit_kb",
    "stdin",
    "stdout_to",
    "err",
    "out",
    "out_lacks",
    "out_lines",
    "report",
    "absent_after",
    "files_after",
    "note",
];

/// `{"hex"}` or `{"repeat", "times"}`.
fn bytes_of(v: &Value) -> Result<Vec<u8>, String> {
    if let Some(h) = v["hex"].as_str() {
        if !h.len().is_multiple_of(2) {
            return Err(format!("odd hex length: {h}"));
        }
        return (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).map_err(|e| format!("{h}: {e}")))
            .collect();
    }
    if let Some(r) = v["repeat"].as_str() {
        let times = v["times"].as_u64().ok_or("repeat without times")? as usize;
        return Ok(r.repeat(times).into_bytes());
    }
    Err(format!("not text, hex or repeat: {v}"))
}

/// The one-line error rule on the whole stderr, and `err`'s fragments where they belong.
fn check_stderr(exit: i32, stdout: &str, stderr: &str, want: &[String]) -> Result<(), String> {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    match exit {
        2 => {
            if !stdout.is_empty() {
                return Err("a refusal wrote to stdout".into());
            }
            let line = match stderr.strip_suffix('\n').unwrap_or(stderr) {
                l if l.starts_with("error:") && !l.contains('\n') => l,
                _ => return Err("stderr is not exactly one `error:` line".into()),
            };
            in_order(line, want).map_err(|e| format!("the error line: {e}"))
        }
        1 => {
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            match errors[..] {
                [] if want.is_empty() => Ok(()),
                [] => Err("no `error:` line (the case names what it must say)".into()),
                [l] if last == Some(l) => {
                    in_order(l, want).map_err(|e| format!("the error line: {e}"))
                }
                _ => Err("a failed run's one `error:` line must end stderr".into()),
            }
        }
        _ => {
            if !errors.is_empty() {
                return Err("an accepted case printed an `error:` line".into());
            }
            in_order(stderr, want).map_err(|e| format!("stderr: {e}"))
        }
    }
}

/// `fragments` all occur in `text`, each after the one before.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn fragments_must_come_in_order() {
        assert!(in_order("a b a c", &v(&["a", "a", "c"])).is_ok());
        assert!(in_order("a b c", &v(&["c", "a"])).is_err());
        assert!(in_order("bestmove", &v(&["bestmove", "bestmove"])).is_err());
    }

    #[test]
    fn the_one_line_rule_is_checked_on_the_whole_stderr() {
        let ok = |exit, out, err: &str, want: &[&str]| check_stderr(exit, out, err, &v(want));
        assert!(ok(2, "", "error: --x: bad\n", &["--x"]).is_ok());
        // a usage line after the error, or a second error, breaks the rule
        assert!(ok(2, "", "error: --x: bad\n\nUsage: a [OPTIONS]\n", &[]).is_err());
        assert!(ok(2, "", "note\nerror: --x\n", &[]).is_err());
        assert!(ok(2, "out", "error: --x\n", &[]).is_err());
        assert!(ok(2, "", "error: --x: bad\n", &["--y"]).is_err());
        // a stopped run: progress, then the one error line last
        assert!(ok(1, "", "game 1\ngame 2\nerror: stopped\n", &["stopped"]).is_ok());
        assert!(ok(1, "", "game 1\nerror: stopped  \n\n", &["stopped"]).is_ok());
        assert!(ok(1, "", "error: stopped\ngame 3\n", &[]).is_err());
        assert!(ok(1, "", "game 1\n", &["stopped"]).is_err());
        assert!(ok(1, "", "game 1 stopped\nerror: x\n", &["stopped"]).is_err());
        assert!(ok(1, "report", "", &[]).is_ok());
        assert!(ok(0, "{}", "note: fine\n", &["fine"]).is_ok());
        assert!(ok(0, "{}", "error: but accepted\n", &[]).is_err());
    }

    #[test]
    fn await_waits_for_the_answer_and_no_longer() {
        let r = Runner {
            bin: "sh".into(),
            ..Default::default()
        };
        // the script answers `ready` only after a pause, then echoes what it reads
        let case = |wait_for: &str| {
            serde_json::json!({
                "name": "await", "exit": 0, "max_seconds": 3,
                "args": ["-c", "sleep 0.2; echo ready; cat"],
                "stdin": [{"await": wait_for}, "after"],
                "out": ["ready", "after"],
            })
        };
        let t0 = Instant::now();
        assert_eq!(r.run_case(&case("ready")), Ok(()));
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        // an answer that never comes: the wait ends at the case's time, and the case fails
        let e = r.run_case(&case("never")).unwrap_err();
        assert!(e.contains("3s"), "{e}");
    }

    #[test]
    fn stdin_items_and_file_bytes() {
        let r = Runner::default();
        let d = Path::new("/x");
        let item = |j: &str| r.stdin_item(&serde_json::from_str(j).unwrap(), d).unwrap();
        let bytes = |b: &[u8]| Input::Bytes(b.to_vec());
        assert_eq!(item(r#""go $DIR""#), bytes(b"go /x\n"));
        assert_eq!(item(r#"{"raw": "a"}"#), bytes(b"a"));
        assert_eq!(item(r#"{"hex": "ff0a"}"#), bytes(&[0xff, 0x0a]));
        assert_eq!(item(r#"{"repeat": "ab", "times": 2}"#), bytes(b"abab"));
        assert_eq!(
            item(r#"{"sleep_ms": 5}"#),
            Input::Pause(Duration::from_millis(5))
        );
        let wait = |text: &str, times| Input::Await {
            text: text.into(),
            times,
        };
        assert_eq!(item(r#"{"await": "bestmove"}"#), wait("bestmove", 1));
        assert_eq!(item(r#"{"await": "$DIR", "times": 3}"#), wait("/x", 3));
        assert!(
            r.stdin_item(&serde_json::json!({"await": "x", "times": "two"}), d)
                .is_err()
        );
        assert!(bytes_of(&serde_json::json!({"hex": "f"})).is_err());
    }
}
