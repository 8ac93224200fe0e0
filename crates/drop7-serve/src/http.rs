//! The smallest HTTP/1.1 server the page needs, with its limits in one place.
//!
//! Why not a general HTTP crate: the page makes a handful of small requests, and what matters
//! here is what a hostile client cannot do. Every limit is explicit:
//!
//! - **connections**: one accept thread hands sockets to [`READERS`] reader threads through a
//!   queue of [`QUEUE`]; a reader reads the whole request and hands it to one of [`WORKERS`]
//!   handler threads. Slow clients so pin a reader, never a handler: 8 clients trickling
//!   their heads no longer starve the searches (issue 68, defect 6). When the queue is full
//!   the connection is answered `503` at once (by one more thread, with a queue of its own)
//!   and closed, so threads and memory stay bounded whatever the number of clients (the crate
//!   used before gave every connection a thread: 1,500 half-open connections, 1,500 threads);
//! - **time**: the request head must arrive within [`HEAD_TIMEOUT`] and the body within
//!   [`BODY_TIMEOUT`] (a client that trickles bytes is dropped), the whole answer must be
//!   taken within [`WRITE_TIMEOUT`];
//! - **size**: a head over [`MAX_HEAD`] bytes is `431`, a body over the caller's cap `413`;
//!   `Transfer-Encoding` bodies are refused (`411`: the page always sends a length);
//! - **one request per connection** (`Connection: close`): nothing waits on an idle socket;
//! - **a client that leaves**: [`Request::client_gone`] tells a long handler (a replay) that
//!   nobody will read its answer, so it can stop.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request-handling threads (a search holds one while it thinks).
pub const WORKERS: usize = 4;
/// Request-reading threads: each waits on one client's head and body (up to the timeouts
/// below), so this many slow clients at once are served before a new one waits.
pub const READERS: usize = 32;
/// Accepted connections waiting for a worker; beyond this a connection is answered 503.
pub const QUEUE: usize = 64;
/// The longest request head (request line and headers).
pub const MAX_HEAD: usize = 32 << 10;
/// Time a client has to send the whole request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send the whole body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Time the client has to take the whole answer.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// One request, read whole; answered with [`Request::respond`].
pub struct Request {
    pub method: String,
    /// The request target as sent (path and query).
    pub url: String,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    stream: TcpStream,
}

impl Request {
    /// A header's value (the first with that name, case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Has the client closed the connection (or reset it)? It sent its whole request and
    /// waits for the answer; bytes it sends after the request (a pipelined request, a stray
    /// CRLF after a body) are read and dropped. A client that shuts down only its sending
    /// side after the request (`nc -N`) also reads as gone, as in most servers; browsers never
    /// do that.
    pub fn client_gone(&self) -> bool {
        if self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut sink = [0u8; 1024];
        let mut gone = false;
        // Bounded: a client streaming bytes at us is still there.
        for _ in 0..64 {
            match (&self.stream).read(&mut sink) {
                Ok(0) => {
                    gone = true;
                    break;
                }
                Ok(_) => continue,
                Err(e) => {
                    gone = e.kind() != std::io::ErrorKind::WouldBlock;
                    break;
                }
            }
        }
        let _ = self.stream.set_nonblocking(false);
        gone
    }

    /// Answer and close. `HEAD` gets the headers (with the length the body would have)
    /// without the body.
    pub fn respond(self, status: u16, headers: &[(&str, &str)], body: &[u8]) {
        let head_only = self.method == "HEAD";
        write_response(self.stream, status, headers, body, head_only, DRAIN_TIMEOUT);
    }
}

/// The reason phrase of the statuses this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        499 => "Client Closed Request",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Write with one deadline for the whole answer (a per-call timeout would let a client that
/// reads a byte now and then hold the thread for ever).
fn write_all_by(s: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline
            .checked_duration_since(Instant::now())
            .ok_or(std::io::ErrorKind::TimedOut)?;
        s.set_write_timeout(Some(left.max(Duration::from_millis(1))))?;
        match s.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Send the answer and close, first taking what the client still sends for at most `drain`
/// in all: closing a socket with unread input makes the kernel reset the connection, which
/// can destroy the answer before the client reads it (a refusal sent before the body was
/// read). With a zero `drain` (the accept thread, which must not wait) only what has already
/// arrived is taken.
fn write_response(
    mut s: TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    head_only: bool,
    drain: Duration,
) {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let deadline = Instant::now() + WRITE_TIMEOUT;
    let body = if head_only { &[][..] } else { body };
    let _ = write_all_by(&mut s, head.as_bytes(), deadline)
        .and_then(|()| write_all_by(&mut s, body, deadline));
    let _ = s.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    if !drain.is_zero() {
        let until = Instant::now() + drain;
        while drained < MAX_DRAIN {
            match read_some(&mut s, &mut sink, until) {
                Some(n) => drained += n,
                None => break,
            }
        }
    } else if s.set_nonblocking(true).is_ok() {
        while drained < MAX_DRAIN {
            match s.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
}

/// How long in all a closing connection waits for the client's unread input, and how much
/// it takes.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(200);
/// The same for a busy answer: its client's request arrived long before the busy thread
/// reached it, and a queue of silent clients must not cost 200 ms each.
const BUSY_DRAIN: Duration = Duration::from_millis(50);
const MAX_DRAIN: usize = 1 << 20;

/// A refusal before any handler ran: a JSON error like the API's. `drain` as in
/// [`write_response`].
fn refuse_with(s: TcpStream, status: u16, message: &str, drain: Duration) {
    let body = serde_json::json!({"error": message, "status": status}).to_string();
    write_response(
        s,
        status,
        &[
            ("Content-Type", "application/json"),
            ("Cache-Control", "no-store"),
        ],
        body.as_bytes(),
        false,
        drain,
    );
}

fn refuse(s: TcpStream, status: u16, message: &str) {
    refuse_with(s, status, message, DRAIN_TIMEOUT);
}

/// Read from `s` into `buf` until `deadline`; false on a timeout, an error or the end.
fn read_some(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Option<usize> {
    let left = deadline.checked_duration_since(Instant::now())?;
    s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .ok()?;
    match s.read(buf) {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Read one request from `s` (a body of at most `max_body` bytes), or answer the refusal
/// and return `None`.
fn read_request(mut s: TcpStream, max_body: usize) -> Option<Request> {
    let start = Instant::now();
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            // one read may carry the end of a head a little over the limit: still 431
            if i + 4 > MAX_HEAD {
                refuse(s, 431, "request head too large");
                return None;
            }
            break i;
        }
        if buf.len() > MAX_HEAD {
            refuse(s, 431, "request head too large");
            return None;
        }
        match read_some(&mut s, &mut chunk, start + HEAD_TIMEOUT) {
            Some(n) => buf.extend_from_slice(&chunk[..n]),
            None => {
                // A client that said nothing (a probe, a closed tab) gets no answer.
                if !buf.is_empty() {
                    refuse(s, 408, "the request head did not arrive in time");
                }
                return None;
            }
        }
    };
    let Ok(head) = std::str::from_utf8(&buf[..head_end]) else {
        refuse(s, 400, "the request head is not UTF-8");
        return None;
    };
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut words = request_line.split(' ');
    let (Some(method), Some(url), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        refuse(s, 400, "malformed request line");
        return None;
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !url.starts_with('/') {
        refuse(s, 400, "malformed request line");
        return None;
    }
    let mut headers = Vec::new();
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            refuse(s, 400, "malformed header line");
            return None;
        };
        if k.is_empty() || k.contains(' ') {
            refuse(s, 400, "malformed header line");
            return None;
        }
        headers.push((k.to_owned(), v.trim().to_owned()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if get("Transfer-Encoding").is_some() {
        refuse(s, 411, "send the body with a Content-Length");
        return None;
    }
    let length = match get("Content-Length").map(|v| v.parse::<usize>()) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            refuse(s, 400, "Content-Length is not a number");
            return None;
        }
    };
    if length > max_body {
        refuse(s, 413, &format!("request body over {max_body} bytes"));
        return None;
    }
    if length > 0 && get("Expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        let _ = s.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let mut body = buf[head_end + 4..].to_vec();
    body.truncate(length);
    let deadline = Instant::now() + BODY_TIMEOUT;
    while body.len() < length {
        let want = (length - body.len()).min(chunk.len());
        match read_some(&mut s, &mut chunk[..want], deadline) {
            Some(n) => body.extend_from_slice(&chunk[..n]),
            None => {
                refuse(s, 408, "the request body did not arrive in time");
                return None;
            }
        }
    }
    Some(Request {
        method: method.to_owned(),
        url: url.to_owned(),
        headers,
        body,
        stream: s,
    })
}

/// Serve `listener` until the process ends: requests of at most `max_body` bytes, read by
/// [`READERS`] threads, go to `handle` on [`WORKERS`] threads. A handler that panics loses
/// its request (the connection closes), not its thread. Fails only when no reader or worker
/// thread can be started.
pub fn serve(
    listener: TcpListener,
    max_body: usize,
    handle: impl Fn(Request) + Send + Sync + 'static,
) -> std::io::Result<()> {
    let (tx, rx): (SyncSender<TcpStream>, Receiver<TcpStream>) = sync_channel(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    // Whole requests waiting for a handler: a reader with one waits here (bounded memory:
    // at most READERS + WORKERS bodies of `max_body`).
    let (req_tx, req_rx) = sync_channel::<Request>(WORKERS);
    let req_rx = Arc::new(Mutex::new(req_rx));
    let handle = Arc::new(handle);
    for i in 0..WORKERS {
        let (req_rx, handle) = (req_rx.clone(), handle.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("serve-{i}"))
            .spawn(move || {
                loop {
                    let next = req_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(req) = next else { break };
                    let h = &handle;
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h(req)));
                }
            });
        if let Err(e) = spawned
            && i == 0
        {
            return Err(e);
        }
    }
    for i in 0..READERS {
        let (rx, req_tx) = (rx.clone(), req_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("serve-read-{i}"))
            .spawn(move || {
                loop {
                    let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(stream) = next else { break };
                    if let Some(req) = read_request(stream, max_body)
                        && req_tx.send(req).is_err()
                    {
                        break;
                    }
                }
            });
        if let Err(e) = spawned
            && i == 0
        {
            return Err(e);
        }
    }
    drop(req_tx);
    // Busy answers are written (and drained, so the answer is not lost to a reset) by one
    // thread of their own, so the accept loop never waits; beyond its queue a connection is
    // closed unanswered.
    let (busy_tx, busy_rx) = sync_channel::<TcpStream>(QUEUE);
    let busy = std::thread::Builder::new()
        .name("serve-busy".into())
        .spawn(move || {
            for s in busy_rx {
                refuse_with(s, 503, "busy: too many connections, try again", BUSY_DRAIN);
            }
        })
        .is_ok();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        match tx.try_send(stream) {
            Ok(()) => {}
            Err(TrySendError::Full(s)) if busy => {
                if let Err(TrySendError::Full(s)) = busy_tx.try_send(s) {
                    refuse_with(
                        s,
                        503,
                        "busy: too many connections, try again",
                        Duration::ZERO,
                    );
                }
            }
            Err(TrySendError::Full(s)) => {
                refuse_with(
                    s,
                    503,
                    "busy: too many connections, try again",
                    Duration::ZERO,
                );
            }
            Err(TrySendError::Disconnected(_)) => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on a free port whose handler echoes the method, target, a header and the
    /// body length; returns its address.
    fn echo() -> std::net::SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let _ = serve(l, 100, |r| {
                let text = format!(
                    "{} {} {} {}",
                    r.method,
                    r.url,
                    r.header("x-test").unwrap_or("-"),
                    r.body.len()
                );
                r.respond(200, &[("Content-Type", "text/plain")], text.as_bytes());
            });
        });
        addr
    }

    fn exchange(addr: std::net::SocketAddr, raw: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(raw).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn requests_parse_and_limits_hold() {
        let addr = echo();
        let r = exchange(
            addr,
            b"POST /a?b=1 HTTP/1.1\r\nX-Test: yes\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(r.contains("Connection: close"), "{r}");
        assert!(r.ends_with("POST /a?b=1 yes 5"), "{r}");
        // HEAD: the length the body would have ("HEAD / - 0"), and no body.
        let r = exchange(addr, b"HEAD / HTTP/1.0\r\n\r\n");
        assert!(
            r.starts_with("HTTP/1.1 200") && r.ends_with("\r\n\r\n"),
            "{r}"
        );
        assert!(r.contains("Content-Length: 10\r\n"), "{r}");
        for (raw, status) in [
            (&b"GARBAGE\r\n\r\n"[..], "400"),
            (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", "400"),
            (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "400"),
            (b"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", "413"),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "411",
            ),
        ] {
            let r = exchange(addr, raw);
            assert!(
                r.starts_with(&format!("HTTP/1.1 {status} ")),
                "{raw:?}: {r}"
            );
        }
        let mut big = b"GET / HTTP/1.1\r\nX-Pad: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
        let r = exchange(addr, &big);
        assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
        // a head just over the limit, sent in one write, ending in its blank line
        let mut over = b"GET / HTTP/1.1\r\nX-Pad: ".to_vec();
        over.extend(std::iter::repeat_n(b'a', MAX_HEAD - over.len()));
        over.extend(b"\r\n\r\n");
        let r = exchange(addr, &over);
        assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
    }

    #[test]
    fn a_full_queue_is_answered_busy_and_silent_clients_do_not_stop_the_server() {
        let addr = echo();
        // Silent connections: each holds a reader until the head timeout, the rest queue up,
        // and those beyond the queue are told 503 at once.
        let mut silent: Vec<TcpStream> = (0..READERS + QUEUE + 2)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        // The readers take their first connection only after some were queued: fill the
        // places they left in the queue.
        std::thread::sleep(Duration::from_millis(300));
        silent.extend((0..READERS).map(|_| TcpStream::connect(addr).unwrap()));
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        let r = exchange(addr, b"GET / HTTP/1.1\r\n\r\n");
        assert!(
            r.starts_with("HTTP/1.1 503 "),
            "{r} after {:?}",
            t.elapsed()
        );
        drop(silent);
        // Once they are gone (closed: each reader's read ends at once), it answers again.
        let t0 = Instant::now();
        loop {
            let r = exchange(addr, b"GET /x HTTP/1.1\r\n\r\n");
            if r.starts_with("HTTP/1.1 200 ") {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(15), "{r}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    #[test]
    fn slow_clients_pin_readers_not_handlers() {
        let addr = echo();
        // Twice as many clients as handlers, each trickling its head a byte at a time (one
        // every 500 ms): with the handlers reading heads, each held one for the head's
        // whole 10 s, and a prompt request waited behind them (issue 68, defect 6).
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let slow: Vec<_> = (0..2 * WORKERS)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    for b in b"GET /slow HTTP/1.1\r\n".iter().cycle() {
                        if stop.load(std::sync::atomic::Ordering::Relaxed)
                            || s.write_all(&[*b]).is_err()
                        {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(500));
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let t = Instant::now();
        let r = exchange(addr, b"GET /prompt HTTP/1.1\r\n\r\n");
        let took = t.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(r.starts_with("HTTP/1.1 200 "), "{r}");
        assert!(r.ends_with("GET /prompt - 0"), "{r}");
        assert!(took < Duration::from_secs(2), "answered after {took:?}");
        for h in slow {
            h.join().unwrap();
        }
    }

    #[test]
    fn a_handler_sees_its_client_leave() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = serve(l, 0, move |r| {
                let t0 = Instant::now();
                while !r.client_gone() && t0.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let _ = tx.send(r.client_gone());
            });
        });
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /slow HTTP/1.1\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        drop(s);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
    }
}
