//! URLs: masking them for display and registering their secrets.

use std::ops::Range;

use base64::prelude::{BASE64_STANDARD, Engine as _};

/// Query parameters whose values are secrets, matched case-insensitively as a
/// substring of the parameter name (`api_key`, `access_token`, `X-Amz-Signature`).
const SECRET_PARAMS: &[&str] = &[
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "auth",
    "signature",
    "credential",
];

/// Whether a query parameter named `name` holds a secret.
fn is_secret_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_PARAMS.iter().any(|p| name.contains(p))
}

/// The parts of `url` that are secrets: the userinfo's password (or a bare
/// userinfo, which is how tokens ride in URLs) and secret query values, as byte
/// ranges in order.
fn secret_parts(url: &str) -> Vec<Range<usize>> {
    let mut userinfo = None;
    let mut query_start = None;
    let mut offset = 0;
    if let Some(scheme_end) = url.find("://") {
        offset = scheme_end + 3;
        let rest = &url[offset..];
        // `/` is never part of a userinfo (it must be percent-encoded there).
        if let Some(first_at) = rest.find('@').filter(|&at| !rest[..at].contains('/')) {
            // The password may hold `@`, `:` or `?`: the userinfo ends at the last
            // `@` before the path.
            let path_start = rest[first_at..]
                .find('/')
                .map_or(rest.len(), |i| first_at + i);
            let last_at = rest[..path_start].rfind('@').unwrap_or(first_at);
            userinfo = Some(match rest[..last_at].find(':') {
                Some(colon) => offset + colon + 1..offset + last_at,
                None => offset..offset + last_at,
            });
            offset += last_at;
        }
    }
    if let Some(q) = url[offset..].find('?') {
        query_start = Some(offset + q + 1);
    }
    let mut parts: Vec<Range<usize>> = userinfo.into_iter().filter(|r| !r.is_empty()).collect();
    if let Some(start) = query_start {
        let end = url[start..].find('#').map_or(url.len(), |i| start + i);
        let mut at = start;
        for pair in url[start..end].split('&') {
            if let Some((name, value)) = pair.split_once('=')
                && is_secret_param(name)
                && !value.is_empty()
            {
                let value_start = at + name.len() + 1;
                parts.push(value_start..value_start + value.len());
            }
            at += pair.len() + 1;
        }
    }
    parts
}

/// `url` fit to show: the userinfo's password (a bare userinfo whole) and the
/// values of key-, token-, secret- and password-like query parameters become `***`.
///
/// ```
/// use gavel_core::secrets::mask_url;
/// assert_eq!(mask_url("postgres://u:pw@db/x"), "postgres://u:***@db/x");
/// assert_eq!(mask_url("http://h/v1?api_key=k&a=1"), "http://h/v1?api_key=***&a=1");
/// ```
pub fn mask_url(url: &str) -> String {
    masked(url, secret_parts(url))
}

/// `url` with the secret parts that are written out (not `$VAR`) masked as
/// `***`, or `None` when there are none.
pub(super) fn mask_literal_parts(url: &str) -> Option<String> {
    let parts: Vec<Range<usize>> = secret_parts(url)
        .into_iter()
        .filter(|part| !url[part.clone()].contains('$'))
        .collect();
    (!parts.is_empty()).then(|| masked(url, parts))
}

/// `url` with `parts` replaced by `***`.
fn masked(url: &str, parts: Vec<Range<usize>>) -> String {
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    for part in parts {
        out.push_str(&url[at..part.start]);
        out.push_str("***");
        at = part.end;
    }
    out.push_str(&url[at..]);
    out
}

/// Registers the secrets of `url` (see [`mask_url`]) with [`super::register`],
/// raw and percent-decoded, and the `Authorization: Basic` value an HTTP client
/// makes of its user and password.
pub fn register_url(url: &str) {
    let mut values = Vec::new();
    for part in secret_parts(url) {
        let raw = &url[part];
        values.push(percent_decode(raw));
        values.push(raw.to_owned());
    }
    if let Some((user, password)) = credentials(url) {
        for pair in [
            format!("{user}:{password}"),
            format!("{}:{}", percent_decode(user), percent_decode(password)),
        ] {
            values.push(BASE64_STANDARD.encode(pair));
        }
    }
    super::register_all(values.iter().map(String::as_str));
}

/// The user and password (empty if none) of `url`'s userinfo, as written.
fn credentials(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    let userinfo = secret_parts(url).into_iter().next().filter(|part| {
        part.start >= after_scheme && !url[after_scheme..part.start].contains(['?', '#', '/'])
    })?;
    match userinfo
        .start
        .checked_sub(1)
        .filter(|&colon| url.as_bytes()[colon] == b':' && colon >= after_scheme)
    {
        Some(colon) => Some((&url[after_scheme..colon], &url[userinfo])),
        None => Some((&url[userinfo], "")),
    }
}

/// `%XX` escapes (and `+`) decoded; invalid escapes are kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_secret_params_are_masked() {
        assert_eq!(
            mask_url("postgres://gavel:s3cr3t@db:5432/gavel"),
            "postgres://gavel:***@db:5432/gavel"
        );
        assert_eq!(
            mask_url("postgres://gavel:p@s?s:@db/gavel"),
            "postgres://gavel:***@db/gavel"
        );
        assert_eq!(mask_url("postgres://:s3cr3t@db"), "postgres://:***@db");
        assert_eq!(
            mask_url("postgresql://db/gavel?sslmode=require&password=s3cr3t"),
            "postgresql://db/gavel?sslmode=require&password=***"
        );
        assert_eq!(
            mask_url("https://ghp_token123@host/x"),
            "https://***@host/x"
        );
        assert_eq!(
            mask_url(
                "http://u:pw@h:1/v1?api_key=K1&key=K2&token=T&access_token=A&secret=S&model=m#f"
            ),
            "http://u:***@h:1/v1?api_key=***&key=***&token=***&access_token=***&secret=***&model=m#f"
        );
        assert_eq!(
            mask_url("sqlite://.gavel/gavel.db?mode=rwc"),
            "sqlite://.gavel/gavel.db?mode=rwc"
        );
        assert_eq!(mask_url("sqlite::memory:"), "sqlite::memory:");
        assert_eq!(mask_url("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn url_secrets_are_registered_raw_and_decoded() {
        register_url("http://u:url-pw%21x@h/v1?api_key=url-key-123&mode=rwc-mode");
        let text = "url-pw%21x url-pw!x url-key-123 rwc-mode";
        assert_eq!(
            super::super::redact(text),
            "[redacted] [redacted] [redacted] rwc-mode"
        );
    }

    #[test]
    fn basic_auth_of_url_credentials_is_registered() {
        register_url("http://basic-user:basic-pw%2199@h/v1");
        // base64("basic-user:basic-pw!99") and of the raw "basic-user:basic-pw%2199"
        let text = "Basic YmFzaWMtdXNlcjpiYXNpYy1wdyE5OQ== Basic YmFzaWMtdXNlcjpiYXNpYy1wdyUyMTk5";
        assert_eq!(
            super::super::redact(text),
            "Basic [redacted] Basic [redacted]"
        );
        assert_eq!(
            credentials("http://tok-only-123@h/"),
            Some(("tok-only-123", ""))
        );
        assert_eq!(credentials("http://u:p@h/"), Some(("u", "p")));
        assert_eq!(credentials("http://h/?token=abc"), None);
    }
}
