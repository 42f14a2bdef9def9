//! A client's connection.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};

/// A client's connection.
pub(super) enum Conn {
    /// Plain HTTP.
    Plain(TcpStream),
}

impl Conn {
    /// The socket under it.
    pub fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
        }
    }

    /// Whether bytes that do not show up as request bytes (a TLS handshake) have arrived.
    pub fn started(&self) -> bool {
        match self {
            Conn::Plain(_) => false,
        }
    }

    /// Ends the connection: what was written goes out, then both directions close.
    pub fn close(mut self) {
        let _ = self.flush();
        let _ = self.socket().shutdown(Shutdown::Both);
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
        }
    }
}
