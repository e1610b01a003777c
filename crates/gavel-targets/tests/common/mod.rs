//! Helpers shared by the integration tests.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::sync::{Arc, OnceLock};

use gavel_core::TargetSpec;
use gavel_targets::Target;
use serde_json::Value;

/// The real Python interpreter (skipping version-manager shims, which are slow to start).
pub fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is needed by these tests");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    })
}

/// A model source with no models: every id lacks credentials.
pub struct NoModels;

impl gavel_models::ModelSource for NoModels {
    fn model(
        &self,
        _id: &str,
    ) -> Result<Arc<dyn gavel_models::ChatModel>, gavel_models::ModelError> {
        Err(gavel_models::ModelError::new(
            gavel_models::ErrorKind::NoCredentials,
            "NO_KEY is not set",
        ))
    }
}

/// A target built from a JSON spec.
pub fn target(spec: Value) -> Arc<dyn Target> {
    let spec: TargetSpec = serde_json::from_value(spec).unwrap();
    gavel_targets::build("agent", &spec, &NoModels).unwrap()
}

/// The build error for a JSON spec, as text.
pub fn build_error(spec: Value) -> String {
    let spec: TargetSpec = serde_json::from_value(spec).unwrap();
    gavel_targets::build("agent", &spec, &NoModels)
        .expect_err("the spec should be rejected")
        .to_string()
}

/// Whether `pid` names a live process (zombies count as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
    }
}
