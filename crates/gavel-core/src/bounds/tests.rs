use std::time::Duration;

use super::*;

#[test]
fn seconds_are_finite_positive_and_capped() {
    assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
    assert_eq!(parse_seconds(" 86400 "), Ok(Duration::from_secs(86_400)));
    for (text, problem) in [
        ("inf", Problem::NotFinite),
        ("-inf", Problem::NotFinite),
        ("nan", Problem::NotFinite),
        ("NaN", Problem::NotFinite),
        ("1e300", Problem::OutOfRange),
        ("86400.5", Problem::OutOfRange),
        ("0", Problem::OutOfRange),
        ("-3", Problem::OutOfRange),
        ("ten", Problem::NotANumber),
        ("", Problem::NotANumber),
    ] {
        let e = parse_seconds(text).unwrap_err();
        assert_eq!(e.problem, problem, "{text}: {e}");
        assert!(e.to_string().contains("at most 86400 (24 h)"), "{e}");
    }
    assert_eq!(parse_seconds("1e300").unwrap_err().given, "1e300");
    assert_eq!(
        parse_seconds("inf").unwrap_err().to_string(),
        "`inf` is not finite: seconds must be above 0 and at most 86400 (24 h)"
    );
}

#[test]
fn jobs_are_one_to_1024() {
    assert_eq!(parse_jobs("1"), Ok(1));
    assert_eq!(parse_jobs("1024"), Ok(1024));
    for text in ["0", "1025", "-1", "2.5", "nan"] {
        let e = parse_jobs(text).unwrap_err();
        assert!(e.to_string().contains("between 1 and 1024"), "{text}: {e}");
    }
    assert_eq!(parse_jobs("0").unwrap_err().problem, Problem::OutOfRange);
    assert_eq!(parse_jobs("x").unwrap_err().problem, Problem::NotANumber);
}

#[test]
fn attempts_are_at_least_one() {
    assert_eq!(parse_attempts("3"), Ok(3));
    let e = parse_attempts("0").unwrap_err();
    assert_eq!(e.problem, Problem::OutOfRange);
    assert_eq!(
        e.to_string(),
        "`0` is out of range: attempts must be between 1 and 100"
    );
    assert!(parse_attempts("101").is_err());
}

#[test]
fn usd_is_finite_and_not_negative() {
    assert_eq!(parse_usd("0"), Ok(0.0));
    assert_eq!(parse_usd("2.50"), Ok(2.5));
    assert_eq!(parse_usd("nan").unwrap_err().problem, Problem::NotFinite);
    assert_eq!(parse_usd("inf").unwrap_err().problem, Problem::NotFinite);
    assert_eq!(parse_usd("-0.01").unwrap_err().problem, Problem::OutOfRange);
    assert!(parse_usd("$3").unwrap_err().to_string().contains("USD"));
}

#[test]
fn counts_and_millis_are_capped() {
    assert_eq!(parse_repeat("10000"), Ok(10_000));
    assert!(parse_repeat("4294967295").is_err());
    assert!(parse_repeat("0").is_err());
    assert_eq!(rejudge(0), Ok(0));
    assert!(rejudge(101).is_err());
    assert!(variants(1001).is_err());
    assert!(executions(1_000_001).is_err());
    assert_eq!(millis(250), Ok(Duration::from_millis(250)));
    assert!(millis(0).is_err());
    assert!(millis(86_400_001).is_err());
    assert!(finite(f64::NAN).is_err());
}

#[test]
fn planned_executions_multiply_targets_repeats_and_inputs() {
    let yaml = "targets:\n  a: {type: command, command: [cat]}\n  b: {type: command, command: [cat]}\ncases:\n  - id: r\n    input: q\n    variants: [p, s]\n    repeat: 5\n    max_stddev: 0.1\n  - id: s\n    input: q\n";
    let suite = crate::load::parse_suite_str(yaml, "s.yaml".as_ref()).unwrap();
    assert_eq!(planned_executions(&suite, None), 2 * 5 * 3 + 2);
    assert_eq!(planned_executions(&suite, Some(1)), 2 * 3 + 2);
}

#[test]
fn rates_accept_percent_and_fraction() {
    assert_eq!(parse_rate("80"), Ok(80.0));
    assert_eq!(parse_rate("80%"), Ok(80.0));
    assert_eq!(parse_rate("0.8"), Ok(80.0));
    assert_eq!(parse_rate("1%"), Ok(1.0));
    assert_eq!(
        parse_rate("120").map_err(|e| e.problem),
        Err(Problem::OutOfRange)
    );
    assert_eq!(
        parse_rate("abc").map_err(|e| e.problem),
        Err(Problem::NotANumber)
    );
    assert_eq!(
        parse_rate("nan%").map_err(|e| e.problem),
        Err(Problem::OutOfRange)
    );
}
