//! Helpers shared by the integration tests: run `mcp-eval`, start the embedded demo server
//! (optionally with breaks), read the reports back.

#![allow(dead_code, reason = "each test module uses a different subset")]

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `mcp-eval` binary under test.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-eval"))
}

/// The outcome of one `mcp-eval run`.
pub(crate) struct Run {
    /// The process output.
    pub output: Output,
    /// The parsed report.json, when it was written.
    pub report: Option<Value>,
    /// The directory with the reports (kept alive while the run is).
    pub dir: tempfile::TempDir,
}

impl Run {
    /// The exit status.
    pub(crate) fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    /// The report, which must exist.
    pub(crate) fn report(&self) -> &Value {
        self.report.as_ref().unwrap_or_else(|| panic!("no report.json; stderr: {}", self.stderr()))
    }

    /// stderr as text.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The check with this id.
    pub(crate) fn check(&self, id: &str) -> &Value {
        self.report()["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|check| check["id"] == id))
            .unwrap_or_else(|| panic!("no check {id} in the report"))
    }

    /// The status of the check with this id.
    pub(crate) fn status(&self, id: &str) -> String {
        self.check(id)["status"].as_str().unwrap_or_default().to_owned()
    }

    /// Every check that fails, warns or errs, as `"ID" "STATUS": "MESSAGE"`.
    pub(crate) fn not_passing(&self) -> Vec<String> {
        self.report()["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|check| matches!(check["status"].as_str(), Some("fail" | "warn" | "error")))
            .map(|check| format!("{} {}: {}", check["id"], check["status"], check["message"]))
            .collect()
    }

    /// A file of the report directory, as text.
    pub(crate) fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name))
            .unwrap_or_else(|error| panic!("cannot read {name}: {error}"))
    }

    /// Every file of the report directory plus stdout and stderr, as one text (secret scans).
    pub(crate) fn everything(&self) -> String {
        let mut all = String::from_utf8_lossy(&self.output.stdout).into_owned();
        all.push_str(&self.stderr());
        for name in ["report.json", "junit.xml", "summary.md"] {
            if let Ok(text) = std::fs::read_to_string(self.dir.path().join(name)) {
                all.push_str(&text);
            }
        }
        all
    }
}

/// Runs `mcp-eval run ARGS --out <temp dir>`.
pub(crate) fn run(args: &[&str]) -> Run {
    run_with_env(args, &[])
}

/// Runs `mcp-eval run ARGS --out <temp dir>` with these variables added to its environment.
pub(crate) fn run_with_env(args: &[&str], vars: &[(&str, &str)]) -> Run {
    run_out(args, &["--quiet"], vars)
}

/// As [`run_with_env`], without `--quiet`: its notices and last line on stderr.
pub(crate) fn run_loud_with_env(args: &[&str], vars: &[(&str, &str)]) -> Run {
    run_out(args, &[], vars)
}

/// Runs `mcp-eval run ARGS --out <temp dir> FLAGS` with these variables added to its environment.
fn run_out(args: &[&str], flags: &[&str], vars: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().expect("utf-8 path").to_owned();
    let output = Command::new(binary())
        .arg("run")
        .args(args)
        .args(["--out", &out])
        .args(flags)
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    let report =
        std::fs::read_to_string(dir.path().join("report.json")).ok().and_then(|text| serde_json::from_str(&text).ok());
    Run { output, report, dir }
}

/// The transport a demo server is run over.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Transport {
    /// Streamable HTTP: the demo server started by [`DemoServer::start`].
    Http,
    /// stdio: the demo server started by the run, by [`demo_stdio_command`].
    Stdio,
}

/// Runs `mcp-eval run` against the demo server with these breaks over `transport`, with `args`
/// after the flag that names the server (`--server-url`, or `--server-cmd`).
pub(crate) fn run_demo(transport: Transport, breaks: &[&str], args: &[&str]) -> Run {
    match transport {
        Transport::Http => {
            let server = DemoServer::start(breaks);
            run(&[&["--server-url", server.url.as_str()][..], args].concat())
        }
        Transport::Stdio => run(&[&["--server-cmd", demo_stdio_command(breaks).as_str()][..], args].concat()),
    }
}

/// A demo server started as a child process; killed on drop.
pub(crate) struct DemoServer {
    child: Child,
    /// Its endpoint URL.
    pub url: String,
}

impl DemoServer {
    /// Starts `mcp-eval demo-server --port 0` with these breaks and waits for its URL.
    pub(crate) fn start(breaks: &[&str]) -> Self {
        let args: Vec<String> = breaks.iter().flat_map(|id| ["--break".to_owned(), (*id).to_owned()]).collect();
        Self::start_with(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Starts `mcp-eval demo-server --port 0 ARGS` and waits for its URL.
    pub(crate) fn start_with(args: &[&str]) -> Self {
        let mut command = Command::new(binary());
        command.args(["demo-server", "--port", "0"]).args(args);
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("start demo server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the demo server URL");
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected demo server output: {url:?}");
        Self { child, url }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// A server process started in its own process group, listening on a loopback port; the whole
/// group (any child the server started included) is killed on drop.
pub(crate) struct Listening {
    child: Child,
    /// The loopback port it listens on.
    pub(crate) port: u16,
}

impl Listening {
    /// Spawns `command` (stdin, stdout and stderr to null) in a process group of its own and
    /// waits until it accepts connections on 127.0.0.1:`port`; fails the test, naming it `name`,
    /// when it exits first or does not listen within `timeout`.
    pub(crate) fn start(mut command: Command, name: &str, port: u16, timeout: Duration) -> Self {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        let mut started = Self { child, port };
        let deadline = Instant::now() + timeout;
        let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        while TcpStream::connect_timeout(&address.into(), Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = started.child.try_wait() {
                panic!("{name} exited before it listened on {port}: {status}");
            }
            assert!(Instant::now() < deadline, "{name} did not listen on 127.0.0.1:{port} within {timeout:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        started
    }
}

impl Drop for Listening {
    #[allow(unsafe_code, reason = "kill(2) of the process group we created")]
    fn drop(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill(2) takes no pointers; the group id is the one `process_group(0)` made
            // for our own child, so only processes this test started are signalled.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }
}

/// The command line that starts the demo server over stdio with these breaks.
pub(crate) fn demo_stdio_command(breaks: &[&str]) -> String {
    let mut command = format!("'{}' demo-server --stdio", binary().display());
    for id in breaks {
        command.push_str(&format!(" --break {id}"));
    }
    command
}

/// A stdio server command that writes the environment it was started with to a new file in
/// `dir` (one per process: `env.<pid>`), then becomes the demo server.
pub(crate) fn env_dumping_stdio_command(dir: &Path) -> String {
    format!("env > '{}/env.'$$; exec {}", dir.display(), demo_stdio_command(&[]))
}

/// The environments the processes of [`env_dumping_stdio_command`] saw, one text per process.
pub(crate) fn env_dumps(dir: &Path) -> Vec<String> {
    let mut dumps: Vec<String> = std::fs::read_dir(dir)
        .expect("the dump directory")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("env."))
        .map(|entry| std::fs::read_to_string(entry.path()).expect("an env dump"))
        .collect();
    dumps.sort();
    dumps
}

/// The repository root.
pub(crate) fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A test certificate authority made in the test (rcgen): its PEM goes into `SSL_CERT_FILE` of
/// the `mcp-eval` under test; it issues the loopback certificate of a [`TlsFront`].
pub(crate) struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    /// The CA certificate as PEM, written to a file.
    pub pem_file: tempfile::NamedTempFile,
}

impl TestCa {
    /// A fresh CA named `name`.
    pub(crate) fn new(name: &str) -> Self {
        let key = rcgen::KeyPair::generate().expect("a CA key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(rcgen::DnType::CommonName, name);
        params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::CrlSign];
        let certificate = params.self_signed(&key).expect("the CA certificate");
        let pem_file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(pem_file.path(), certificate.pem()).expect("write the CA PEM");
        Self { issuer: rcgen::Issuer::new(params, key), pem_file }
    }

    /// The path of the CA's PEM, as text.
    pub(crate) fn pem_path(&self) -> &str {
        self.pem_file.path().to_str().expect("utf-8 path")
    }

    /// A server certificate for `localhost`, 127.0.0.1 and ::1, signed by this CA, with its key.
    fn loopback_certificate(
        &self,
    ) -> (rustls::pki_types::CertificateDer<'static>, rustls::pki_types::PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().expect("a server key");
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("server parameters");
        params.subject_alt_names.push(rcgen::SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        params.subject_alt_names.push(rcgen::SanType::IpAddress(std::net::Ipv6Addr::LOCALHOST.into()));
        params.distinguished_name.push(rcgen::DnType::CommonName, "mcp-eval test server");
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let certificate = params.signed_by(&key, &self.issuer).expect("the server certificate");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        (certificate.der().clone(), key)
    }
}

/// A TLS-terminating front on 127.0.0.1: accepts TLS (a certificate of a [`TestCa`]) and copies
/// the bytes both ways to a plain backend port on loopback. Runs in a thread with its own tokio
/// runtime; stops on drop.
pub(crate) struct TlsFront {
    /// The front's port.
    pub port: u16,
    /// TLS handshakes completed or attempted so far (one per connection accepted).
    pub accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TlsFront {
    /// A front for 127.0.0.1:`backend_port` with a certificate issued by `ca`.
    pub(crate) fn start(ca: &TestCa, backend_port: u16) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (chain, key) = ca.loopback_certificate();
        let mut config =
            rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_no_client_auth()
                .with_single_cert(vec![chain], key)
                .expect("the server certificate");
        // The backends speak HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the TLS front");
        listener.set_nonblocking(true).expect("non-blocking listener");
        let port = listener.local_addr().expect("the front's address").port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let counter = accepted.clone();
        let thread = std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the front's runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                loop {
                    let (client, _) = tokio::select! {
                        accepted = listener.accept() => match accepted { Ok(pair) => pair, Err(_) => continue },
                        _ = &mut stopped => break,
                    };
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let Ok(mut tls) = acceptor.accept(client).await else { return };
                        let Ok(mut backend) = tokio::net::TcpStream::connect(("127.0.0.1", backend_port)).await else {
                            return;
                        };
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut backend).await;
                    });
                }
            });
        });
        Self { port, accepted, stop: Some(stop), thread: Some(thread) }
    }

    /// The front's URL for a backend URL `http://127.0.0.1:PORT/PATH`: `https://127.0.0.1:FRONT/PATH`.
    pub(crate) fn url_for(&self, backend_url: &str) -> String {
        let parsed = url::Url::parse(backend_url).expect("a backend URL");
        let mut front = format!("https://127.0.0.1:{}{}", self.port, parsed.path());
        if let Some(query) = parsed.query() {
            front.push('?');
            front.push_str(query);
        }
        front
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The port of a `http://HOST:PORT/…` URL.
pub(crate) fn port_of(url: &str) -> u16 {
    url::Url::parse(url).ok().and_then(|parsed| parsed.port()).unwrap_or_else(|| panic!("no port in {url}"))
}
