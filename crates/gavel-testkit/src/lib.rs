//! What gavel's tests share about the services they need: a test whose
//! service (PostgreSQL, Chromium, Node, Python, a model, ...) is missing is
//! skipped with the reason on a developer's machine, and fails under CI.
//!
//! CI is `CI` set to anything but empty, `0` or `false` (GitHub Actions and
//! most CI systems set it), or the service's own `GAVEL_TEST_REQUIRE_*`
//! variable ([`Need::variable`]); `.ci/run` sets them all.
//!
//! ```no_run
//! use gavel_testkit::{Need, skip};
//!
//! #[test]
//! fn validates_with_xmlschema() {
//!     if !python_has_xmlschema() {
//!         return skip(Need::XmlSchema, "python3 has no xmlschema (run scripts/setup)");
//!     }
//!     // ...
//! }
//! # fn python_has_xmlschema() -> bool { true }
//! ```

mod postgres;

pub use postgres::on_fresh_postgres;

/// A service or tool some tests cannot run without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Need {
    /// A PostgreSQL server, named by `GAVEL_TEST_DATABASE_URL`.
    Postgres,
    /// Headless Chromium and its driver (the web UI's browser tests).
    Chromium,
    /// Node.js and the npm packages scripts/setup installs.
    Node,
    /// python3 and the packages scripts/setup installs (the MCP SDK, ...).
    Python,
    /// The offline model weights scripts/setup installs.
    Models,
    /// python3's `xmlschema`, the JUnit report's validator.
    XmlSchema,
    /// Arize Phoenix, the OpenTelemetry receiver read back from.
    Phoenix,
    /// maturin, which builds the Python wheel.
    Maturin,
    /// promptfoo (npm), run beside gavel by the parity test.
    Promptfoo,
}

impl Need {
    /// The service's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Need::Postgres => "PostgreSQL",
            Need::Chromium => "Chromium",
            Need::Node => "Node.js",
            Need::Python => "Python",
            Need::Models => "the offline model weights",
            Need::XmlSchema => "python3's xmlschema",
            Need::Phoenix => "Arize Phoenix",
            Need::Maturin => "maturin",
            Need::Promptfoo => "promptfoo",
        }
    }

    /// The variable that makes this service required even without `CI`.
    pub fn variable(self) -> &'static str {
        match self {
            Need::Postgres => "GAVEL_TEST_REQUIRE_POSTGRES",
            Need::Chromium => "GAVEL_TEST_REQUIRE_CHROMIUM",
            Need::Node => "GAVEL_TEST_REQUIRE_NODE",
            Need::Python => "GAVEL_TEST_REQUIRE_PYTHON",
            Need::Models => "GAVEL_TEST_REQUIRE_MODELS",
            Need::XmlSchema => "GAVEL_TEST_REQUIRE_XMLSCHEMA",
            Need::Phoenix => "GAVEL_TEST_REQUIRE_PHOENIX",
            Need::Maturin => "GAVEL_TEST_REQUIRE_MATURIN",
            Need::Promptfoo => "GAVEL_TEST_REQUIRE_PROMPTFOO",
        }
    }

    /// Whether a test must fail rather than skip without this service: under
    /// CI, or with [`Need::variable`] set.
    pub fn required(self) -> bool {
        self.required_by(|name| std::env::var(name).ok())
    }

    /// [`Need::required`] with the variables `var` looks up.
    fn required_by(self, var: impl Fn(&str) -> Option<String>) -> bool {
        let set = |name: &str| var(name).is_some_and(|v| !matches!(v.trim(), "" | "0" | "false"));
        set("CI") || set(self.variable())
    }
}

/// Says the calling test is skipped because `need` is missing (`why`); panics
/// instead when the service is [required](Need::required).
#[track_caller]
pub fn skip(need: Need, why: impl std::fmt::Display) {
    if need.required() {
        panic!(
            "{} is required here (CI or {} is set), but {why}",
            need.name(),
            need.variable()
        );
    }
    eprintln!("skipped: {why}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_need_has_its_own_variable() {
        let all = [
            Need::Postgres,
            Need::Chromium,
            Need::Node,
            Need::Python,
            Need::Models,
            Need::XmlSchema,
            Need::Phoenix,
            Need::Maturin,
            Need::Promptfoo,
        ];
        let mut names: Vec<&str> = all.iter().map(|n| n.variable()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(names.iter().all(|n| n.starts_with("GAVEL_TEST_REQUIRE_")));
    }

    #[test]
    fn ci_or_the_service_variable_requires_it() {
        let with = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(!Need::Postgres.required_by(with(&[])));
        assert!(Need::Postgres.required_by(with(&[("CI", "true")])));
        assert!(Need::Chromium.required_by(with(&[("CI", "1")])));
        assert!(!Need::Postgres.required_by(with(&[("CI", ""), ("GAVEL_TEST_REQUIRE_NODE", "1")])));
        assert!(!Need::Postgres.required_by(with(&[("CI", "false")])));
        assert!(!Need::Models.required_by(with(&[("GAVEL_TEST_REQUIRE_MODELS", "0")])));
        assert!(Need::Models.required_by(with(&[("GAVEL_TEST_REQUIRE_MODELS", "1")])));
        assert!(Need::XmlSchema.required_by(with(&[("GAVEL_TEST_REQUIRE_XMLSCHEMA", "yes")])));
    }
}
