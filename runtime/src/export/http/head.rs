//! Request heads in, responses out: what the server reads of a request and how it answers.

use std::io::{self, Write};

use super::Response;

/// The parts of a request the server looks at.
#[derive(Debug)]
pub(super) struct Head {
    pub method: String,
    pub path: String,
    pub accept: Option<String>,
    pub authorization: Option<String>,
}

/// Why a request head could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum HeadError {
    TooLarge,
    TimedOut,
    Malformed,
}

impl HeadError {
    pub fn response(&self) -> Response {
        match self {
            HeadError::TooLarge => Response::text(431, "request head too large\n"),
            HeadError::TimedOut => Response::text(408, "request not received in time\n"),
            HeadError::Malformed => Response::text(400, "malformed HTTP request\n"),
        }
    }
}

/// The head in `buf`: `Ok(None)` while it is still incomplete.
pub(super) fn parse(buf: &[u8]) -> Result<Option<Head>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {
            let header = |name: &str| {
                request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            Ok(Some(Head {
                accept: header("accept"),
                authorization: header("authorization"),
                method: request.method.unwrap_or_default().to_string(),
                path: request.path.unwrap_or_default().to_string(),
            }))
        }
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(HeadError::TooLarge),
        Err(_) => Err(HeadError::Malformed),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Writes `r` whole (only its head with `head_only`), announcing that the connection closes.
pub(super) fn write_response(
    stream: &mut impl Write,
    r: &Response,
    head_only: bool,
) -> io::Result<()> {
    let extra = match r.status {
        405 => "Allow: GET, HEAD\r\n",
        401 => "WWW-Authenticate: Basic realm=\"pmu\", charset=\"UTF-8\"\r\n",
        429 | 503 => "Retry-After: 1\r\n",
        _ => "",
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    let mut all = head.into_bytes();
    if !head_only {
        all.extend_from_slice(r.body.as_bytes());
    }
    stream.write_all(&all)?;
    stream.flush()
}
