//! The runner's host, reached from the Action's container by a loopback `server-url`.
//!
//! The runner starts a Docker action's container on the job's user-defined bridge network, so
//! the container's `127.0.0.1` is not the runner's: an HTTP server a team starts from the pull
//! request's code in an earlier step is reached at the network's gateway, the runner's address
//! on that bridge. When the Action runs as the runner runs a Docker action — in a container
//! (`/.dockerenv`, or podman's `/run/.containerenv`) with the workspace mounted at
//! `/github/workspace` (a developer's container or a job container is not rewritten for) —,
//! `server-url`'s host is loopback, and nothing listens on that port in the container, [`reach`]
//! rewrites the host to the default gateway read from
//! `/proc/net/route`, and says so (log and job summary). The server must then listen on
//! `0.0.0.0` (or the bridge address), which docs/action.md says.
//!
//! The decision is pure ([`decide`]); [`reach`] feeds it the files and a connect probe.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use crate::settings::{Server, secrets};

/// Files whose presence says this process runs in a container: Docker's and podman's.
const CONTAINER_MARKERS: [&str; 2] = ["/.dockerenv", "/run/.containerenv"];
/// Where the runner mounts the workspace in a Docker action's container.
const ACTION_WORKSPACE: &str = "/github/workspace";
/// The kernel's IPv4 routing table.
const ROUTE_TABLE: &str = "/proc/net/route";
/// How long the probe of the container's own loopback port waits.
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// What [`decide`] found for a `server-url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Not a loopback URL, or not in a container: the URL is used as given.
    Unchanged,
    /// Something listens on the loopback port inside the container: the URL is used as given.
    ListeningInContainer,
    /// Loopback in a container with nothing listening, and no default gateway to use.
    NoGateway,
    /// The URL with its host replaced by the runner's address on the container's network.
    Rewritten(String),
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

/// `url` with its host replaced by `gateway` (scheme, credentials, port, path and query kept).
fn with_host(url: &str, gateway: Ipv4Addr) -> Option<String> {
    let mut parsed = url::Url::parse(url).ok()?;
    parsed.set_ip_host(IpAddr::V4(gateway)).ok()?;
    Some(parsed.to_string())
}

/// The decision: `url` as given unless it is loopback, the process runs in a container, and
/// `listening(port)` says nothing listens on the container's loopback port; then its host
/// becomes `gateway`.
pub(crate) fn decide(
    url: &str,
    in_container: bool,
    listening: impl Fn(u16) -> bool,
    gateway: Option<Ipv4Addr>,
) -> Outcome {
    let Some(port) = loopback_port(url).filter(|_| in_container) else {
        return Outcome::Unchanged;
    };
    if listening(port) {
        return Outcome::ListeningInContainer;
    }
    match gateway.and_then(|gateway| with_host(url, gateway)) {
        Some(rewritten) => Outcome::Rewritten(rewritten),
        None => Outcome::NoGateway,
    }
}

/// Whether something accepts TCP connections on `port` at the container's loopback addresses.
fn listening_here(port: u16) -> bool {
    [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)]
        .into_iter()
        .any(|ip| TcpStream::connect_timeout(&SocketAddr::new(ip, port), PROBE_TIMEOUT).is_ok())
}

/// Whether this process is a Docker action's container as the runner starts it: a container
/// marker file, and the workspace at the runner's mount point. Any other container (a
/// developer's, a job's `container:`) keeps its loopback as it is.
pub(crate) fn is_docker_action(container_marker: bool, workspace: &Path) -> bool {
    container_marker && workspace == Path::new(ACTION_WORKSPACE)
}

/// Applies [`decide`] to `server` when it is a URL and this process is a Docker action's
/// container ([`is_docker_action`] with `workspace`, the resolved `GITHUB_WORKSPACE`). Returns
/// the line to print and to put in the job summary when the URL was rewritten, or when it could
/// not be although it needed to be.
pub(crate) fn reach(server: &mut Server, workspace: &Path) -> Option<String> {
    let Server::Url(url) = server else { return None };
    let marker = CONTAINER_MARKERS.iter().any(|marker| Path::new(marker).exists());
    let in_container = is_docker_action(marker, workspace);
    if !in_container || loopback_port(url).is_none() {
        return None;
    }
    let gateway = std::fs::read_to_string(ROUTE_TABLE).ok().as_deref().and_then(default_gateway);
    match decide(url, in_container, listening_here, gateway) {
        Outcome::Rewritten(rewritten) => {
            let line = rewritten_note(url, &rewritten);
            *url = rewritten;
            Some(line)
        }
        Outcome::NoGateway => Some(format!(
            "server-url {} is a loopback address and nothing listens there in the Action's container, \
             but the container has no default route to reach the runner's host by: it is used as given",
            secrets::url_without_secrets(url)
        )),
        Outcome::Unchanged | Outcome::ListeningInContainer => None,
    }
}

/// The sentence that says which address was used.
pub(crate) fn rewritten_note(given: &str, used: &str) -> String {
    format!(
        "server-url {} reached as {}, the runner's host (the gateway of the Action container's network: \
         its own loopback is not the runner's). The server must listen on 0.0.0.0, not 127.0.0.1.",
        secrets::url_without_secrets(given),
        secrets::url_without_secrets(used)
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
    fn a_loopback_url_in_a_container_with_nothing_listening_goes_to_the_gateway() {
        let gateway = Some(Ipv4Addr::new(172, 18, 0, 1));
        assert_eq!(
            decide("http://127.0.0.1:8000/mcp?x=1", true, |_| false, gateway),
            Outcome::Rewritten("http://172.18.0.1:8000/mcp?x=1".into())
        );
        assert_eq!(
            decide("http://localhost:3000/mcp", true, |_| false, gateway),
            Outcome::Rewritten("http://172.18.0.1:3000/mcp".into())
        );
    }

    #[test]
    fn a_url_is_kept_outside_a_container_or_when_the_container_listens_itself() {
        let gateway = Some(Ipv4Addr::new(172, 18, 0, 1));
        assert_eq!(decide("http://127.0.0.1:8000/mcp", false, |_| false, gateway), Outcome::Unchanged);
        assert_eq!(
            decide("http://127.0.0.1:8000/mcp", true, |port| port == 8000, gateway),
            Outcome::ListeningInContainer
        );
        assert_eq!(decide("http://mcp-server:8000/mcp", true, |_| false, gateway), Outcome::Unchanged);
        assert_eq!(decide("http://127.0.0.1:8000/mcp", true, |_| false, None), Outcome::NoGateway);
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
    fn the_note_names_both_addresses_without_credentials() {
        let note = rewritten_note("http://user:pw@127.0.0.1:8000/mcp", "http://user:pw@172.18.0.1:8000/mcp");
        assert!(note.contains("127.0.0.1:8000/mcp reached as"), "{note}");
        assert!(note.contains("172.18.0.1:8000/mcp, the runner's host"), "{note}");
        assert!(!note.contains("pw"), "{note}");
    }
}
