//! The one trust rule for every client to the server under test: the CA roots are loaded once
//! per process (rustls-native-certs: `SSL_CERT_FILE` and `SSL_CERT_DIR` when either is set,
//! otherwise the system's store where openssl-probe finds it), and one [`rustls::ClientConfig`]
//! over them, on the ring provider, serves both the raw HTTP/1.1 writer of
//! [`super::raw`] (ALPN `http/1.1` only) and reqwest in [`super::http`] (ALPN `h2`,
//! `http/1.1`). Both clients therefore trust exactly the same roots.
//!
//! An `http://` server needs no CA certificate: an empty store is not an error here, only when
//! an `https://` server is to be evaluated ([`Roots::require`], exit 4). A certificate the
//! roots do not vouch for is the server being unreachable (exit 3), named by
//! [`certificate_problem`], never a finding.

use std::sync::{Arc, OnceLock};

use rustls::{ClientConfig, RootCertStore};

/// The variable that names a CA bundle (PEM); the one a user is told to set.
pub(crate) const CERT_FILE_VAR: &str = "SSL_CERT_FILE";
/// The variable that names directories of CA certificates (PEM, `:`-separated).
pub(crate) const CERT_DIR_VAR: &str = "SSL_CERT_DIR";

/// The CA roots of this process and where they were looked for.
#[derive(Debug)]
pub(crate) struct Roots {
    /// The trust anchors (possibly none).
    store: Arc<RootCertStore>,
    /// Where they were looked for, in words (`SSL_CERT_FILE=…`, or the system's paths).
    looked_in: Vec<String>,
}

/// No CA certificate was found while an `https://` server is to be evaluated (exit 4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no CA certificates found (looked in {}; set SSL_CERT_FILE)", .looked_in.join(", "))]
pub(crate) struct NoCaCertificates {
    /// Where they were looked for.
    pub looked_in: Vec<String>,
}

impl Roots {
    /// `Ok` when there is at least one trust anchor; otherwise the error naming where they were
    /// looked for.
    pub(crate) fn require(&self) -> Result<(), NoCaCertificates> {
        if self.store.is_empty() { Err(NoCaCertificates { looked_in: self.looked_in.clone() }) } else { Ok(()) }
    }
}

/// The roots of this process, loaded on first use (unreadable files and invalid certificates
/// are skipped; what remains may be empty).
pub(crate) fn roots() -> &'static Roots {
    static ROOTS: OnceLock<Roots> = OnceLock::new();
    ROOTS.get_or_init(load_roots)
}

fn load_roots() -> Roots {
    let loaded = rustls_native_certs::load_native_certs();
    let mut store = RootCertStore::empty();
    let _ = store.add_parsable_certificates(loaded.certs);
    Roots { store: Arc::new(store), looked_in: looked_in() }
}

/// Where rustls-native-certs looks, with the same precedence: the variables when either is
/// set, otherwise the locations openssl-probe finds.
fn looked_in() -> Vec<String> {
    let file = std::env::var_os(CERT_FILE_VAR);
    let dirs = std::env::var_os(CERT_DIR_VAR);
    if file.is_some() || dirs.is_some() {
        // Say when a path named there does not exist: the usual reason nothing was found.
        let missing = |path: &std::ffi::OsStr, what: &str| {
            if std::path::Path::new(path).exists() { String::new() } else { format!(" (no such {what})") }
        };
        let mut places = Vec::new();
        if let Some(file) = file {
            places.push(format!("{CERT_FILE_VAR}={}{}", file.to_string_lossy(), missing(&file, "file")));
        }
        if let Some(dirs) = dirs {
            places.push(format!("{CERT_DIR_VAR}={}{}", dirs.to_string_lossy(), missing(&dirs, "directory")));
        }
        return places;
    }
    let probed = openssl_probe::probe();
    let mut places: Vec<String> = probed.cert_file.iter().map(|file| file.display().to_string()).collect();
    places.extend(probed.cert_dir.iter().map(|dir| dir.display().to_string()));
    if places.is_empty() {
        places.push("the system's usual CA locations, none of which exists".to_owned());
    }
    places
}

/// The TLS client configuration could not be built: the provider offers no protocol version,
/// an environment failure.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot set up TLS: {0}")]
pub(crate) struct SetupError(#[source] rustls::Error);

/// The client configuration over [`roots`] with these ALPN protocols (ring provider, TLS 1.2
/// and 1.3). Errors only when the provider offers no protocol version, an environment failure.
fn config_with_alpn(alpn: &[&[u8]]) -> Result<ClientConfig, SetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(SetupError)?
        .with_root_certificates(roots().store.clone())
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Ok(config)
}

/// The configuration of the raw HTTP/1.1 writer: ALPN `http/1.1` only, built once.
pub(crate) fn raw_config() -> Result<Arc<ClientConfig>, SetupError> {
    static RAW: OnceLock<Result<Arc<ClientConfig>, SetupError>> = OnceLock::new();
    RAW.get_or_init(|| config_with_alpn(&[b"http/1.1"]).map(Arc::new)).clone()
}

/// The configuration handed to reqwest (`tls_backend_preconfigured`): ALPN `h2` then
/// `http/1.1`, as reqwest offers on its own, over the same roots.
pub(crate) fn reqwest_config() -> Result<ClientConfig, SetupError> {
    config_with_alpn(&[b"h2", b"http/1.1"])
}

/// The certificate problem in an error's chain, in words (`invalid peer certificate:
/// UnknownIssuer`), or `None` when the error is not about the peer's certificate. `io::Error`s
/// are looked into (TLS streams wrap rustls' error in one, whose `source` skips it), and where
/// a layer keeps only the text of rustls' error, its words are found in the text.
pub(crate) fn certificate_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(problem) = rustls_problem(error) {
            return Some(problem);
        }
        if let Some(inner) = error.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref) {
            if let Some(problem) = certificate_problem(inner) {
                return Some(problem);
            }
        }
        current = error.source();
    }
    let text = error.to_string();
    let mut source = error.source();
    let mut chain = text;
    while let Some(cause) = source {
        chain.push_str(": ");
        chain.push_str(&cause.to_string());
        source = cause.source();
    }
    chain.find(CERTIFICATE_WORDS).map(|start| chain[start..].trim_end().to_owned())
}

/// How rustls words an invalid peer certificate (`rustls::Error::InvalidCertificate`).
const CERTIFICATE_WORDS: &str = "invalid peer certificate";

fn rustls_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    match error.downcast_ref::<rustls::Error>()? {
        problem @ (rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented) => {
            Some(problem.to_string())
        }
        _ => None,
    }
}

/// What a connect failure caused by `problem` says: the problem and how to trust a private CA.
pub(crate) fn untrusted(problem: &str) -> String {
    format!(
        "the server's TLS certificate was not accepted ({problem}); if it is issued by a private CA, set {CERT_FILE_VAR} to that CA's certificate (PEM)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_roots_message_lists_where_they_were_looked_for() {
        let error = NoCaCertificates { looked_in: vec!["SSL_CERT_FILE=/x".into(), "SSL_CERT_DIR=/y".into()] };
        assert_eq!(
            error.to_string(),
            "no CA certificates found (looked in SSL_CERT_FILE=/x, SSL_CERT_DIR=/y; set SSL_CERT_FILE)"
        );
    }

    #[test]
    fn certificate_problems_are_found_inside_io_errors() {
        let rustls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let wrapped = std::io::Error::new(std::io::ErrorKind::InvalidData, rustls);
        assert_eq!(certificate_problem(&wrapped).as_deref(), Some("invalid peer certificate: UnknownIssuer"));
        let other = std::io::Error::new(std::io::ErrorKind::InvalidData, rustls::Error::DecryptError);
        assert_eq!(certificate_problem(&other), None, "not a certificate problem");
        assert_eq!(certificate_problem(&std::io::Error::from(std::io::ErrorKind::ConnectionRefused)), None);
        let nested = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::Expired),
        ));
        assert_eq!(certificate_problem(&nested).as_deref(), Some("invalid peer certificate: Expired"));
        let text_only = std::io::Error::other("client error (Connect): invalid peer certificate: UnknownIssuer");
        assert_eq!(certificate_problem(&text_only).as_deref(), Some("invalid peer certificate: UnknownIssuer"));
    }

    #[test]
    fn both_configurations_offer_their_alpn_over_the_same_roots() {
        let raw = raw_config().expect("the raw configuration");
        let reqwest = reqwest_config().expect("reqwest's configuration");
        assert_eq!(raw.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert_eq!(reqwest.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
    }
}
