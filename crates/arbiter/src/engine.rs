//! A UCI engine as a child process: lines in, lines out, every wait bounded.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How to start an engine: `name=A cmd=PATH [arg=…] [option.Hash=64 …]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSpec {
    pub name: String,
    pub cmd: String,
    pub args: Vec<String>,
    /// UCI options sent with `setoption` after `uciok`.
    pub options: Vec<(String, String)>,
}

impl EngineSpec {
    /// Parse the `key=value` words of one `--engine`.
    pub fn parse(words: &[String]) -> Result<Self, String> {
        let (mut name, mut cmd, mut args, mut options) = (None, None, vec![], vec![]);
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| format!("bad engine field `{w}`: expected key=value"))?;
            match k {
                "name" => name = Some(v.to_owned()),
                "cmd" => cmd = Some(v.to_owned()),
                "arg" => args.push(v.to_owned()),
                _ if k.starts_with("option.") => {
                    options.push((k["option.".len()..].to_owned(), v.to_owned()))
                }
                _ => {
                    return Err(format!(
                        "bad engine field `{w}`: name=, cmd=, arg= or option.NAME="
                    ));
                }
            }
        }
        let cmd = cmd.ok_or("an --engine needs cmd=PATH")?;
        let name = name.unwrap_or_else(|| {
            std::path::Path::new(&cmd)
                .file_name()
                .map_or(cmd.clone(), |n| n.to_string_lossy().into_owned())
        });
        Ok(Self {
            name,
            cmd,
            args,
            options,
        })
    }
}

/// Why talking to an engine failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// No answer in time.
    Timeout(String),
    /// The process closed its output (crashed or quit).
    Exited(String),
    /// Could not start or write.
    Io(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Timeout(s) => write!(f, "no answer in time ({s})"),
            EngineError::Exited(s) => write!(f, "engine exited ({s})"),
            EngineError::Io(s) => write!(f, "{s}"),
        }
    }
}

/// A running engine. Dropping it kills the process.
pub struct Engine {
    pub spec: EngineSpec,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    /// Start the process and do the `uci` / `setoption` / `isready` handshake.
    pub fn start(spec: &EngineSpec, handshake_timeout: Duration) -> Result<Self, EngineError> {
        let mut child = Command::new(&spec.cmd)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| EngineError::Io(format!("cannot start `{}`: {e}", spec.cmd)))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut e = Engine {
            spec: spec.clone(),
            child,
            stdin,
            lines: rx,
        };
        e.send("uci")?;
        e.wait_for(|l| l == "uciok", handshake_timeout)?;
        for (k, v) in &spec.options {
            e.send(&format!("setoption name {k} value {v}"))?;
        }
        e.sync(handshake_timeout)?;
        Ok(e)
    }

    pub fn send(&mut self, line: &str) -> Result<(), EngineError> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| EngineError::Exited(format!("write failed: {e}")))
    }

    /// `isready` → `readyok`.
    pub fn sync(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("isready")?;
        self.wait_for(|l| l == "readyok", timeout).map(|_| ())
    }

    /// Read lines until one satisfies `done`; `on_line` sees every line first.
    pub fn read_until(
        &mut self,
        deadline: Instant,
        mut on_line: impl FnMut(&str),
        done: impl Fn(&str) -> bool,
    ) -> Result<String, EngineError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let line = line.trim().to_owned();
                    on_line(&line);
                    if done(&line) {
                        return Ok(line);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineError::Timeout(self.spec.name.clone()));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(EngineError::Exited(self.spec.name.clone()));
                }
            }
        }
    }

    fn wait_for(
        &mut self,
        done: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Result<String, EngineError> {
        self.read_until(Instant::now() + timeout, |_| {}, done)
    }

    /// Ask politely, then kill.
    pub fn quit(mut self) {
        let _ = self.send("quit");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(300) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
