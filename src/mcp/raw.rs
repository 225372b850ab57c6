//! A minimal HTTP/1.1 client over a TCP stream, for probes that need bytes an HTTP library will
//! not send: header names in a chosen case, header values with invalid characters. It speaks
//! `http://` and `https://` (TLS with ALPN `http/1.1` only, trusting the roots of
//! [`super::tls`]: the same as reqwest's), sends `Connection: close`, and reads the response
//! with a size cap (Content-Length, chunked, or until close). TLS changes nothing of the bytes:
//! the request is written exactly as over plain TCP.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::exchange::Failure;

/// A connection the raw writer talks over: plain TCP or TLS over TCP.
trait Wire: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Wire for T {}

/// A raw response.
#[derive(Debug)]
pub(crate) struct RawResponse {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
    /// False when the body ended early (connection closed mid-body, or the deadline came).
    pub complete: bool,
    /// True when the deadline came while the body was still being read (a stream held open):
    /// `body` is what had come by then.
    pub timed_out: bool,
}

/// The parts of an `http(s)://[user:password@]host:port/path` URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UrlParts {
    /// True for `https://`: the request goes over TLS.
    pub tls: bool,
    /// `user:password` from the URL, when present (sent as Basic credentials, as an HTTP
    /// library does).
    pub userinfo: Option<String>,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port (80 for `http://`, 443 for `https://` when absent).
    pub port: u16,
    /// Path and query, `/` when absent.
    pub path: String,
    /// The `Host` header value.
    pub authority: String,
}

/// Splits an `http://` or `https://` URL (parsed by the `url` crate); `None` for other schemes
/// or malformed URLs.
pub(crate) fn split_url(url: &str) -> Option<UrlParts> {
    let parsed = url::Url::parse(url).ok()?;
    let tls = match parsed.scheme() {
        "http" => false,
        "https" => true,
        _ => return None,
    };
    let host = match parsed.host()? {
        url::Host::Domain(domain) => domain.to_owned(),
        url::Host::Ipv4(address) => address.to_string(),
        url::Host::Ipv6(address) => address.to_string(),
    };
    let port = parsed.port_or_known_default()?;
    let userinfo = match (parsed.username(), parsed.password()) {
        ("", None) => None,
        (user, Some(password)) => Some(format!("{user}:{password}")),
        (user, None) => Some(user.to_owned()),
    };
    let mut path = parsed.path().to_owned();
    if let Some(query) = parsed.query() {
        path.push('?');
        path.push_str(query);
    }
    let host_text = parsed.host_str()?;
    let authority = match parsed.port() {
        Some(port) => format!("{host_text}:{port}"),
        None => host_text.to_owned(),
    };
    Some(UrlParts { tls, userinfo, host, port, path, authority })
}

/// Sends one request exactly as given (header names keep their case; values are written as
/// bytes) and reads the response. The caller applies the timeout.
pub(crate) async fn send(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: &[u8],
    max_bytes: usize,
    deadline: tokio::time::Instant,
) -> Result<RawResponse, Failure> {
    let parts = split_url(url)
        .ok_or_else(|| Failure::Connect(format!("raw probes need an http:// or https:// URL, not `{url}`")))?;
    let mut stream = connect(&parts).await?;
    let mut request = Vec::with_capacity(512 + body.len());
    request.extend_from_slice(format!("{method} {} HTTP/1.1\r\n", parts.path).as_bytes());
    // A probe may set its own Host (H-26); otherwise the URL's authority is sent.
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.extend_from_slice(format!("Host: {}\r\n", parts.authority).as_bytes());
    }
    if let Some(userinfo) = &parts.userinfo {
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization")) {
            use base64::Engine;
            let credentials = base64::engine::general_purpose::STANDARD.encode(percent_decode(userinfo));
            request.extend_from_slice(format!("Authorization: Basic {credentials}\r\n").as_bytes());
        }
    }
    for (name, value) in headers {
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(body);
    stream.write_all(&request).await.map_err(|error| Failure::Closed(error.to_string()))?;
    // TLS buffers records: send them all before waiting for the answer.
    stream.flush().await.map_err(|error| Failure::Closed(error.to_string()))?;

    let mut buffer = Vec::with_capacity(8192);
    let mut chunk = [0u8; 16384];
    // Read the head.
    let (status, headers, head_len) = loop {
        let read = read_some(&mut stream, &mut chunk).await.map_err(|error| Failure::Closed(error.to_string()))?;
        if read == 0 {
            return Err(Failure::Closed("connection closed before the response head".into()));
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut header_slots = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut header_slots);
        match response.parse(&buffer) {
            Ok(httparse::Status::Complete(head_len)) => {
                let status = response.code.unwrap_or(0);
                let headers = response
                    .headers
                    .iter()
                    .map(|header| {
                        (header.name.to_ascii_lowercase(), String::from_utf8_lossy(header.value).into_owned())
                    })
                    .collect::<Vec<_>>();
                break (status, headers, head_len);
            }
            Ok(httparse::Status::Partial) if buffer.len() < 64 * 1024 => continue,
            Ok(httparse::Status::Partial) => {
                return Err(Failure::NotJsonRpc("response head larger than 64 KiB".into()));
            }
            Err(error) => return Err(Failure::NotJsonRpc(format!("malformed HTTP response: {error}"))),
        }
    };
    let mut body = buffer.split_off(head_len);
    let header = |name: &str| headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
    let chunked = header("transfer-encoding").is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    let length: Option<usize> = header("content-length").and_then(|value| value.trim().parse().ok());
    let no_body = method == "HEAD" || status == 204 || status == 304 || (100..200).contains(&status);
    let mut complete = true;
    let mut timed_out = false;
    if !no_body {
        loop {
            if let Some(length) = length.filter(|_| !chunked) {
                if body.len() >= length {
                    body.truncate(length);
                    break;
                }
            }
            if chunked && chunked_complete(&body) {
                break;
            }
            if body.len() > max_bytes {
                return Err(Failure::TooLarge(max_bytes));
            }
            match tokio::time::timeout_at(deadline, read_some(&mut stream, &mut chunk)).await {
                Ok(Ok(0)) => {
                    complete = length.is_none() && !chunked;
                    break;
                }
                Ok(Ok(read)) => body.extend_from_slice(&chunk[..read]),
                Ok(Err(_)) => {
                    complete = false;
                    break;
                }
                Err(_) => {
                    (complete, timed_out) = (false, true);
                    break;
                }
            }
        }
    } else {
        body.clear();
    }
    if chunked {
        body = dechunk(&body);
    }
    Ok(RawResponse { status, headers, body, complete, timed_out })
}

/// Opens the connection: TCP, then TLS for `https://` (SNI and the certificate check on the
/// URL's host, ALPN `http/1.1`). A refused connection or a certificate the roots of
/// [`super::tls`] do not vouch for is a [`Failure::Connect`].
async fn connect(parts: &UrlParts) -> Result<Box<dyn Wire>, Failure> {
    let tcp = TcpStream::connect((parts.host.as_str(), parts.port))
        .await
        .map_err(|error| Failure::Connect(error.to_string()))?;
    if !parts.tls {
        return Ok(Box::new(tcp));
    }
    let config = super::tls::raw_config().map_err(|error| Failure::Connect(error.to_string()))?;
    let name = rustls::pki_types::ServerName::try_from(parts.host.clone())
        .map_err(|error| Failure::Connect(format!("`{}` is not a TLS server name: {error}", parts.host)))?;
    let tls = tokio_rustls::TlsConnector::from(config).connect(name, tcp).await.map_err(|error| {
        Failure::Connect(match super::tls::certificate_problem(&error) {
            Some(problem) => super::tls::untrusted(&problem),
            None => format!("TLS handshake failed: {error}"),
        })
    })?;
    Ok(Box::new(tls))
}

/// Reads what is there; a TLS peer that closes without `close_notify` has ended the stream
/// like a TCP close (0 bytes), as HTTP/1.1 clients treat it, so the body rules decide whether
/// it was complete.
async fn read_some(stream: &mut Box<dyn Wire>, buffer: &mut [u8]) -> std::io::Result<usize> {
    match stream.read(buffer).await {
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
        other => other,
    }
}

/// Decodes `%XX` escapes (userinfo in URLs).
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            if let Some(byte) =
                std::str::from_utf8(&bytes[index + 1..index + 3]).ok().and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
                out.push(byte);
                index += 3;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    out
}

/// True when a chunked body has its terminating zero-size chunk.
fn chunked_complete(body: &[u8]) -> bool {
    let mut position = 0;
    loop {
        let Some(line_end) = find_crlf(&body[position..]) else { return false };
        let size_text = String::from_utf8_lossy(&body[position..position + line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim().to_owned();
        let Ok(size) = usize::from_str_radix(&size_text, 16) else { return false };
        position += line_end + 2;
        if size == 0 {
            return true;
        }
        position += size + 2;
        if position > body.len() {
            return false;
        }
    }
}

fn dechunk(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut position = 0;
    while let Some(line_end) = find_crlf(&body[position..]) {
        let size_text = String::from_utf8_lossy(&body[position..position + line_end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16) else { break };
        position += line_end + 2;
        if size == 0 || position >= body.len() {
            break;
        }
        let end = (position + size).min(body.len());
        out.extend_from_slice(&body[position..end]);
        position = end + 2;
        if position > body.len() {
            break;
        }
    }
    out
}

fn find_crlf(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|window| window == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_into_host_port_and_path() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/mcp"),
            Some(UrlParts {
                tls: false,
                userinfo: None,
                host: "127.0.0.1".into(),
                port: 8080,
                path: "/mcp".into(),
                authority: "127.0.0.1:8080".into()
            })
        );
        assert_eq!(split_url("http://[::1]:9/x").map(|parts| parts.host), Some("::1".into()));
        assert_eq!(split_url("ftp://example.com/"), None);
        let parts = split_url("http://alice:p%40ss@127.0.0.1:9/mcp?k=v").expect("valid");
        assert_eq!(
            (parts.userinfo.as_deref(), parts.host.as_str(), parts.path.as_str()),
            (Some("alice:p%40ss"), "127.0.0.1", "/mcp?k=v")
        );
        assert_eq!(percent_decode("alice:p%40ss"), b"alice:p@ss");
    }

    #[test]
    fn https_urls_are_split_with_tls_and_port_443_by_default() {
        let parts = split_url("https://mcp.example.com/mcp").expect("an https URL");
        assert_eq!(
            (parts.tls, parts.host.as_str(), parts.port, parts.authority.as_str()),
            (true, "mcp.example.com", 443, "mcp.example.com")
        );
        let parts = split_url("https://[::1]:8443/mcp").expect("an https URL on loopback");
        assert_eq!((parts.tls, parts.host.as_str(), parts.port), (true, "::1", 8443));
        assert_eq!(split_url("http://h/").map(|parts| (parts.tls, parts.port)), Some((false, 80)));
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n";
        assert!(chunked_complete(body));
        assert_eq!(dechunk(body), b"Wikipedia");
        assert!(!chunked_complete(b"4\r\nWi"));
    }
}
