//! The connections that have not yet sent a whole request head.
//!
//! They cost a file descriptor and a buffer each, never a thread: the accept loop reads them
//! as bytes arrive. Their number is bounded per client address and in all; a new connection
//! always finds room, because a waiting connection of the address that holds the most (or of
//! its own address, when that one has its share) is closed to make it: the oldest that has
//! sent nothing, else the oldest. A client that sends its request at once (a scraper) is
//! therefore always read, however many idle connections others, or its own address, hold.

use std::io::{self, Read};
use std::net::{IpAddr, TcpStream};
use std::time::Instant;

use super::conn::Conn;
use super::head::{self, Head, HeadError};
use super::Limits;

/// A connection waiting for its request head.
pub(super) struct Waiting {
    pub conn: Conn,
    peer: IpAddr,
    accepted: Instant,
    buf: Vec<u8>,
}

/// What reading a waiting connection came to.
pub(super) enum Progress {
    /// Not all of the head yet: keep waiting.
    More,
    /// The whole head.
    Complete(Head),
    /// The client went away, or sent nothing before its time ran out: close quietly.
    Gone,
    /// Answer this error and close.
    Failed(HeadError),
}

impl Waiting {
    pub fn new(conn: Conn, peer: IpAddr, now: Instant) -> Self {
        Self {
            conn,
            peer,
            accepted: now,
            buf: Vec::new(),
        }
    }

    /// The client's address.
    pub fn peer(&self) -> IpAddr {
        self.peer
    }

    /// Whether nothing has come from the client: no request byte read, none waiting to be.
    /// A connection that has sent its request, even unread, is not idle.
    fn idle(&self) -> bool {
        if !self.buf.is_empty() || self.conn.started() {
            return false;
        }
        let mut b = [0u8; 1];
        match self.socket().peek(&mut b) {
            Ok(n) => n == 0,
            Err(e) => e.kind() != io::ErrorKind::Interrupted,
        }
    }

    /// The underlying socket, for `poll(2)`.
    pub fn socket(&self) -> &TcpStream {
        self.conn.socket()
    }

    /// Reads what has arrived (the socket is non-blocking) and parses the head so far.
    pub fn read(&mut self, limits: &Limits) -> Progress {
        let mut chunk = [0u8; 4096];
        loop {
            let room = limits.max_request_bytes - self.buf.len();
            if room == 0 {
                return Progress::Failed(HeadError::TooLarge);
            }
            let n = room.min(chunk.len());
            match self.conn.read(&mut chunk[..n]) {
                Ok(0) if self.buf.is_empty() => return Progress::Gone,
                Ok(0) => return Progress::Failed(HeadError::Malformed),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::More,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A reset, or a TLS handshake that failed: nothing to answer.
                Err(_) => return Progress::Gone,
            }
            match head::parse(&self.buf) {
                Ok(Some(head)) => return Progress::Complete(head),
                Ok(None) => {}
                Err(e) => return Progress::Failed(e),
            }
        }
    }

    /// Whether its time is up at `now`: [`Limits::idle_timeout`] for the first byte,
    /// [`Limits::request_timeout`] for the whole head. `Some(Gone)` for a connection that sent
    /// nothing, `Some(Failed(TimedOut))` for one that sent part of a head.
    pub fn expired(&self, now: Instant, limits: &Limits) -> Option<Progress> {
        let waited = now.saturating_duration_since(self.accepted);
        if self.buf.is_empty() && !self.conn.started() && waited >= limits.idle_timeout {
            Some(Progress::Gone)
        } else if waited >= limits.request_timeout {
            Some(Progress::Failed(HeadError::TimedOut))
        } else {
            None
        }
    }
}

/// Every connection waiting for its head, oldest first.
#[derive(Default)]
pub(super) struct Table {
    pub waiting: Vec<Waiting>,
}

impl Table {
    /// Makes room for a connection from `peer` (closing the oldest connection of `peer` if it
    /// holds [`Limits::max_per_client`], else of the address holding the most if the table is
    /// full), then adds it.
    pub fn admit(&mut self, w: Waiting, limits: &Limits) {
        let of_peer = self.waiting.iter().filter(|o| o.peer == w.peer).count();
        let victim = if of_peer >= limits.max_per_client.max(1) {
            Some(w.peer)
        } else if self.waiting.len() >= limits.max_connections.max(1) {
            self.busiest_peer()
        } else {
            None
        };
        if let Some(peer) = victim {
            // The oldest with nothing to read, else the oldest: a request that has arrived
            // (a scraper's, among connections its own address churns) is read, not dropped.
            let of = |o: &&Waiting| o.peer == peer;
            let idle = self.waiting.iter().position(|o| of(&o) && o.idle());
            if let Some(i) = idle.or_else(|| self.waiting.iter().position(|o| of(&o))) {
                // Dropping it closes it; the client sees the connection end.
                drop(self.waiting.remove(i));
            }
        }
        self.waiting.push(w);
    }

    /// The address holding the most waiting connections.
    fn busiest_peer(&self) -> Option<IpAddr> {
        let mut counts: std::collections::HashMap<IpAddr, usize> = Default::default();
        for w in &self.waiting {
            *counts.entry(w.peer).or_default() += 1;
        }
        counts.into_iter().max_by_key(|&(_, n)| n).map(|(p, _)| p)
    }
}
