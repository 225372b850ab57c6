//! The runner's host, reached from the Action's container by a loopback `server-url`.
//!
//! The runner starts a Docker action's container on the job's user-defined bridge network, so
//! the container's `127.0.0.1` is not the runner's: an HTTP server a team starts from the pull
//! request's code in an earlier step is reached at the network's gateway, the runner's address
//! on that bridge. When the Action runs as the runner runs a Docker action — in a container
//! (`/.dockerenv`, or podman's `/run/.containerenv`) with the workspace mounted at
//! `/github/workspace` (a developer's container or a job container is not forwarded for) —,
//! `server-url`'s host is loopback, and nothing listens on that port in the container, [`reach`]
//! **forwards** that loopback port to the default gateway read from `/proc/net/route`: it binds
//! the URL's loopback address and port in the container (`localhost`: `127.0.0.1` and `[::1]`)
//! and copies bytes both ways to `GATEWAY:PORT`, one task per connection ([`Forward`]; dropping
//! it, when the evaluation ends, closes the listeners and every connection). The URL is used
//! exactly as given, so the `Host` header stays `127.0.0.1:PORT` and a server's DNS-rebinding
//! (Host/Origin) check for localhost behaves as on the runner; TLS passes through untouched.
//! It says so (log and job summary). The server must listen on `0.0.0.0` (or the bridge
//! address), which docs/action.md says.
//!
//! The decision is pure ([`decide`]); [`reach`] feeds it the files and a connect probe.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::path::Path;
use std::time::Duration;

use tokio::task::{JoinHandle, JoinSet};

use crate::settings::{Server, secrets};

/// Files whose presence says this process runs in a container: Docker's and podman's.
const CONTAINER_MARKERS: [&str; 2] = ["/.dockerenv", "/run/.containerenv"];
/// Where the runner mounts the workspace in a Docker action's container.
const ACTION_WORKSPACE: &str = "/github/workspace";
/// The kernel's IPv4 routing table.
const ROUTE_TABLE: &str = "/proc/net/route";
/// How long the probe of the container's own loopback port waits.
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);
/// How long a forwarded connection waits to connect to the gateway before it is closed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What [`decide`] found for a `server-url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Not a loopback URL, or not in a container: the URL is used as given.
    Unchanged,
    /// Something listens on the loopback port inside the container: the URL is used as given.
    ListeningInContainer,
    /// Loopback in a container with nothing listening, and no default gateway to use.
    NoGateway,
    /// The URL's loopback port is forwarded to this address: the runner's on the container's
    /// network, at the same port.
    Forward(SocketAddrV4),
}

/// The loopback host and port of `url` (`127.0.0.0/8`, `::1`, `localhost`), with the default
/// port of its scheme when it names none.
pub(crate) fn loopback_port(url: &str) -> Option<u16> {
    let parsed = url::Url::parse(url).ok()?;
    let loopback = match parsed.host()? {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
    };
    if loopback { parsed.port_or_known_default() } else { None }
}

/// The container addresses a forward for loopback `url` listens on: its IP, or for
/// `localhost` both `127.0.0.1` and `[::1]` (a client may try either); empty when `url` is not
/// loopback.
pub(crate) fn listen_addresses(url: &str) -> Vec<SocketAddr> {
    let Some(port) = loopback_port(url) else { return Vec::new() };
    let Some(host) = url::Url::parse(url).ok().and_then(|parsed| parsed.host().map(|host| host.to_owned())) else {
        return Vec::new();
    };
    let ips = match host {
        url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
        url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
        url::Host::Domain(_) => vec![IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)],
    };
    ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect()
}

/// The `Host` header a client sends for `url`: its host, and its port when the URL names one.
fn host_header(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else { return String::new() };
    let host = parsed.host_str().unwrap_or_default();
    match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// The default route's gateway in a `/proc/net/route` table (destination `00000000`, the
/// gateway flag set; addresses are hexadecimal in the host's byte order, little-endian on every
/// architecture the Action's image is built for).
pub(crate) fn default_gateway(route_table: &str) -> Option<Ipv4Addr> {
    const RTF_UP: u32 = 0x1;
    const RTF_GATEWAY: u32 = 0x2;
    route_table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (destination, gateway, flags) = (fields.get(1)?, fields.get(2)?, fields.get(3)?);
        let flags = u32::from_str_radix(flags, 16).ok()?;
        if *destination != "00000000" || flags & (RTF_UP | RTF_GATEWAY) != RTF_UP | RTF_GATEWAY {
            return None;
        }
        let gateway = u32::from_str_radix(gateway, 16).ok()?;
        let address = Ipv4Addr::from(gateway.to_le_bytes());
        (!address.is_unspecified()).then_some(address)
    })
}

/// The decision: `url` as given unless it is loopback, the process runs in a container, and
/// `listening(port)` says nothing listens on the container's loopback port; then that port is
/// forwarded to the same port at `gateway`.
pub(crate) fn decide(
    url: &str,
    in_container: bool,
    listening: impl Fn(u16) -> bool,
    gateway: Option<Ipv4Addr>,
) -> Route {
    let Some(port) = loopback_port(url).filter(|_| in_container) else {
        return Route::Unchanged;
    };
    if listening(port) {
        return Route::ListeningInContainer;
    }
    match gateway {
        Some(gateway) => Route::Forward(SocketAddrV4::new(gateway, port)),
        None => Route::NoGateway,
    }
}

/// Whether something accepts TCP connections on `port` at the container's loopback addresses.
fn listening_here(port: u16) -> bool {
    [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)]
        .into_iter()
        .any(|ip| TcpStream::connect_timeout(&SocketAddr::new(ip, port), PROBE_TIMEOUT).is_ok())
}

/// Whether this process is a Docker action's container as the runner starts it: a container
/// marker file, and the workspace at the runner's mount point. Any other container (a
/// developer's, a job's `container:`) keeps its loopback as it is.
pub(crate) fn is_docker_action(container_marker: bool, workspace: &Path) -> bool {
    container_marker && workspace == Path::new(ACTION_WORKSPACE)
}

/// A running forward: listeners on loopback addresses, each connection they accept copied both
/// ways to one address. Dropping it stops the listeners and closes every connection.
pub(crate) struct Forward {
    /// One accept loop per address listened on.
    tasks: Vec<JoinHandle<()>>,
}

impl Forward {
    /// Listens on every address of `on` it can bind (at least one) and forwards each connection
    /// to `to`. Must run inside the tokio runtime. Errors when no address could be bound.
    pub(crate) fn start(on: &[SocketAddr], to: SocketAddr) -> std::io::Result<Forward> {
        let mut tasks = Vec::new();
        let mut last_error = None;
        for address in on {
            let bound = std::net::TcpListener::bind(address)
                .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
                .and_then(tokio::net::TcpListener::from_std);
            match bound {
                Ok(listener) => tasks.push(tokio::spawn(accept_loop(listener, to))),
                Err(error) => last_error = Some(error),
            }
        }
        if tasks.is_empty() {
            return Err(last_error.unwrap_or_else(|| std::io::Error::other("no address to listen on")));
        }
        Ok(Forward { tasks })
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        // Aborting an accept loop drops its JoinSet, which aborts its connections.
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Accepts connections on `listener` and copies each one's bytes both ways to `to`, one task
/// per connection, owned by this loop (they end with it).
async fn accept_loop(listener: tokio::net::TcpListener, to: SocketAddr) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let mut inbound = match listener.accept().await {
            Ok((inbound, _)) => inbound,
            // Out of descriptors, or a connection reset before it was accepted: try again
            // shortly rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        connections.spawn(async move {
            // A gateway that refuses closes the client's connection: it sees the server as down.
            let Ok(Ok(mut outbound)) = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(to)).await
            else {
                return;
            };
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
        });
    }
}

/// What [`reach`] did: the line to print and to put in the job summary, and the forward to
/// keep alive for the evaluation.
#[derive(Default)]
pub(crate) struct Reach {
    /// Said in the log, the job summary and the comment.
    pub(crate) note: Option<String>,
    /// Alive until dropped (after the evaluation).
    pub(crate) forward: Option<Forward>,
}

/// Applies [`decide`] to `server` when it is a URL and this process is a Docker action's
/// container ([`is_docker_action`] with `workspace`, the resolved `GITHUB_WORKSPACE`), and
/// starts the forward it asks for. The URL itself is never changed. Must run inside the tokio
/// runtime.
pub(crate) fn reach(server: &Server, workspace: &Path) -> Reach {
    let Server::Url(url) = server else { return Reach::default() };
    let marker = CONTAINER_MARKERS.iter().any(|marker| Path::new(marker).exists());
    let in_container = is_docker_action(marker, workspace);
    if !in_container || loopback_port(url).is_none() {
        return Reach::default();
    }
    let gateway = std::fs::read_to_string(ROUTE_TABLE).ok().as_deref().and_then(default_gateway);
    match decide(url, in_container, listening_here, gateway) {
        Route::Forward(to) => match Forward::start(&listen_addresses(url), SocketAddr::V4(to)) {
            Ok(forward) => Reach { note: Some(forwarded_note(url, to)), forward: Some(forward) },
            Err(error) => Reach {
                note: Some(format!(
                    "server-url {} is a loopback address and nothing listens there in the Action's container, \
                     but its port could not be forwarded to the runner's host at {to} ({error}): it is used as given",
                    secrets::url_without_secrets(url)
                )),
                forward: None,
            },
        },
        Route::NoGateway => Reach {
            note: Some(format!(
                "server-url {} is a loopback address and nothing listens there in the Action's container, \
                 but the container has no default route to reach the runner's host by: it is used as given",
                secrets::url_without_secrets(url)
            )),
            forward: None,
        },
        Route::Unchanged | Route::ListeningInContainer => Reach::default(),
    }
}

/// The sentence that says what was done: the URL as given, the address its port is forwarded
/// to, and what the server sees.
pub(crate) fn forwarded_note(given: &str, to: SocketAddrV4) -> String {
    format!(
        "server-url {} is forwarded to the runner's host at {to} (the container's gateway); the server sees \
         requests from the container's address with Host {}. It must listen on 0.0.0.0, not 127.0.0.1.",
        secrets::url_without_secrets(given),
        host_header(given)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container's table on a user-defined bridge (gateway 172.18.0.1).
    const BRIDGE_ROUTES: &str = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t010012AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
        eth0\t000012AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";

    #[test]
    fn the_default_gateway_is_read_from_the_route_table() {
        assert_eq!(default_gateway(BRIDGE_ROUTES), Some(Ipv4Addr::new(172, 18, 0, 1)));
    }

    #[test]
    fn a_table_without_a_default_route_has_no_gateway() {
        let only_link = "Iface\tDestination\tGateway\tFlags\n eth0\t000012AC\t00000000\t0001\n";
        assert_eq!(default_gateway(only_link), None);
        assert_eq!(default_gateway(""), None);
    }

    #[test]
    fn loopback_urls_are_recognised_with_their_port() {
        assert_eq!(loopback_port("http://127.0.0.1:8000/mcp"), Some(8000));
        assert_eq!(loopback_port("http://localhost/mcp"), Some(80));
        assert_eq!(loopback_port("http://[::1]:3001/mcp"), Some(3001));
        assert_eq!(loopback_port("http://127.1.2.3:9/mcp"), Some(9));
        assert_eq!(loopback_port("http://mcp-server:8000/mcp"), None);
        assert_eq!(loopback_port("http://172.18.0.1:8000/mcp"), None);
    }

    #[test]
    fn a_loopback_url_in_a_container_with_nothing_listening_is_forwarded_to_the_gateway() {
        let gateway = Some(Ipv4Addr::new(172, 18, 0, 1));
        assert_eq!(
            decide("http://127.0.0.1:8000/mcp?x=1", true, |_| false, gateway),
            Route::Forward(SocketAddrV4::new(Ipv4Addr::new(172, 18, 0, 1), 8000))
        );
        assert_eq!(
            decide("https://localhost/mcp", true, |_| false, gateway),
            Route::Forward(SocketAddrV4::new(Ipv4Addr::new(172, 18, 0, 1), 443))
        );
    }

    #[test]
    fn a_forward_listens_on_the_urls_loopback_address_and_localhost_on_both_families() {
        let v4 = |ip: [u8; 4], port| SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port);
        assert_eq!(listen_addresses("http://127.0.0.1:8000/mcp"), [v4([127, 0, 0, 1], 8000)]);
        assert_eq!(listen_addresses("http://127.0.0.2:9/mcp"), [v4([127, 0, 0, 2], 9)]);
        assert_eq!(
            listen_addresses("http://localhost:3000/mcp"),
            [v4([127, 0, 0, 1], 3000), SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 3000)]
        );
        assert_eq!(listen_addresses("http://[::1]:3001/mcp"), [SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 3001)]);
        assert!(listen_addresses("http://mcp-server:8000/mcp").is_empty());
    }

    #[test]
    fn a_url_is_kept_outside_a_container_or_when_the_container_listens_itself() {
        let gateway = Some(Ipv4Addr::new(172, 18, 0, 1));
        assert_eq!(decide("http://127.0.0.1:8000/mcp", false, |_| false, gateway), Route::Unchanged);
        assert_eq!(
            decide("http://127.0.0.1:8000/mcp", true, |port| port == 8000, gateway),
            Route::ListeningInContainer
        );
        assert_eq!(decide("http://mcp-server:8000/mcp", true, |_| false, gateway), Route::Unchanged);
        assert_eq!(decide("http://127.0.0.1:8000/mcp", true, |_| false, None), Route::NoGateway);
    }

    #[test]
    fn only_a_container_with_the_runners_workspace_mount_is_the_docker_action() {
        assert!(is_docker_action(true, Path::new("/github/workspace")));
        // A developer's or CI's own container (it has /.dockerenv too), a job container
        // (`container:`, workspace under /__w), and the runner itself are not.
        assert!(!is_docker_action(true, Path::new("/tmp/work")));
        assert!(!is_docker_action(true, Path::new("/__w/repo/repo")));
        assert!(!is_docker_action(false, Path::new("/github/workspace")));
    }

    #[test]
    fn the_note_names_the_url_the_forward_and_the_host_header_without_credentials() {
        let to = SocketAddrV4::new(Ipv4Addr::new(172, 18, 0, 1), 8000);
        let note = forwarded_note("http://user:pw@127.0.0.1:8000/mcp", to);
        assert!(
            note.contains(
                "127.0.0.1:8000/mcp is forwarded to the runner's host at 172.18.0.1:8000 \
                 (the container's gateway); the server sees requests from the container's address with Host 127.0.0.1:8000"
            ),
            "{note}"
        );
        assert!(!note.contains("pw"), "{note}");
        assert!(forwarded_note("https://localhost/mcp", to).contains("with Host localhost."));
    }

    /// A free port on `ip` (bound, then released).
    fn free_port(ip: IpAddr) -> u16 {
        std::net::TcpListener::bind(SocketAddr::new(ip, 0)).expect("bind").local_addr().expect("address").port()
    }

    /// A stand-in for the runner's host: answers each connection with the bytes it read up to
    /// the end of the request head, behind a prefix.
    async fn echo_gateway() -> SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the gateway");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.ends_with(b"\r\n\r\n") {
                        let Ok(read) = stream.read(&mut buffer).await else { return };
                        if read == 0 {
                            return;
                        }
                        head.extend_from_slice(&buffer[..read]);
                    }
                    let _ = stream.write_all(b"GATEWAY SAW:").await;
                    let _ = stream.write_all(&head).await;
                });
            }
        });
        address
    }

    /// Sends `request` to `address` and reads the answer until the other side closes.
    async fn exchange(address: SocketAddr, request: &[u8]) -> std::io::Result<Vec<u8>> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(address).await?;
        stream.write_all(request).await?;
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await??;
        Ok(answer)
    }

    #[tokio::test]
    async fn a_forward_copies_bytes_both_ways_with_the_host_header_unchanged() {
        let gateway = echo_gateway().await;
        let port = free_port(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let on = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        let _forward = Forward::start(&[on], gateway).expect("forward");
        let request = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://localhost\r\n\r\n");
        // Several connections at once, each its own copy.
        let (first, second) = tokio::join!(exchange(on, request.as_bytes()), exchange(on, request.as_bytes()));
        for answer in [first.expect("first"), second.expect("second")] {
            assert_eq!(String::from_utf8_lossy(&answer), format!("GATEWAY SAW:{request}"));
        }
    }

    #[tokio::test]
    async fn a_dropped_forward_stops_listening() {
        let gateway = echo_gateway().await;
        let on = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let forward = Forward::start(&[on], gateway).expect("forward");
        assert!(exchange(on, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.is_ok());
        drop(forward);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(tokio::net::TcpStream::connect(on).await.is_err(), "still listening after the forward was dropped");
    }

    #[tokio::test]
    async fn a_connection_the_gateway_refuses_is_closed_not_left_hanging() {
        let refused = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let on = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let _forward = Forward::start(&[on], refused).expect("forward");
        let answer = exchange(on, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
        // Closed (EOF or reset) within the exchange's timeout, with nothing from anyone.
        assert!(answer.as_ref().map_or(true, Vec::is_empty), "{answer:?}");
    }

    #[tokio::test]
    async fn a_forward_with_no_address_it_can_bind_is_an_error() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let on = taken.local_addr().expect("address");
        assert!(Forward::start(&[on], on).is_err());
    }
}
