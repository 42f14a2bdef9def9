//! Who may read the metrics, and over what: the web configuration file every Prometheus
//! exporter takes as `--web.config.file` (the exporter toolkit's format), so the same file and
//! the same habits work for `pmu serve`:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: /etc/pmu/server.crt   # PEM, the server's certificate then its chain
//!   key_file: /etc/pmu/server.key    # PEM, its private key
//! basic_auth_users:
//!   prometheus: $2y$10$...           # a bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//! ```
//!
//! Both parts are optional: TLS alone encrypts, users alone authenticate (their passwords
//! then cross the network in clear, so use both beyond loopback). Relative paths are read
//! from the file's directory, as the exporter toolkit does. Keys this server does not
//! implement (client certificates, TLS versions, cipher suites, HTTP headers) are refused
//! by name rather than ignored, so a file never asks for a protection it does not get.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The largest configuration file read; anything longer is refused, not read to its end.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a configuration file of at most `limit` bytes as UTF-8 text; a longer one (such as
/// `/dev/zero`) is refused after `limit + 1` bytes, whatever its size.
pub fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
}

/// Why [`read_bounded`] read no text.
#[derive(Debug)]
pub enum ReadError {
    /// Opening or reading failed.
    Io(std::io::Error),
    /// The file is longer than this many bytes.
    TooLarge(u64),
    /// The file is not UTF-8 text.
    NotUtf8,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge(n) => write!(
                f,
                "it is larger than {} KiB, the most a configuration file may be",
                n / 1024
            ),
            ReadError::NotUtf8 => write!(f, "it is not UTF-8 text"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    tls_server_config: Option<TlsForm>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsForm {
    cert_file: PathBuf,
    key_file: PathBuf,
}

/// What a web configuration file asks of the server: TLS, and the users who may read.
/// The default asks for neither (plain HTTP, anyone who can connect reads).
#[derive(Clone, Default)]
pub struct WebConfig {
    tls: Option<Arc<rustls::ServerConfig>>,
    /// User name -> bcrypt hash of the password.
    users: BTreeMap<String, String>,
}

impl fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.is_some())
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl WebConfig {
    /// Reads and checks a web configuration file: its certificate and key load, every hash is
    /// a bcrypt hash.
    pub fn load(path: &Path) -> Result<Self, WebConfigError> {
        let text = read_bounded(path, MAX_CONFIG_BYTES).map_err(WebConfigError::Read)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, base)
    }

    /// A web configuration from its YAML text; relative paths are read from `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Self, WebConfigError> {
        let form: FileForm = if text.trim().is_empty() {
            FileForm {
                tls_server_config: None,
                basic_auth_users: None,
            }
        } else {
            serde_yaml_ng::from_str(text).map_err(WebConfigError::Yaml)?
        };
        let users = form.basic_auth_users.unwrap_or_default();
        for (user, hash) in &users {
            if user.contains(':') || hash.parse::<bcrypt::HashParts>().is_err() {
                return Err(WebConfigError::User(user.clone()));
            }
        }
        let tls = match form.tls_server_config {
            Some(t) => Some(Arc::new(server_config(
                &base.join(t.cert_file),
                &base.join(t.key_file),
            )?)),
            None => None,
        };
        Ok(Self { tls, users })
    }

    /// Whether connections must speak TLS.
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Whether a request must name a user and password.
    pub fn authenticates(&self) -> bool {
        !self.users.is_empty()
    }

    pub(crate) fn server_config(&self) -> Option<&Arc<rustls::ServerConfig>> {
        self.tls.as_ref()
    }

    /// Whether a request with this `Authorization` header may read: always when no users are
    /// configured, else when it names a user whose bcrypt hash its password matches.
    pub fn authorized(&self, authorization: Option<&str>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some((user, password)) = authorization.and_then(basic_credentials) else {
            return false;
        };
        match self.users.get(&user) {
            Some(hash) => bcrypt::verify(password, hash).unwrap_or(false),
            None => {
                // As long as for a known user, so the time taken tells no names.
                let any = self.users.values().next().map_or("", String::as_str);
                let _ = bcrypt::verify(password, any);
                false
            }
        }
    }
}

/// The user and password of a `Basic` `Authorization` header.
fn basic_credentials(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// A TLS 1.2/1.3 server configuration (ring's algorithms) serving `cert` with `key`.
fn server_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig, WebConfigError> {
    let pem = |path: &Path| {
        read_bounded(path, MAX_CONFIG_BYTES)
            .map_err(|e| WebConfigError::Pem(path.to_path_buf(), e.to_string()))
    };
    let chain = CertificateDer::pem_slice_iter(pem(cert)?.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| WebConfigError::Pem(cert.to_path_buf(), e.to_string()))?;
    if chain.is_empty() {
        return Err(WebConfigError::Pem(
            cert.to_path_buf(),
            "it holds no CERTIFICATE block".to_string(),
        ));
    }
    let private = PrivateKeyDer::from_pem_slice(pem(key)?.as_bytes())
        .map_err(|e| WebConfigError::Pem(key.to_path_buf(), e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(WebConfigError::Tls)?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(WebConfigError::Tls)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Why a web configuration file was refused.
#[derive(Debug)]
pub enum WebConfigError {
    /// The file could not be read.
    Read(ReadError),
    /// The file is not the YAML this format expects.
    Yaml(serde_yaml_ng::Error),
    /// A certificate or key file could not be read or holds no PEM block of its kind.
    Pem(PathBuf, String),
    /// The certificate and key do not make a TLS configuration (they do not match, say).
    Tls(rustls::Error),
    /// This user's name holds a colon, or its password is not a bcrypt hash.
    User(String),
}

impl fmt::Display for WebConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebConfigError::Read(e) => write!(f, "{e}"),
            WebConfigError::Yaml(e) => write!(
                f,
                "{e}; the file takes tls_server_config (cert_file, key_file) and \
                 basic_auth_users (name: bcrypt hash)"
            ),
            WebConfigError::Pem(path, e) => write!(
                f,
                "cannot load {}: {e}; give a PEM file (-----BEGIN ...-----)",
                path.display()
            ),
            WebConfigError::Tls(e) => write!(
                f,
                "the certificate and key do not make a TLS server: {e}; check that the key \
                 is the certificate's"
            ),
            WebConfigError::User(user) => write!(
                f,
                "basic_auth_users: user {user:?} needs a bcrypt hash as its password (make one \
                 with `htpasswd -nBC 10 \"\" | tr -d ':\\n'`) and a name without ':'"
            ),
        }
    }
}

impl std::error::Error for WebConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WebConfigError::Read(e) => Some(e),
            WebConfigError::Yaml(e) => Some(e),
            WebConfigError::Tls(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user_password: &str) -> String {
        let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
        format!("Basic {encoded}")
    }

    #[test]
    fn an_empty_file_asks_for_nothing() {
        let web = WebConfig::parse("", Path::new(".")).unwrap();
        assert!(!web.tls() && !web.authenticates());
        assert!(web.authorized(None));
    }

    #[test]
    fn a_user_is_checked_against_its_bcrypt_hash() {
        let hash = bcrypt::hash("pa:ss", 4).unwrap();
        let text = format!("basic_auth_users:\n  alice: '{hash}'\n");
        let web = WebConfig::parse(&text, Path::new(".")).unwrap();
        assert!(web.authenticates() && !web.tls());
        // The password may hold a colon; the scheme is case-insensitive.
        assert!(web.authorized(Some(&basic("alice:pa:ss"))));
        assert!(web.authorized(Some(&basic("alice:pa:ss").replace("Basic", "basic"))));
        assert!(!web.authorized(Some(&basic("alice:pa"))));
        assert!(!web.authorized(Some(&basic("bob:pa:ss"))));
        assert!(!web.authorized(Some("Bearer abc")));
        assert!(!web.authorized(Some("Basic !!!")));
        assert!(!web.authorized(None));
    }

    #[test]
    fn unknown_keys_and_clear_text_passwords_are_refused() {
        let e = WebConfig::parse("http_server_config:\n  http2: false\n", Path::new("."));
        assert!(e.unwrap_err().to_string().contains("http_server_config"));
        let e = WebConfig::parse("basic_auth_users:\n  alice: secret\n", Path::new("."));
        assert!(matches!(e, Err(WebConfigError::User(u)) if u == "alice"));
    }

    #[test]
    fn reading_stops_at_the_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 4096).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(4096)), "{e}");
    }
}
