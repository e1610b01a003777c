//! DNS rebinding and cross-site requests: the `Host` a request names must be this
//! server's (its bind address, a loopback name for a loopback bind, or an allowed
//! host), and a state-changing request's `Origin` (else `Referer`) must be that
//! same host.

use std::net::SocketAddr;

use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

/// The hosts this server answers to.
#[derive(Debug)]
pub(crate) struct HostPolicy {
    bind: SocketAddr,
    /// Lowercased `name` or `name:port` entries; `*` allows any host.
    allowed: Vec<String>,
}

/// `host` lowercased and split into name and port (`[::1]:8080` → `[::1]`, 8080).
fn split_host(host: &str) -> (String, Option<u16>) {
    let host = host.trim().to_ascii_lowercase();
    let port_at = match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => Some(i),
        _ => None,
    };
    match port_at.and_then(|i| Some((i, host[i + 1..].parse().ok()?))) {
        Some((i, port)) => (host[..i].to_owned(), Some(port)),
        None => (host, None),
    }
}

impl HostPolicy {
    /// The policy of a server bound to `bind` that also answers to `allowed`.
    pub(crate) fn new(bind: SocketAddr, allowed: &[String]) -> Self {
        HostPolicy {
            bind,
            allowed: allowed
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
        }
    }

    /// Whether a request naming `host` is for this server.
    fn accepts(&self, host: &str) -> bool {
        let (name, port) = split_host(host);
        let port_ok = self.bind.port() == 0 || port.unwrap_or(80) == self.bind.port();
        let bind_ip = self.bind.ip();
        let is_bind_name = if bind_ip.is_loopback() {
            matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]")
        } else {
            let shown = match bind_ip {
                std::net::IpAddr::V4(ip) => ip.to_string(),
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            };
            !bind_ip.is_unspecified() && name == shown
        };
        (is_bind_name && port_ok)
            || self.allowed.iter().any(|allowed| {
                allowed == "*"
                    || *allowed == name
                    || port.is_some_and(|p| *allowed == format!("{name}:{p}"))
            })
    }

    /// Refuses a request whose `Host` is not this server's, and a state-changing
    /// one from another origin; `None` lets it through.
    pub(crate) fn refuse(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Option<Response> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| uri.authority().map(|a| a.as_str()));
        let Some(host) = host else {
            return Some((StatusCode::BAD_REQUEST, "the request names no Host").into_response());
        };
        if !self.accepts(host) {
            let message = format!(
                "this server does not answer to host `{}` (it listens on {}): open it by its \
                 own address, or allow the name with `gavel serve --allow-host NAME`",
                host.escape_default(),
                self.bind
            );
            return Some((StatusCode::MISDIRECTED_REQUEST, message).into_response());
        }
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return None;
        }
        let from = headers
            .get(header::ORIGIN)
            .or_else(|| headers.get(header::REFERER))
            .map(|v| v.to_str().ok().and_then(origin_authority));
        match from {
            // A client that names no origin is not a browser page.
            None => None,
            Some(Some(authority)) if same_host(&authority, host) => None,
            Some(_) => Some(
                (
                    StatusCode::FORBIDDEN,
                    "cross-origin request refused: the Origin (or Referer) is not this server",
                )
                    .into_response(),
            ),
        }
    }
}

/// The `host[:port]` of an `Origin` or `Referer` value, the scheme's default port
/// made explicit; `None` for `null` or anything unreadable.
fn origin_authority(value: &str) -> Option<String> {
    let uri: Uri = value.trim().parse().ok()?;
    let authority = uri.authority()?;
    let port = authority.port_u16().or(match uri.scheme_str()? {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    })?;
    Some(format!("{}:{port}", authority.host().to_ascii_lowercase()))
}

/// Whether an origin's `host:port` is the request's `Host` (port 80 when absent).
fn same_host(origin: &str, host: &str) -> bool {
    let (name, port) = split_host(host);
    origin == format!("{name}:{}", port.unwrap_or(80))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(bind: &str, allowed: &[&str]) -> HostPolicy {
        let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
        HostPolicy::new(bind.parse().unwrap(), &allowed)
    }

    #[test]
    fn loopback_names_with_the_port_and_allowed_hosts_are_accepted() {
        let p = policy("127.0.0.1:7070", &["Gavel.Internal"]);
        for ok in [
            "127.0.0.1:7070",
            "localhost:7070",
            "[::1]:7070",
            "gavel.internal:443",
        ] {
            assert!(p.accepts(ok), "{ok}");
        }
        for bad in ["attacker.example:7070", "localhost:7071", "127.0.0.1", ""] {
            assert!(!p.accepts(bad), "{bad}");
        }
        let wide = policy("0.0.0.0:80", &["ui.example:8443"]);
        assert!(!wide.accepts("0.0.0.0"));
        assert!(wide.accepts("ui.example:8443") && !wide.accepts("ui.example:80"));
        assert!(policy("10.1.2.3:80", &[]).accepts("10.1.2.3"));
        assert!(policy("[::1]:9", &[]).accepts("[::1]:9"));
    }

    #[test]
    fn origins_compare_with_default_ports() {
        assert_eq!(
            origin_authority("http://LocalHost").as_deref(),
            Some("localhost:80")
        );
        assert_eq!(
            origin_authority("https://x.example/page?q=1").as_deref(),
            Some("x.example:443")
        );
        assert_eq!(origin_authority("null"), None);
        assert!(same_host("localhost:80", "localhost"));
        assert!(!same_host("attacker.example:7070", "127.0.0.1:7070"));
    }
}
