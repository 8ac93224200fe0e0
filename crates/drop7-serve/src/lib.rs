//! # drop7-serve — the `drop7 serve` web page and its JSON API
//!
//! One embedded page and a JSON API over the `drop7` and `ntuple` libraries, on a local port.
//! The `drop7` binary maps its `serve` arguments to [`Config`] and calls [`run`].
//!
//! The API is stateless: the page keeps a game as its seed and the columns played, and the
//! server replays them on every request (millions of moves a second). Everything read from
//! disk is under `--dir` (see `files::Root`); the page, its script and its style are
//! compiled into the binary (no CDN, no build step).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
mod api;
mod files;
mod frames;
pub mod http;

use http::Request;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// The largest request body accepted (a saved game of 2,000 moves is about 1 MB).
const MAX_BODY: usize = 8 << 20;

/// What to serve, and where.
#[derive(Debug, Clone)]
pub struct Config {
    /// Results directory to browse; nothing outside it is ever read.
    pub dir: PathBuf,
    /// Address and port to listen on (port 0 picks a free one).
    pub addr: SocketAddr,
    /// The operator's model file for `ntuple-*` policies written without `@FILE`, and for
    /// results that name their model by file name only.
    pub model: Option<PathBuf>,
}

/// An API failure: an HTTP status and one line for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
    pub fn bad(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }
}

/// What every request handler shares.
pub struct Ctx {
    pub root: files::Root,
    /// The operator's `--model` (any path: it came from the command line, not a request).
    pub model: Option<PathBuf>,
    /// Model files loaded once: tables and SHA-256.
    pub models: Mutex<api::ModelCache>,
    /// Replayed games by (policy, seed).
    pub replays: Mutex<HashMap<(String, u32), Arc<Value>>>,
    /// Accept only loopback Host headers (a guard against DNS rebinding) when listening on
    /// loopback.
    pub loopback: bool,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("--dir {}: {message}", dir.display())]
    Dir { dir: PathBuf, message: String },
    #[error("--bind/--port {addr}: {message}")]
    Listen { addr: SocketAddr, message: String },
    #[error("--model {}: {message}", path.display())]
    Model { path: PathBuf, message: String },
}

/// Listen, call `ready(bound address, canonical results directory)` once, then serve until
/// the process ends.
pub fn run(cfg: Config, ready: impl FnOnce(SocketAddr, &Path)) -> Result<(), ServeError> {
    let root = files::Root::new(&cfg.dir).map_err(|message| ServeError::Dir {
        dir: cfg.dir.clone(),
        message,
    })?;
    // A model the page would offer must be a model file (its header read, cheaply), not only
    // a name: else every n-tuple policy would fail at its first use.
    if let Some(m) = &cfg.model {
        ntuple::pack::entries_of(m).map_err(|e| ServeError::Model {
            path: m.clone(),
            message: e.to_string(),
        })?;
    }
    let addr = cfg.addr;
    let listen = |message: String| ServeError::Listen { addr, message };
    let listener = std::net::TcpListener::bind(addr).map_err(|e| listen(e.to_string()))?;
    let bound = listener.local_addr().map_err(|e| listen(e.to_string()))?;
    let ctx = Arc::new(Ctx {
        root,
        model: cfg.model.clone(),
        models: Mutex::new(api::ModelCache::default()),
        replays: Mutex::new(HashMap::new()),
        loopback: addr.ip().is_loopback(),
    });
    ready(bound, &ctx.root.dir);
    http::serve(listener, MAX_BODY, move |req| handle(&ctx, req))
        .map_err(|e| listen(format!("cannot start the request threads: {e}")))
}

/// A response body and its media type.
pub enum Body {
    Json(Value),
    Bytes(Vec<u8>, &'static str),
}

fn respond(req: Request, status: u16, body: Body) {
    let (bytes, kind) = match body {
        Body::Json(v) => (v.to_string().into_bytes(), "application/json"),
        Body::Bytes(b, k) => (b, k),
    };
    req.respond(
        status,
        &[
            ("Content-Type", kind),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
            // files from the results directory are shown, never run
            (
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
            ),
        ],
        &bytes,
    );
}

/// The host part of a Host header (`name`, `name:port`, `[v6]:port`).
fn host_name(h: &str) -> &str {
    if let Some(rest) = h.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    h.rsplit_once(':').map_or(h, |(name, _)| name)
}

fn loopback_host(h: &str) -> bool {
    let name = host_name(h.trim());
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A request another site's page made (a link, an image, a script's fetch): refused, since
/// every endpoint may run a search or read the results directory. Browsers say so in
/// `Sec-Fetch-Site` (`cross-site`) or, for scripts and forms, in an `Origin` whose host is not
/// the one the request was sent to. A request with neither (curl, scripts) is not a browser's.
fn cross_site(req: &Request) -> Option<ApiError> {
    let get = |name: &'static str| req.header(name).map(str::to_owned);
    // `same-origin` (the page's own requests) and `none` (typed in the address bar) only: a
    // page on another port of this host is `same-site`, and no-cors requests (an `<img>`) carry
    // no Origin.
    if get("Sec-Fetch-Site")
        .is_some_and(|s| !s.eq_ignore_ascii_case("same-origin") && !s.eq_ignore_ascii_case("none"))
    {
        return Some(ApiError::forbidden(
            "cross-site request refused: open the page served here instead",
        ));
    }
    if let Some(origin) = get("Origin") {
        let origin_host = origin
            .split_once("://")
            .map_or(origin.as_str(), |(_, h)| h)
            .trim_end_matches('/');
        if get("Host").is_none_or(|h| !h.eq_ignore_ascii_case(origin_host)) {
            return Some(ApiError::forbidden(format!(
                "request from origin `{origin}` refused: open the page served here instead"
            )));
        }
    }
    None
}

fn handle(ctx: &Ctx, req: Request) {
    if ctx.loopback
        && let Some(h) = req.header("Host")
        && !loopback_host(h)
    {
        let e = ApiError::forbidden(format!(
            "Host `{h}` refused: this server answers only to localhost names"
        ));
        return respond(req, e.status, error_body(&e));
    }
    if let Some(e) = cross_site(&req) {
        return respond(req, e.status, error_body(&e));
    }
    let url = req.url.clone();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let params = match parse_query(query) {
        Ok(p) => p,
        Err(e) => return respond(req, e.status, error_body(&e)),
    };
    let body = if req.method == "POST" {
        match String::from_utf8(req.body.clone()) {
            Ok(b) => Some(b),
            Err(_) => {
                let e = ApiError::bad("the request body is not UTF-8");
                return respond(req, e.status, error_body(&e));
            }
        }
    } else {
        None
    };
    let gone = || req.client_gone();
    let result = route(ctx, &req.method, path, &params, body.as_deref(), &gone);
    match result {
        Ok(b) => respond(req, 200, b),
        Err(e) => respond(req, e.status, error_body(&e)),
    }
}

fn error_body(e: &ApiError) -> Body {
    Body::Json(json!({"error": e.message, "status": e.status}))
}

/// Query parameters, percent-decoded (`+` is a space).
pub type Params = HashMap<String, String>;

fn parse_query(q: &str) -> Result<Params, ApiError> {
    let mut out = Params::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(percent_decode(k)?, percent_decode(v)?);
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, ApiError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                // Exactly two hex digits (`u8::from_str_radix` would also take `+1`).
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| ApiError::bad(format!("bad percent-escape in `{s}`")))?;
                out.push(hex);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| ApiError::bad("a query parameter is not UTF-8"))
}

/// Has the client gone away (a long handler polls it to stop early)?
pub type Gone<'a> = dyn Fn() -> bool + 'a;

fn route(
    ctx: &Ctx,
    method: &str,
    path: &str,
    p: &Params,
    body: Option<&str>,
    gone: &Gone,
) -> Result<Body, ApiError> {
    let get = method == "GET" || method == "HEAD";
    let asset = |text: &str, kind: &'static str| Body::Bytes(text.as_bytes().to_vec(), kind);
    let only_get = |b: Result<Body, ApiError>| {
        if get {
            b
        } else {
            Err(ApiError::new(405, format!("{path} answers GET only")))
        }
    };
    match path {
        "/" | "/index.html" => only_get(Ok(asset(INDEX_HTML, "text/html; charset=utf-8"))),
        "/app.js" => only_get(Ok(asset(APP_JS, "text/javascript; charset=utf-8"))),
        "/app.css" => only_get(Ok(asset(APP_CSS, "text/css; charset=utf-8"))),
        "/api/load" => match body {
            Some(b) => api::load(b).map(Body::Json),
            None => Err(ApiError::new(
                405,
                "/api/load takes POST with a saved trace",
            )),
        },
        _ if path.starts_with("/files/") => only_get(api::raw_file(ctx, &path["/files/".len()..])),
        _ if path.starts_with("/api/") => {
            let handler: fn(&Ctx, &Params, &Gone) -> Result<Body, ApiError> = match path {
                "/api/info" => |c, _, _| api::info(c).map(Body::Json),
                "/api/new" => |_, p, _| api::new_game(p).map(Body::Json),
                "/api/game" => |_, p, _| api::game(p).map(Body::Json),
                "/api/trace" => |_, p, _| api::trace(p),
                "/api/step" => |_, p, _| api::step(p).map(Body::Json),
                "/api/advice" => |c, p, _| api::advice(c, p).map(Body::Json),
                "/api/leaf" => |_, p, _| api::leaf(p).map(Body::Json),
                "/api/files" => |c, _, _| api::results_files(c).map(Body::Json),
                "/api/games" => |c, p, _| api::games(c, p).map(Body::Json),
                "/api/replay" => |c, p, g| api::replay(c, p, g).map(Body::Json),
                "/api/runs" => |c, _, _| api::runs(c).map(Body::Json),
                "/api/screen" => |c, p, _| api::screen(c, p).map(Body::Json),
                "/api/pair" => |c, p, g| api::pair(c, p, g).map(Body::Json),
                "/api/training" => |c, p, _| api::training(c, p).map(Body::Json),
                "/api/training.svg" => |c, p, _| api::training_svg(c, p),
                _ => return Err(ApiError::not_found(format!("no such API: {path}"))),
            };
            if !get {
                return Err(ApiError::new(405, format!("{path} answers GET only")));
            }
            handler(ctx, p, gone)
        }
        _ => Err(ApiError::not_found(format!("no such page: {path}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_hosts() {
        let q = parse_query("a=1&b=x%2Fy+z&c").unwrap();
        assert_eq!(q["a"], "1");
        assert_eq!(q["b"], "x/y z");
        assert_eq!(q["c"], "");
        assert!(parse_query("a=%zz").is_err());
        assert!(parse_query("a=%2").is_err());
        assert!(parse_query("a=%+1").is_err(), "a sign is not a hex digit");
        assert!(parse_query("a=%-1").is_err());
        for h in [
            "localhost:8077",
            "127.0.0.1:1",
            "[::1]:80",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(loopback_host(h), "{h}");
        }
        for h in ["evil.example:8077", "10.0.0.1", "[2001:db8::1]:80", ""] {
            assert!(!loopback_host(h), "{h}");
        }
    }
}
