//! A small HTTP/1.1 server for `/metrics`.
//!
//! It answers `GET` and `HEAD` with one response per connection and closes it. It holds its
//! ground against clients that connect and send nothing, or send slowly:
//!
//! - A connection that has not sent its whole request head costs a file descriptor and a
//!   buffer, not a thread: the accept loop reads all of them as their bytes arrive
//!   (`poll(2)` through rustix). One that sends nothing within [`Limits::idle_timeout`], or not
//!   its whole head within [`Limits::request_timeout`] (`408`), is closed.
//! - One client address holds at most [`Limits::max_per_client`] of them, and all together at
//!   most [`Limits::max_connections`]; a new connection always finds room, because the oldest
//!   waiting connection of that address (or of the address holding the most) is closed to
//!   make it. So a scraper, which sends its request at once, is read and answered however many
//!   idle connections others hold.
//! - A whole request is answered on a thread of its own, at most [`Limits::max_workers`] at
//!   once (`503` beyond), with [`Limits::write_timeout`] for a client that does not read.
//!
//! Heads are parsed by `httparse`, at most [`Limits::max_request_bytes`] (`431` beyond). The
//! counting loop runs on a thread of its own and never waits for a client.

mod conn;
mod head;
mod table;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::web_config::WebConfig;
use conn::Conn;
use head::Head;
use table::{Progress, Table, Waiting};

/// How long the accept loop waits for a connection before it looks at `stop` again.
const POLL_TIMEOUT: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// What clients may cost the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections waiting for their request head, from all clients together; beyond it,
    /// the oldest waiting connection of the address holding the most is closed.
    pub max_connections: usize,
    /// Connections waiting for their request head from one client address; beyond it, that
    /// address's oldest waiting connection is closed.
    pub max_per_client: usize,
    /// Requests answered at once; more are answered `503`.
    pub max_workers: usize,
    /// Time from accepting a connection to its first byte; then it is closed.
    pub idle_timeout: Duration,
    /// Time from accepting a connection to the end of its request head; then `408`.
    pub request_timeout: Duration,
    /// Size of the request head (request line and headers).
    pub max_request_bytes: usize,
    /// Time to write the response to a client that does not read.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            max_per_client: 32,
            max_workers: 64,
            idle_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
            max_request_bytes: 8192,
            write_timeout: Duration::from_secs(5),
        }
    }
}

/// A response: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Response {
    /// A plain-text response.
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
}

/// What a handler is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path, without its query string.
    pub path: String,
    /// The `Accept` header, if the client sent one (Prometheus asks for OpenMetrics there).
    pub accept: Option<String>,
}

/// Answers a `GET` (or `HEAD`).
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// Refuses to listen beyond this machine unless asked: counters tell what the machine runs.
pub fn check_listen(addr: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(format!(
            "{addr} is not a loopback address, and the counters tell what this machine runs; \
             pass --allow-remote to serve them to the network, or listen on 127.0.0.1"
        ))
    }
}

/// Serves connections from `listener` until `stop` is set, in TLS and to the users `web`
/// names (if it does). Returns the listener's error if accepting fails for good.
pub fn run(
    listener: TcpListener,
    handler: Arc<Handler>,
    limits: Limits,
    web: &WebConfig,
    stop: &AtomicBool,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let server = Server {
        handler,
        limits,
        web: Arc::new(web.clone()),
        busy: Arc::new(AtomicUsize::new(0)),
    };
    let mut table = Table::default();
    while !stop.load(Ordering::SeqCst) {
        // Wait until a client connects or sends, or a tenth of a second to look at `stop`
        // and the deadlines again: nothing waits longer, and an idle server does not spin.
        let (accept, ready) = wait(&listener, &table)?;
        server.read_ready(&mut table, &ready);
        server.expire(&mut table, Instant::now());
        if accept {
            server.accept_all(&listener, &mut table)?;
        }
    }
    Ok(())
}

/// Polls the listener and every waiting connection: (the listener is ready, which waiting
/// connections are).
fn wait(listener: &TcpListener, table: &Table) -> io::Result<(bool, Vec<bool>)> {
    let mut fds = Vec::with_capacity(1 + table.waiting.len());
    fds.push(PollFd::new(listener, PollFlags::IN));
    fds.extend(
        table
            .waiting
            .iter()
            .map(|w| PollFd::new(w.socket(), PollFlags::IN)),
    );
    match poll(&mut fds, Some(&POLL_TIMEOUT)) {
        Ok(_) => {}
        Err(e) if e == rustix::io::Errno::INTR => return Ok((false, vec![false; fds.len() - 1])),
        Err(e) => return Err(e.into()),
    }
    // Readable, closed or in error: reading it tells which.
    let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
    Ok((ready[0], ready[1..].to_vec()))
}

/// What answering needs, shared by the accept loop and the threads that answer.
struct Server {
    handler: Arc<Handler>,
    limits: Limits,
    web: Arc<WebConfig>,
    /// Requests being answered now.
    busy: Arc<AtomicUsize>,
}

impl Server {
    /// Reads the waiting connections `ready` marks; answers or closes those that are done.
    fn read_ready(&self, table: &mut Table, ready: &[bool]) {
        for i in (0..table.waiting.len()).rev() {
            if !ready.get(i).copied().unwrap_or(false) {
                continue;
            }
            match table.waiting[i].read(&self.limits) {
                Progress::More => {}
                done => self.finish(table.waiting.remove(i).conn, done),
            }
        }
    }

    /// Closes (`Gone`) or answers `408` (part of a head) the connections whose time is up.
    fn expire(&self, table: &mut Table, now: Instant) {
        for i in (0..table.waiting.len()).rev() {
            if let Some(done) = table.waiting[i].expired(now, &self.limits) {
                self.finish(table.waiting.remove(i).conn, done);
            }
        }
    }

    /// Accepts every connection that is ready (a bounded number at a time).
    fn accept_all(&self, listener: &TcpListener, table: &mut Table) -> io::Result<()> {
        for _ in 0..256 {
            match listener.accept() {
                Ok((stream, peer)) => {
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    // Only an exhausted TLS configuration fails here: drop the connection.
                    if let Ok(conn) = Conn::new(stream, self.web.server_config()) {
                        table.admit(Waiting::new(conn, peer.ip(), Instant::now()), &self.limits);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // A client that gave up before we accepted it, or a passing shortage of file
                // descriptors: keep serving the others.
                Err(e) if is_transient(&e) => {
                    std::thread::sleep(Duration::from_millis(20));
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Acts on what reading a connection came to: answers a whole request on a thread of
    /// its own, an error at once; closes one that is gone.
    fn finish(&self, conn: Conn, done: Progress) {
        match done {
            Progress::More | Progress::Gone => conn.close(),
            Progress::Failed(e) => answer_now(conn, &e.response()),
            Progress::Complete(head) => self.dispatch(conn, head),
        }
    }

    /// Answers `head` on a thread of its own, or `503` when [`Limits::max_workers`] are busy.
    fn dispatch(&self, conn: Conn, head: Head) {
        if self.busy.fetch_add(1, Ordering::SeqCst) >= self.limits.max_workers {
            self.busy.fetch_sub(1, Ordering::SeqCst);
            answer_now(conn, &Response::text(503, "too busy; try again\n"));
            return;
        }
        let handler = Arc::clone(&self.handler);
        let web = Arc::clone(&self.web);
        let busy = Arc::clone(&self.busy);
        let limits = self.limits;
        let spawned = std::thread::Builder::new()
            .name("pmu-serve-conn".into())
            .spawn(move || {
                respond(conn, &head, &*handler, &web, limits);
                busy.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // The closure, and the connection with it, is dropped: the client sees it close.
            self.busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::TimedOut
    ) || matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12)) // ENFILE, EMFILE, ENOBUFS, ENOMEM
}

/// Writes a short answer on the non-blocking socket as far as it goes, and closes.
fn answer_now(mut conn: Conn, r: &Response) {
    let _ = head::write_response(&mut conn, r, false);
    conn.close();
}

/// Answers a whole request head (blocking, within the write timeout) and closes.
fn respond(mut conn: Conn, head: &Head, handler: &Handler, web: &WebConfig, limits: Limits) {
    let _ = conn.socket().set_nonblocking(false);
    let _ = conn.socket().set_write_timeout(Some(limits.write_timeout));
    // bcrypt takes its time on purpose: here, on the answering thread, not in the accept loop.
    let response = if web.authorized(head.authorization.as_deref()) {
        answer(head, handler)
    } else {
        Response::text(
            401,
            "a user name and password are needed (HTTP basic auth)\n",
        )
    };
    let _ = head::write_response(&mut conn, &response, head.method == "HEAD");
    conn.close();
}

fn answer(head: &Head, handler: &Handler) -> Response {
    if head.method != "GET" && head.method != "HEAD" {
        return Response::text(405, "only GET and HEAD are served\n");
    }
    handler(&Request {
        path: head.path.split('?').next().unwrap_or_default().to_string(),
        accept: head.accept.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    struct Running {
        addr: SocketAddr,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<io::Result<()>>>,
    }

    impl Drop for Running {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    fn start(limits: Limits) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(|r: &Request| match r.path.as_str() {
            "/metrics" => Response::text(200, "ok\n"),
            _ => Response::text(404, "no\n"),
        });
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || run(listener, handler, limits, &WebConfig::default(), &stop))
        };
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn answers_get_head_unknown_paths_and_methods() {
        let server = start(Limits::default());
        let ok = exchange(server.addr, b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
        assert!(
            ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("ok\n"),
            "{ok}"
        );
        let head = exchange(server.addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(
            head.contains("Content-Length: 3") && !head.ends_with("ok\n"),
            "{head}"
        );
        let missing = exchange(server.addr, b"GET /nope HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        let post = exchange(server.addr, b"POST /metrics HTTP/1.1\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 405") && post.contains("Allow: GET, HEAD"));
        let junk = exchange(server.addr, b"\x01\x02 garbage\r\n\r\n");
        assert!(junk.starts_with("HTTP/1.1 400"), "{junk}");
    }

    #[test]
    fn huge_headers_get_431() {
        let server = start(Limits::default());
        let mut request = b"GET /metrics HTTP/1.1\r\n".to_vec();
        request.extend(format!("X-Big: {}\r\n\r\n", "a".repeat(20_000)).as_bytes());
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // The server may close before reading it all; what it answered is what counts.
        let _ = s.write_all(&request);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 431"), "{out}");
    }

    #[test]
    fn a_slow_client_times_out_while_others_are_served() {
        let server = start(Limits {
            request_timeout: Duration::from_millis(300),
            ..Limits::default()
        });
        let mut slow = TcpStream::connect(server.addr).unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        slow.write_all(b"GET /met").unwrap();
        let ok = exchange(server.addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        let mut out = String::new();
        let _ = slow.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    }

    /// Reads until the server closes the connection (or 10 s pass): what it sent.
    fn drain(s: &mut TcpStream) -> String {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn an_idle_connection_is_closed_without_an_answer() {
        let server = start(Limits {
            idle_timeout: Duration::from_millis(200),
            ..Limits::default()
        });
        let mut idle = TcpStream::connect(server.addr).unwrap();
        let since = Instant::now();
        assert_eq!(drain(&mut idle), "", "closed, not answered");
        assert!(since.elapsed() < Duration::from_secs(5), "closed early");
    }

    #[test]
    fn a_client_beyond_its_share_loses_its_oldest_idle_connection() {
        let server = start(Limits {
            max_per_client: 3,
            ..Limits::default()
        });
        let mut oldest = TcpStream::connect(server.addr).unwrap();
        let _others: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(server.addr).unwrap())
            .collect();
        // The fourth idle connection took the oldest one's place, long before its idle
        // timeout; a request from the same address is still answered.
        let since = Instant::now();
        assert_eq!(drain(&mut oldest), "");
        assert!(
            since.elapsed() < Duration::from_millis(1500),
            "closed early"
        );
        let ok = exchange(server.addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    }

    #[test]
    fn requests_beyond_the_workers_get_503() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        // The only worker answers slowly.
        let handler: Arc<Handler> = Arc::new(|_: &Request| {
            std::thread::sleep(Duration::from_millis(800));
            Response::text(200, "ok\n")
        });
        let limits = Limits {
            max_workers: 1,
            ..Limits::default()
        };
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || run(listener, handler, limits, &WebConfig::default(), &stop))
        };
        let mut first = TcpStream::connect(addr).unwrap();
        first.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let busy = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
        assert!(drain(&mut first).starts_with("HTTP/1.1 200"));
        stop.store(true, Ordering::SeqCst);
        thread.join().unwrap().unwrap();
    }

    #[test]
    fn only_loopback_without_allow_remote() {
        assert!(check_listen("127.0.0.1:9000".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:9000".parse().unwrap(), false).is_ok());
        let refused = check_listen("0.0.0.0:9000".parse().unwrap(), false).unwrap_err();
        assert!(refused.contains("--allow-remote"), "{refused}");
        assert!(check_listen("0.0.0.0:9000".parse().unwrap(), true).is_ok());
    }
}
