//! Validates JUnit XML against Jenkins' `junit-10.xsd` (tests/fixtures) with a
//! real XML Schema validator: python3's `xmlschema` (scripts/setup.d installs it).

use std::path::Path;
use std::process::Command;

/// Panics with the validator's message unless `xml` is valid. Without python3 or
/// `xmlschema` the check is skipped with the reason on stderr, except under CI
/// or with `GAVEL_TEST_REQUIRE_XMLSCHEMA` set, where that is a failure.
pub(crate) fn assert_valid_junit(xml: &str) {
    // From any crate of the workspace that includes this module.
    let xsd =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../gavel-report/tests/fixtures/junit-10.xsd");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, xml).unwrap();
    let script = "import sys, xmlschema\n\
                  schema = xmlschema.XMLSchema10(sys.argv[1])\n\
                  errors = [str(e) for e in schema.iter_errors(sys.argv[2])]\n\
                  print('\\n---\\n'.join(errors))\n\
                  sys.exit(1 if errors else 0)\n";
    let probe = Command::new("python3")
        .args(["-c", "import xmlschema"])
        .output();
    let missing = match &probe {
        Err(e) => Some(format!("python3 not runnable: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "python3 has no xmlschema ({}); run scripts/setup",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    };
    if let Some(reason) = missing {
        return gavel_testkit::skip(
            gavel_testkit::Need::XmlSchema,
            format_args!("JUnit schema validation: {reason}"),
        );
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&xsd)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "JUnit XML is not valid against junit-10.xsd:\n{}\n{}\n--- xml ---\n{xml}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
