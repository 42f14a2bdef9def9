//! A client's connection: plain HTTP, or HTTP inside TLS (rustls).
//!
//! Both are read while the socket is non-blocking (the accept loop reads every waiting
//! connection as its bytes arrive; rustls answers the handshake as its messages come in),
//! then written blocking, with a timeout, by the thread that answers.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;

/// A client's connection.
pub(super) enum Conn {
    /// Plain HTTP.
    Plain(TcpStream),
    /// HTTP over TLS.
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, Socket>>),
}

/// A socket that remembers whether any byte came in (a TLS handshake shows no request bytes).
pub(super) struct Socket {
    stream: TcpStream,
    started: bool,
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.stream.read(buf)?;
        self.started |= n > 0;
        Ok(n)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

impl Conn {
    /// A connection on `stream`, in TLS if `tls` is given.
    pub fn new(
        stream: TcpStream,
        tls: Option<&Arc<rustls::ServerConfig>>,
    ) -> Result<Self, rustls::Error> {
        Ok(match tls {
            None => Conn::Plain(stream),
            Some(config) => Conn::Tls(Box::new(rustls::StreamOwned::new(
                rustls::ServerConnection::new(Arc::clone(config))?,
                Socket {
                    stream,
                    started: false,
                },
            ))),
        })
    }

    /// The socket under it.
    pub fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => &t.sock.stream,
        }
    }

    /// Whether bytes that do not show up as request bytes (a TLS handshake) have arrived.
    pub fn started(&self) -> bool {
        match self {
            Conn::Plain(_) => false,
            Conn::Tls(t) => t.sock.started,
        }
    }

    /// Ends our side of the connection: what was written goes out (with TLS's close_notify)
    /// and the sending side is shut. The socket is returned to linger
    /// ([`super::linger`]): what the client still sends is read there, not here.
    pub fn finish(mut self) -> TcpStream {
        if let Conn::Tls(t) = &mut self {
            t.conn.send_close_notify();
        }
        let _ = self.flush();
        let stream = match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => t.into_parts().1.stream,
        };
        let _ = stream.shutdown(Shutdown::Write);
        stream
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(t) => t.flush(),
        }
    }
}
