//! The four statuses every check, execution and outcome ends in.

use serde::{Deserialize, Serialize};

/// The result class of a check, an execution or an outcome.
///
/// `Error` means the harness, a provider or the target's infrastructure broke; it is
/// never counted as the agent failing. `Skipped` always comes with a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The target did what was asked.
    Pass,
    /// The target did wrong.
    Fail,
    /// Infrastructure (harness, provider, target) broke; no verdict on the agent.
    Error,
    /// Not evaluated, for a stated reason.
    Skipped,
}

impl Status {
    /// The status word as stored and reported.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }

    /// Combines statuses of the parts of one thing: any failure fails it, else any
    /// error makes it an error, else any pass makes it pass; all skipped stays skipped.
    pub fn combine(statuses: impl IntoIterator<Item = Status>) -> Status {
        let (mut fail, mut error, mut pass) = (false, false, false);
        for s in statuses {
            match s {
                Status::Fail => fail = true,
                Status::Error => error = true,
                Status::Pass => pass = true,
                Status::Skipped => {}
            }
        }
        if fail {
            Status::Fail
        } else if error {
            Status::Error
        } else if pass {
            Status::Pass
        } else {
            Status::Skipped
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status word that is none of `pass`, `fail`, `error` and `skipped`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown status `{0}`")]
pub struct UnknownStatus(pub String);

impl std::str::FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pass" => Ok(Status::Pass),
            "fail" => Ok(Status::Fail),
            "error" => Ok(Status::Error),
            "skipped" => Ok(Status::Skipped),
            other => Err(UnknownStatus(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Status::{self, *};

    #[test]
    fn combine_orders_fail_error_pass_skipped() {
        assert_eq!(Status::combine([Pass, Error, Fail]), Fail);
        assert_eq!(Status::combine([Pass, Error, Skipped]), Error);
        assert_eq!(Status::combine([Pass, Skipped]), Pass);
        assert_eq!(Status::combine([Skipped, Skipped]), Skipped);
        assert_eq!(Status::combine([]), Skipped);
    }

    #[test]
    fn words_round_trip() {
        for s in [Pass, Fail, Error, Skipped] {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
        }
    }
}
