//! A small HTTP/1.1 server for `/metrics`.
//!
//! It answers `GET` and `HEAD` with one response per connection and closes it. What any one
//! client, or many, can cost it is bounded, so a scraper keeps getting its answers:
//!
//! - A connection that has not sent its whole request head costs a file descriptor and a
//!   buffer, not a thread: the accept loop reads all of them as their bytes arrive
//!   (`poll(2)` through rustix). One that sends nothing within [`Limits::idle_timeout`], or not
//!   its whole head (a TLS handshake included) within [`Limits::request_timeout`] (`408`), is
//!   closed.
//! - One client address holds at most [`Limits::max_per_client`] of them, and all together at
//!   most [`Limits::max_connections`]; a new connection always finds room, because a waiting
//!   connection of that address (or of the address holding the most) is closed to make it:
//!   the oldest that has nothing to read, so a scraper's request that has arrived is read
//!   even while its own address churns connections.
//! - A whole request is answered on a thread of its own, at most [`Limits::max_workers`] at
//!   once and [`Limits::max_workers_per_client`] for one address (`503` beyond), with
//!   [`Limits::write_timeout`] for a client that does not read. The thread is free as soon as
//!   the answer is written: closing lingers in the accept loop (the private `linger` module).
//! - With users, password checks are remembered, bounded and backed off (the private `auth` module).
//!
//! Heads are parsed by `httparse`, at most [`Limits::max_request_bytes`] (`431` beyond). The
//! counting loop runs on a thread of its own and never waits for a client.

mod auth;
mod conn;
mod gauges;
mod head;
mod linger;
mod table;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::web_config::WebConfig;
use auth::{Gate, Verdict};
use conn::Conn;
pub use gauges::Gauges;
use head::Head;
use linger::{Closing, Lingering};
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
    /// a waiting connection of the address holding the most is closed.
    pub max_connections: usize,
    /// Connections waiting for their request head from one client address; beyond it, one
    /// of that address's waiting connections is closed.
    pub max_per_client: usize,
    /// Requests answered at once; more are answered `503`.
    pub max_workers: usize,
    /// Requests from one client address answered at once; more are answered `503`.
    pub max_workers_per_client: usize,
    /// bcrypt checks run at once for addresses that never sent a wrong password, and as many
    /// again for those that did; a request finding its checks busy is answered `503`.
    pub max_password_checks: usize,
    /// Time from accepting a connection to its first byte; then it is closed.
    pub idle_timeout: Duration,
    /// Time from accepting a connection to the end of its request head; then `408`.
    pub request_timeout: Duration,
    /// Size of the request head (request line and headers).
    pub max_request_bytes: usize,
    /// Time to write the response to a client that does not read.
    pub write_timeout: Duration,
    /// Time an answered connection is read (and what it sends dropped) before it is closed.
    pub linger: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            max_per_client: 32,
            max_workers: 64,
            max_workers_per_client: 32,
            max_password_checks: 1,
            idle_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
            max_request_bytes: 8192,
            write_timeout: Duration::from_secs(5),
            linger: Duration::from_secs(1),
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
    serve(listener, handler, limits, web, stop, Arc::default())
}

/// [`run`], counting what the server does in `gauges` (which tests and benchmarks read).
pub fn serve(
    listener: TcpListener,
    handler: Arc<Handler>,
    limits: Limits,
    web: &WebConfig,
    stop: &AtomicBool,
    gauges: Arc<Gauges>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let web = Arc::new(web.clone());
    let server = Server(Arc::new(Shared {
        handler,
        limits,
        gate: Gate::new(Arc::clone(&web), &limits, Arc::clone(&gauges)),
        web,
        gauges,
        per_client: Mutex::default(),
        handed_over: Mutex::default(),
    }));
    let mut table = Table::default();
    let mut closing = Closing::default();
    while !stop.load(Ordering::SeqCst) {
        for l in std::mem::take(&mut *locked(&server.0.handed_over)) {
            closing.add(l, &limits);
        }
        // Wait until a client connects or sends, or a tenth of a second to look at `stop`
        // and the deadlines again: nothing waits longer, and an idle server does not spin.
        let (accept, ready, lingering) = wait(&listener, &table, &closing)?;
        let now = Instant::now();
        closing.service(&lingering, now, &server.0.gauges);
        server.read_ready(&mut table, &mut closing, &ready);
        server.expire(&mut table, &mut closing, now);
        if accept {
            server.accept_all(&listener, &mut table)?;
        }
        server.0.gauges.set_lingering(closing.list.len());
    }
    Ok(())
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which of the listener, the waiting connections and the lingering ones are ready.
type Ready = (bool, Vec<bool>, Vec<bool>);

/// Polls the listener, every waiting connection and every lingering one.
fn wait(listener: &TcpListener, table: &Table, closing: &Closing) -> io::Result<Ready> {
    let mut fds = Vec::with_capacity(1 + table.waiting.len() + closing.list.len());
    fds.push(PollFd::new(listener, PollFlags::IN));
    let waiting = table.waiting.iter().map(Waiting::socket);
    let lingering = closing.list.iter().map(Lingering::socket);
    fds.extend(
        waiting
            .chain(lingering)
            .map(|s| PollFd::new(s, PollFlags::IN)),
    );
    let n = table.waiting.len();
    match poll(&mut fds, Some(&POLL_TIMEOUT)) {
        Ok(_) => {}
        Err(e) if e == rustix::io::Errno::INTR => {
            return Ok((false, vec![false; n], vec![false; fds.len() - 1 - n]))
        }
        Err(e) => return Err(e.into()),
    }
    // Readable, closed or in error: reading it tells which.
    let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
    Ok((ready[0], ready[1..=n].to_vec(), ready[1 + n..].to_vec()))
}

/// What answering needs, shared by the accept loop and the threads that answer.
struct Shared {
    handler: Arc<Handler>,
    limits: Limits,
    web: Arc<WebConfig>,
    gate: Gate,
    gauges: Arc<Gauges>,
    /// Requests being answered now, per client address.
    per_client: Mutex<HashMap<IpAddr, usize>>,
    /// Answered connections the threads hand to the accept loop to linger.
    handed_over: Mutex<Vec<Lingering>>,
}

struct Server(Arc<Shared>);

impl Server {
    /// Reads the waiting connections `ready` marks; answers or closes those that are done.
    fn read_ready(&self, table: &mut Table, closing: &mut Closing, ready: &[bool]) {
        for i in (0..table.waiting.len()).rev() {
            if !ready.get(i).copied().unwrap_or(false) {
                continue;
            }
            match table.waiting[i].read(&self.0.limits) {
                Progress::More => {}
                done => self.finish(table.waiting.remove(i), closing, done),
            }
        }
    }

    /// Closes (`Gone`) or answers `408` (part of a head) the connections whose time is up.
    fn expire(&self, table: &mut Table, closing: &mut Closing, now: Instant) {
        for i in (0..table.waiting.len()).rev() {
            if let Some(done) = table.waiting[i].expired(now, &self.0.limits) {
                self.finish(table.waiting.remove(i), closing, done);
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
                    if let Ok(conn) = Conn::new(stream, self.0.web.server_config()) {
                        let w = Waiting::new(conn, peer.ip(), Instant::now());
                        table.admit(w, &self.0.limits);
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
    fn finish(&self, w: Waiting, closing: &mut Closing, done: Progress) {
        let peer = w.peer();
        let limits = &self.0.limits;
        match done {
            // Nothing unread (it ended, or sent nothing): it closes without a reset.
            Progress::More | Progress::Gone => drop(w.conn),
            Progress::Failed(e) => closing.add(answer_now(w.conn, &e.response(), limits), limits),
            Progress::Complete(head) => {
                let auth = head.authorization.as_deref();
                let settled = self.0.gate.settle(peer, auth, Instant::now());
                if let Some(v @ (Verdict::Refused | Verdict::Wait(_))) = settled {
                    closing.add(answer_now(w.conn, &refusal(&v), limits), limits);
                } else if let Err(conn) = self.dispatch(w.conn, head, peer) {
                    let busy = Response::text(503, "too busy; try again\n");
                    closing.add(answer_now(conn, &busy, limits), limits);
                }
            }
        }
    }

    /// Answers `head` on a thread of its own; gives the connection back when
    /// [`Limits::max_workers`] are busy, or [`Limits::max_workers_per_client`] for `peer`.
    fn dispatch(&self, conn: Conn, head: Head, peer: IpAddr) -> Result<(), Conn> {
        if !self.take_worker(peer) {
            return Err(conn);
        }
        let shared = Arc::clone(&self.0);
        let spawned = std::thread::Builder::new()
            .name("pmu-serve-conn".into())
            .spawn(move || {
                let stream = respond(conn, &head, peer, &shared);
                let l = Lingering::new(stream, Instant::now(), &shared.limits);
                locked(&shared.handed_over).push(l);
                give_back_worker(&shared, peer);
            });
        if spawned.is_err() {
            // The closure, and the connection with it, is dropped: the client sees it close.
            give_back_worker(&self.0, peer);
        }
        Ok(())
    }

    /// Counts a worker for `peer`, if one is free for it.
    fn take_worker(&self, peer: IpAddr) -> bool {
        let limits = &self.0.limits;
        let mut per_client = locked(&self.0.per_client);
        let mine = per_client.entry(peer).or_default();
        let all = self.0.gauges.answering();
        if all >= limits.max_workers || *mine >= limits.max_workers_per_client.max(1) {
            if *mine == 0 {
                per_client.remove(&peer);
            }
            return false;
        }
        *mine += 1;
        self.0.gauges.set_answering(all + 1);
        true
    }
}

/// Gives back a worker [`Server::take_worker`] counted for `peer`.
fn give_back_worker(shared: &Shared, peer: IpAddr) {
    let mut per_client = locked(&shared.per_client);
    if let Some(mine) = per_client.get_mut(&peer) {
        *mine -= 1;
        if *mine == 0 {
            per_client.remove(&peer);
        }
    }
    let all = shared.gauges.answering();
    shared.gauges.set_answering(all.saturating_sub(1));
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

/// Writes a short answer on the non-blocking socket as far as it goes; the connection then
/// lingers.
fn answer_now(mut conn: Conn, r: &Response, limits: &Limits) -> Lingering {
    let _ = head::write_response(&mut conn, r, false);
    Lingering::new(conn.finish(), Instant::now(), limits)
}

/// Answers a whole request head (blocking, within the write timeout); returns the socket,
/// its sending side shut, to linger.
fn respond(mut conn: Conn, head: &Head, peer: IpAddr, shared: &Shared) -> TcpStream {
    let _ = conn.socket().set_nonblocking(false);
    let _ = conn
        .socket()
        .set_write_timeout(Some(shared.limits.write_timeout));
    // bcrypt takes its time on purpose: here, on the answering thread, not in the accept loop.
    let response = match shared
        .gate
        .admit(peer, head.authorization.as_deref(), Instant::now())
    {
        Verdict::Allowed => answer(head, &*shared.handler),
        refused => refusal(&refused),
    };
    let _ = head::write_response(&mut conn, &response, head.method == "HEAD");
    conn.finish()
}

/// The answer to a request the gate did not let through.
fn refusal(v: &Verdict) -> Response {
    match v {
        Verdict::Wait(d) => Response::text(
            429,
            format!(
                "a wrong password came from this address; try again in {} s\n",
                d.as_secs() + 1
            ),
        ),
        Verdict::Busy => Response::text(503, "too many password checks at once; try again\n"),
        Verdict::Allowed | Verdict::Refused => Response::text(
            401,
            "a user name and password are needed (HTTP basic auth)\n",
        ),
    }
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
