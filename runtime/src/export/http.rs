//! A small HTTP/1.1 server for `/metrics`.
//!
//! It answers `GET` and `HEAD` with one response per connection and closes it. Every request
//! must arrive whole within [`Limits::request_timeout`] and [`Limits::max_request_bytes`];
//! beyond [`Limits::max_connections`] open connections, a new one is told `503` at once. So a
//! slow, huge or malformed request costs one thread for a bounded time and gets an answer
//! (`408`, `431`, `400`, `404`, `405`) or is closed, and the counting loop, which runs on a
//! thread of its own, never waits for a client.
//!
//! Requests are parsed by `httparse`; sockets are `std`'s, with timeouts, so no async runtime
//! is needed for a server that answers a few scrapes a second. The accept loop waits in
//! `poll(2)` (through rustix), so it answers at once and does not spin while idle.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

/// How long the accept loop waits for a connection before it looks at `stop` again.
const POLL_TIMEOUT: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// What one client may cost the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; more are answered `503` and closed.
    pub max_connections: usize,
    /// Time from accepting a connection to the end of its request head.
    pub request_timeout: Duration,
    /// Size of the request head (request line and headers).
    pub max_request_bytes: usize,
    /// Time to write the response to a client that does not read.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 64,
            request_timeout: Duration::from_secs(10),
            max_request_bytes: 8192,
            write_timeout: Duration::from_secs(10),
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

/// Serves connections from `listener` until `stop` is set. Returns the listener's error if
/// accepting fails for good.
pub fn run(
    listener: TcpListener,
    handler: Arc<Handler>,
    limits: Limits,
    stop: &AtomicBool,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        // Wait until a client connects, or a tenth of a second to look at `stop` again: a
        // connection is accepted at once, and an idle server does not spin.
        let mut ready = [PollFd::new(&listener, PollFlags::IN)];
        match poll(&mut ready, Some(&POLL_TIMEOUT)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(e) if e == rustix::io::Errno::INTR => continue,
            Err(e) => return Err(e.into()),
        }
        match listener.accept() {
            Ok((stream, _)) => {
                if active.load(Ordering::SeqCst) >= limits.max_connections {
                    refuse_busy(stream);
                    continue;
                }
                active.fetch_add(1, Ordering::SeqCst);
                let handler = Arc::clone(&handler);
                let mine = Arc::clone(&active);
                let spawned = std::thread::Builder::new()
                    .name("pmu-serve-conn".into())
                    .spawn(move || {
                        serve_connection(stream, &*handler, limits);
                        mine.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // A client that gave up before we accepted it, or a passing shortage of file
            // descriptors: keep serving the others.
            Err(e) if is_transient(&e) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e),
        }
    }
    Ok(())
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

fn refuse_busy(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = write_response(
        &mut stream,
        &Response::text(503, "too many connections; try again\n"),
        false,
    );
    let _ = stream.shutdown(Shutdown::Both);
}

/// Reads one request head, answers it, and closes the connection.
fn serve_connection(mut stream: TcpStream, handler: &Handler, limits: Limits) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(limits.write_timeout));
    let (response, head_only) = match read_head(&mut stream, limits) {
        Ok(head) => (answer(&head, handler), head.method == "HEAD"),
        Err(HeadError::Closed) => return,
        Err(e) => (e.response(), false),
    };
    let _ = write_response(&mut stream, &response, head_only);
    let _ = stream.shutdown(Shutdown::Both);
}

/// The parts of a request the server looks at.
#[derive(Debug)]
struct Head {
    method: String,
    path: String,
    accept: Option<String>,
}

#[derive(Debug)]
enum HeadError {
    /// The client closed the connection before sending anything.
    Closed,
    TooLarge,
    TimedOut,
    Malformed,
}

impl HeadError {
    fn response(&self) -> Response {
        match self {
            HeadError::TooLarge => Response::text(431, "request head too large\n"),
            HeadError::TimedOut => Response::text(408, "request not received in time\n"),
            HeadError::Malformed | HeadError::Closed => {
                Response::text(400, "malformed HTTP request\n")
            }
        }
    }
}

fn read_head(stream: &mut TcpStream, limits: Limits) -> Result<Head, HeadError> {
    let deadline = Instant::now() + limits.request_timeout;
    let mut buf = vec![0u8; limits.max_request_bytes];
    let mut len = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HeadError::TimedOut);
        }
        // A request dripped a byte at a time still ends at the deadline.
        stream
            .set_read_timeout(Some(left))
            .map_err(|_| HeadError::Malformed)?;
        if len == buf.len() {
            return Err(HeadError::TooLarge);
        }
        match stream.read(&mut buf[len..]) {
            Ok(0) if len == 0 => return Err(HeadError::Closed),
            Ok(0) => return Err(HeadError::Malformed),
            Ok(n) => len += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(HeadError::TimedOut)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(HeadError::Closed),
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => {
                let accept = request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("accept"))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned());
                return Ok(Head {
                    method: request.method.unwrap_or_default().to_string(),
                    path: request.path.unwrap_or_default().to_string(),
                    accept,
                });
            }
            Ok(httparse::Status::Partial) => continue,
            Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooLarge),
            Err(_) => return Err(HeadError::Malformed),
        }
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

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

fn write_response(stream: &mut TcpStream, r: &Response, head_only: bool) -> io::Result<()> {
    let allow = if r.status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(r.body.as_bytes())?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            std::thread::spawn(move || run(listener, handler, limits, &stop))
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

    #[test]
    fn connections_beyond_the_limit_get_503() {
        let server = start(Limits {
            max_connections: 1,
            request_timeout: Duration::from_secs(5),
            ..Limits::default()
        });
        // One connection holds the only place until it times out or sends its request.
        let mut holder = TcpStream::connect(server.addr).unwrap();
        holder.write_all(b"GET").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let busy = exchange(server.addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
        holder.write_all(b" /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut out = String::new();
        holder
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let _ = holder.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
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
