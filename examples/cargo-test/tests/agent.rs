//! The suite in `suite.yaml`, run against the in-process agent: every case must
//! pass, and a failing one fails the test with gavel's explanation (failing
//! checks, a diff of the expected output against the answer, the transcript).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use gavel::checks::NoJudgeModels;
use gavel::targets::{FnReply, FnTarget};

#[tokio::test]
async fn every_case_passes() {
    let suite =
        gavel::load::parse_suite_str(include_str!("suite.yaml"), "tests/suite.yaml".as_ref())
            .expect("suite.yaml loads");
    let agent =
        FnTarget::new(|req| async move { FnReply::text(cargo_test_example::answer(&req.message)) });
    for case in &suite.cases {
        let execution = gavel::run_case(case, &agent, Duration::from_secs(10), &NoJudgeModels)
            .await
            .expect("the case runs");
        gavel::assert_passed(case, &execution);
    }
}
