//! Compiled regular expressions shared by pattern. Compiling one costs far more
//! than matching it, and a dataset's rows (or a large suite's cases) mostly
//! repeat the same few patterns: each is compiled once per process. A
//! [`Regex`] clone shares the compiled program.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use regex::Regex;

/// At most this many patterns are kept; past it the cache starts again, so
/// memory stays bounded whatever the patterns.
const KEPT: usize = 128;

static COMPILED: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Mutex::default);

/// `pattern` compiled, or its syntax error.
pub(crate) fn regex(pattern: &str) -> Result<Regex, regex::Error> {
    let lock = || COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(regex) = lock().get(pattern) {
        return Ok(regex.clone());
    }
    // Compiled outside the lock: other threads' patterns need not wait.
    let regex = Regex::new(pattern)?;
    let mut compiled = lock();
    if compiled.len() >= KEPT {
        compiled.clear();
    }
    compiled.insert(pattern.to_owned(), regex.clone());
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_pattern_shares_one_program_and_errors_are_not_kept() {
        let a = regex(r"\b3 listings\b").unwrap();
        let b = regex(r"\b3 listings\b").unwrap();
        assert!(a.is_match("your 3 listings") && b.is_match("your 3 listings"));
        assert_eq!(a.as_str(), b.as_str());
        assert!(regex("(unclosed").is_err());
        assert!(regex("(unclosed").is_err());
        for i in 0..KEPT + 5 {
            assert!(regex(&format!("x{i}")).unwrap().is_match(&format!("x{i}")));
        }
        assert!(COMPILED.lock().unwrap().len() <= KEPT);
    }
}
