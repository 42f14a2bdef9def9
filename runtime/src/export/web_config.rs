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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The largest configuration file read; anything longer is refused, not read to its end.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a configuration file of at most `limit` bytes as UTF-8 text, within
/// [`crate::bounded::DEFAULT_TIMEOUT`]: a longer one (such as `/dev/zero`) is refused after
/// `limit + 1` bytes, whatever its size, and a FIFO no one writes after the timeout.
pub fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    use crate::bounded::{self, BoundedError};
    bounded::read_text(path, limit).map_err(|e| match e {
        BoundedError::Io { source, .. } => ReadError::Io(source),
        BoundedError::TooLarge { limit, .. } => ReadError::TooLarge(limit),
        BoundedError::TimedOut { after, .. } => ReadError::TimedOut(after),
        BoundedError::NotUtf8 { .. } => ReadError::NotUtf8,
    })
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
    /// Nothing (more) came from it for this long: a FIFO or a device no one writes.
    TimedOut(std::time::Duration),
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
            ReadError::TimedOut(after) => write!(
                f,
                "nothing came from it for {} s (a pipe or device no one writes?); give a \
                 regular file",
                after.as_secs()
            ),
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
            if user.contains(':') {
                return Err(WebConfigError::User(user.clone()));
            }
            check_hash(hash).map_err(|problem| WebConfigError::Hash {
                user: user.clone(),
                problem,
            })?;
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
        self.check(&user, &password)
    }

    /// Whether `password` is `user`'s: one bcrypt check, as long for an unknown user as for
    /// a known one, so the time taken tells no names.
    pub(crate) fn check(&self, user: &str, password: &str) -> bool {
        match self.users.get(user) {
            Some(hash) => bcrypt::verify(password, hash).unwrap_or(false),
            None => {
                let any = self.users.values().next().map_or("", String::as_str);
                let _ = bcrypt::verify(password, any);
                false
            }
        }
    }
}

/// The bcrypt costs accepted: below 4 bcrypt itself refuses; above 14 one check takes
/// seconds of a core, which any client could then ask for over and over.
pub const BCRYPT_COSTS: std::ops::RangeInclusive<u32> = 4..=14;

/// Why `hash` is not a bcrypt hash a login can be checked against, if it is not: a
/// `$2a$`, `$2b$` or `$2y$` prefix, a cost in [`BCRYPT_COSTS`], a 22-character salt and a
/// 31-character digest in bcrypt's base64 alphabet.
pub fn check_hash(hash: &str) -> Result<(), String> {
    let alphabet = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '/';
    let parts: Vec<&str> = hash.split('$').collect();
    let [empty, version, cost, rest] = parts[..] else {
        return Err("it is not of the form $2y$COST$SALTDIGEST".to_string());
    };
    if !empty.is_empty() || !matches!(version, "2a" | "2b" | "2y") {
        return Err(format!(
            "version {version:?} is not a bcrypt version this server checks (2a, 2b, 2y)"
        ));
    }
    if !matches!(cost.parse::<u32>(), Ok(c) if cost.len() == 2 && BCRYPT_COSTS.contains(&c)) {
        return Err(format!(
            "cost {cost:?} is not from {} to {} (a higher cost makes each check take seconds, \
             a lower one bcrypt refuses)",
            BCRYPT_COSTS.start(),
            BCRYPT_COSTS.end()
        ));
    }
    if rest.chars().count() != 53 || !rest.chars().all(alphabet) {
        return Err(
            "the salt and digest are not 53 characters of bcrypt's alphabet (./A-Za-z0-9)"
                .to_string(),
        );
    }
    // The salt's last character carries 4 bits: only these four encode them with the rest 0.
    if !matches!(rest.as_bytes()[21], b'.' | b'O' | b'e' | b'u') {
        return Err("the salt's last character is not one bcrypt writes".to_string());
    }
    Ok(())
}

/// The user and password of a `Basic` `Authorization` header.
pub(crate) fn basic_credentials(header: &str) -> Option<(String, String)> {
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
    /// This user's name holds a colon.
    User(String),
    /// This user's password hash is not one a login can be checked against in bounded time.
    Hash {
        /// The user.
        user: String,
        /// What is wrong with the hash.
        problem: String,
    },
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
            WebConfigError::Hash { user, problem } => write!(
                f,
                "basic_auth_users: user {user:?} needs a bcrypt hash a login can be checked \
                 against in bounded time, and {problem}; make one with \
                 `htpasswd -nBC 10 \"\" | tr -d ':\\n'` (cost 10)"
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
        assert!(matches!(e, Err(WebConfigError::Hash { user, .. }) if user == "alice"));
    }

    #[test]
    fn hashes_that_cannot_be_checked_in_bounded_time_are_refused() {
        let good = bcrypt::hash("pw", 4).unwrap();
        assert_eq!(check_hash(&good), Ok(()));
        let with_cost = |cost: &str| good.replacen("$04$", &format!("${cost}$"), 1);
        for (hash, says) in [
            (with_cost("03"), "cost \"03\""),
            (with_cost("99"), "cost \"99\""),
            (with_cost("31"), "cost \"31\""),
            (with_cost("15"), "cost \"15\""),
            (with_cost("4"), "cost \"4\""),
            (good.replacen('$', "!", 1), "not of the form"),
            (good.replacen("$2b$", "$2x$", 1), "version \"2x\""),
            (format!("{}!{}", &good[..10], &good[11..]), "alphabet"),
            (good[..59].to_string(), "53 characters"),
        ] {
            let e = check_hash(&hash).unwrap_err();
            assert!(e.contains(says), "{hash}: {e}");
        }
        // The 22nd character of the salt holds 4 bits: `/` would set the 2 bcrypt never sets.
        let mut odd = good.clone();
        odd.replace_range(28..29, "/");
        assert!(check_hash(&odd).unwrap_err().contains("salt"), "{odd}");
        for cost in ["10", "14"] {
            assert_eq!(check_hash(&with_cost(cost)), Ok(()));
        }
        let text = format!("basic_auth_users:\n  alice: '{}'\n", with_cost("31"));
        let e = WebConfig::parse(&text, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("alice") && e.contains("from 4 to 14"), "{e}");
    }

    #[test]
    fn reading_stops_at_the_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 4096).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(4096)), "{e}");
    }
}
