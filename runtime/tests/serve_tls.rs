//! `pmu serve --web.config.file`: TLS and basic-auth users as the Prometheus exporters take
//! them. A scrape in TLS with a user's password is answered; without TLS, without a password
//! or with a wrong one it is refused. The certificate is the test's own, self-signed; every
//! connection is to 127.0.0.1.

#[path = "support/serve.rs"]
#[allow(dead_code)] // Not every helper is used here.
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rustls::pki_types::ServerName;
use support::SIM;

#[path = "support/fake_machine.rs"]
mod fake_machine;
use fake_machine::pmu;

/// Writes a self-signed certificate for `localhost`, its key, and a web configuration file
/// naming them (relative paths, read from the file's directory) and user `prometheus` with
/// password `s3cret`; returns the certificate, for the client to trust.
fn web_config(dir: &Path) -> rustls::pki_types::CertificateDer<'static> {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(dir.join("server.crt"), made.cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), made.signing_key.serialize_pem()).unwrap();
    // Cost 4 keeps the test quick; real files use 10 or more.
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    std::fs::write(
        dir.join("web.yml"),
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: '{hash}'\n"
        ),
    )
    .unwrap();
    made.cert.der().clone()
}

fn client(trusted: rustls::pki_types::CertificateDer<'static>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(trusted).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// A GET of /metrics in TLS, as `user:password` if given: the response, or the TLS error.
fn tls_get(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    credentials: Option<&str>,
) -> Result<String, String> {
    let sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(config, name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, sock);
    let auth = credentials
        .map(|c| {
            let encoded = base64::engine::general_purpose::STANDARD.encode(c);
            format!("Authorization: Basic {encoded}\r\n")
        })
        .unwrap_or_default();
    write!(
        tls,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    tls.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

#[test]
fn a_scrape_needs_tls_and_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let cert = web_config(dir.path());
    let file = dir.path().join("web.yml").display().to_string();
    let mut args = SIM.to_vec();
    args.extend(["--web.config.file", &file]);
    let served = support::start(&args);
    let config = client(cert);

    let ok = tls_get(served.addr, Arc::clone(&config), Some("prometheus:s3cret")).unwrap();
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("pmu_events_total"), "{ok}");

    for refused in [None, Some("prometheus:wrong"), Some("nobody:s3cret")] {
        // A wrong password makes this address wait a second before its next check (429),
        // though remembered credentials still pass.
        if refused == Some("nobody:s3cret") {
            let out = tls_get(served.addr, Arc::clone(&config), refused).unwrap();
            assert!(out.starts_with("HTTP/1.1 429"), "{refused:?}: {out}");
            let ok = tls_get(served.addr, Arc::clone(&config), Some("prometheus:s3cret"));
            assert!(ok.unwrap().starts_with("HTTP/1.1 200"));
            std::thread::sleep(Duration::from_millis(1100));
        }
        let out = tls_get(served.addr, Arc::clone(&config), refused).unwrap();
        assert!(out.starts_with("HTTP/1.1 401"), "{refused:?}: {out}");
        assert!(out.contains("WWW-Authenticate: Basic"), "{out}");
        assert!(!out.contains("pmu_events_total"), "{out}");
    }

    // Plain HTTP gets no HTTP answer: the server waits for a TLS handshake.
    let mut plain = TcpStream::connect(served.addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("prometheus:s3cret");
    let _ = write!(
        plain,
        "GET /metrics HTTP/1.1\r\nAuthorization: Basic {auth}\r\n\r\n"
    );
    let mut raw = Vec::new();
    let _ = plain.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    assert!(
        !text.contains("HTTP/1.1") && !text.contains("pmu_"),
        "{text}"
    );

    // A client that does not trust the server's certificate fails the handshake.
    let stranger = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let err = tls_get(
        served.addr,
        client(stranger.cert.der().clone()),
        Some("prometheus:s3cret"),
    )
    .unwrap_err();
    assert!(err.contains("certificate"), "{err}");
}

#[test]
fn users_without_tls_are_asked_for_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let file = dir.path().join("web.yml");
    std::fs::write(
        &file,
        format!("basic_auth_users:\n  prometheus: '{hash}'\n"),
    )
    .unwrap();
    let file = file.display().to_string();
    let mut args = SIM.to_vec();
    args.extend(["--web.config.file", &file]);
    let served = support::start(&args);
    assert_eq!(support::get(served.addr, "/metrics").0, 401);
    let auth = base64::engine::general_purpose::STANDARD.encode("prometheus:s3cret");
    let mut s = TcpStream::connect(served.addr).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nAuthorization: Basic {auth}\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
}

/// `pmu serve --web.config.file FILE` with FILE holding `text`: exit status and stderr.
fn refused(dir: &Path, text: &str) -> (Option<i32>, String) {
    let file = dir.join("web.yml");
    std::fs::write(&file, text).unwrap();
    let out = pmu()
        .args(["serve", "--listen", "127.0.0.1:0", "--web.config.file"])
        .arg(&file)
        .args(SIM)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_web_config_it_cannot_honour_is_refused_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // A key this server does not implement: refused by name, never ignored.
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
            "client_auth_type",
        ),
        ("basic_auth_users:\n  prometheus: s3cret\n", "bcrypt hash"),
        ("tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n", "nope.crt"),
        ("basic_auth_users: [\n", "basic_auth_users"),
    ];
    for (text, says) in cases {
        let (code, stderr) = refused(dir.path(), text);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(says), "{text}: {stderr}");
        assert!(!stderr.contains("listening"), "{stderr}");
    }
    let out = pmu()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--web.config.file",
            "/dev/zero",
        ])
        .args(SIM)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("larger than 1024 KiB"), "{stderr}");
}
