//! A UCI engine as a child process: lines in, lines out, every wait bounded.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
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

/// One `key=value` word of an `--engine` group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineField {
    Name(String),
    Cmd(String),
    Arg(String),
    /// `option.NAME=VALUE`.
    Option(String, String),
}

/// A refused `--engine` group.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineSpecError {
    #[error("`{0}` is not key=value; expected name=, cmd=, arg= or option.NAME=")]
    NotKeyValue(String),
    #[error("unknown field `{0}`; expected name=, cmd=, arg= or option.NAME=")]
    UnknownField(String),
    #[error("an engine needs cmd=PATH")]
    MissingCmd,
}

impl std::str::FromStr for EngineField {
    type Err = EngineSpecError;

    /// `name=A`, `cmd=PATH`, `arg=ARG` or `option.NAME=VALUE`.
    fn from_str(w: &str) -> Result<Self, Self::Err> {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| EngineSpecError::NotKeyValue(w.to_owned()))?;
        let v = v.to_owned();
        Ok(match k {
            "name" => EngineField::Name(v),
            "cmd" => EngineField::Cmd(v),
            "arg" => EngineField::Arg(v),
            _ => match k.strip_prefix("option.") {
                Some(o) if !o.is_empty() => EngineField::Option(o.to_owned(), v),
                _ => return Err(EngineSpecError::UnknownField(w.to_owned())),
            },
        })
    }
}

impl EngineSpec {
    /// Parse the `key=value` words of one `--engine`.
    pub fn parse(words: &[String]) -> Result<Self, EngineSpecError> {
        let fields = words
            .iter()
            .map(|w| w.parse())
            .collect::<Result<Vec<EngineField>, _>>()?;
        Self::from_fields(fields)
    }

    /// The engine one `--engine` group describes (the name defaults to the command's file name;
    /// a repeated `name=`/`cmd=` takes the last).
    pub fn from_fields(
        fields: impl IntoIterator<Item = EngineField>,
    ) -> Result<Self, EngineSpecError> {
        let (mut name, mut cmd, mut args, mut options) = (None, None, vec![], vec![]);
        for f in fields {
            match f {
                EngineField::Name(v) => name = Some(v),
                EngineField::Cmd(v) => cmd = Some(v),
                EngineField::Arg(v) => args.push(v),
                EngineField::Option(k, v) => options.push((k, v)),
            }
        }
        let cmd = cmd.ok_or(EngineSpecError::MissingCmd)?;
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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// No answer in time.
    #[error("no answer in time ({0})")]
    Timeout(String),
    /// The process closed its output (crashed or quit).
    #[error("engine exited ({0})")]
    Exited(String),
    /// Could not start or write.
    #[error("{0}")]
    Io(String),
}

/// A running engine. Dropping it kills the process.
pub struct Engine {
    pub spec: EngineSpec,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    /// Start the process and do the `uci` / `setoption` / `isready` handshake. The engine's
    /// stderr goes to `stderr_log` (created or truncated) when given, else nowhere.
    pub fn start(
        spec: &EngineSpec,
        handshake_timeout: Duration,
        stderr_log: Option<&Path>,
    ) -> Result<Self, EngineError> {
        let stderr = match stderr_log {
            None => Stdio::null(),
            Some(p) => std::fs::File::create(p).map(Stdio::from).map_err(|e| {
                EngineError::Io(format!("cannot create log file {}: {e}", p.display()))
            })?,
        };
        let mut child = Command::new(&spec.cmd)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
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
