//! Connections being closed: answered, their sending side shut, what the client still sends
//! read and dropped until it closes too.
//!
//! Closing a socket with unread bytes resets the connection, and a reset can lose the
//! response in the client's buffers; so a closed connection lingers. It lingers in the accept
//! loop, not on the thread that answered: a client that keeps sending and never closes (one
//! byte a second, say) would otherwise hold an answering thread for as long as it likes. Each
//! lingers at most [`Limits::linger`] and [`MAX_DRAINED`] bytes, and at most
//! [`Limits::max_connections`] linger at once (the oldest is dropped beyond).

use std::io::{self, Read};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::{Gauges, Limits};

/// The most a closing connection is read before it is dropped anyway.
pub const MAX_DRAINED: usize = 64 * 1024;

/// A connection whose answer is sent, waiting for the client to close.
pub(super) struct Lingering {
    stream: TcpStream,
    until: Instant,
    drained: usize,
}

impl Lingering {
    /// `stream`, its sending side already shut, lingering from `now`.
    pub fn new(stream: TcpStream, now: Instant, limits: &Limits) -> Self {
        let _ = stream.set_nonblocking(true);
        Self {
            stream,
            until: now + limits.linger,
            drained: 0,
        }
    }

    /// The socket, for `poll(2)`.
    pub fn socket(&self) -> &TcpStream {
        &self.stream
    }

    /// Reads and drops what has arrived; whether the connection is done (closed by the
    /// client, in error, or past its bound).
    pub fn drain(&mut self, gauges: &Gauges) -> bool {
        let mut sink = [0u8; 4096];
        loop {
            match (&self.stream).read(&mut sink) {
                Ok(0) => return true,
                Ok(n) => {
                    self.drained += n;
                    gauges.drained.fetch_add(n as u64, Ordering::Relaxed);
                    if self.drained >= MAX_DRAINED {
                        return true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    /// Whether its time is up at `now`.
    pub fn expired(&self, now: Instant) -> bool {
        now >= self.until
    }
}

/// Every lingering connection, oldest first, and those the answering threads hand over.
#[derive(Default)]
pub(super) struct Closing {
    pub list: Vec<Lingering>,
}

impl Closing {
    /// Adds `l`, dropping the oldest beyond [`Limits::max_connections`].
    pub fn add(&mut self, l: Lingering, limits: &Limits) {
        if self.list.len() >= limits.max_connections.max(1) {
            self.list.remove(0);
        }
        self.list.push(l);
    }

    /// Drains those `ready` marks and drops those done or expired.
    pub fn service(&mut self, ready: &[bool], now: Instant, gauges: &Gauges) {
        let mut i = 0;
        self.list.retain_mut(|l| {
            let was_ready = ready.get(i).copied().unwrap_or(false);
            i += 1;
            !((was_ready && l.drain(gauges)) || l.expired(now))
        });
    }
}
