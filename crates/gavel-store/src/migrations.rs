//! The schema: the files of `migrations/`, embedded, and sqlx's migrator over
//! them. The same files serve both engines.

use std::sync::LazyLock;

use sqlx::SqlStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// Each file of `migrations/` (`VERSION_description.sql`): its version, its
/// description (the name's words) and its SQL, in order. A test checks the list
/// against the folder.
const FILES: [(i64, &str, &str); 24] = [
    (
        1,
        "runs executions",
        include_str!("../migrations/0001_runs_executions.sql"),
    ),
    (
        2,
        "model cache",
        include_str!("../migrations/0002_model_cache.sql"),
    ),
    (
        3,
        "executions run seq",
        include_str!("../migrations/0003_executions_run_seq.sql"),
    ),
    (
        4,
        "calibration labels",
        include_str!("../migrations/0004_calibration_labels.sql"),
    ),
    (
        5,
        "turn conversation",
        include_str!("../migrations/0005_turn_conversation.sql"),
    ),
    (10, "queue", include_str!("../migrations/0010_queue.sql")),
    (
        11,
        "case library",
        include_str!("../migrations/0011_case_library.sql"),
    ),
    (
        20,
        "embedding cache",
        include_str!("../migrations/0020_embedding_cache.sql"),
    ),
    (
        40,
        "session checkpoints",
        include_str!("../migrations/0040_session_checkpoints.sql"),
    ),
    (
        45,
        "calibration fingerprint",
        include_str!("../migrations/0045_calibration_fingerprint.sql"),
    ),
    (
        50,
        "run planned",
        include_str!("../migrations/0050_run_planned.sql"),
    ),
    (
        51,
        "run error",
        include_str!("../migrations/0051_run_error.sql"),
    ),
    (
        52,
        "run driver",
        include_str!("../migrations/0052_run_driver.sql"),
    ),
    (
        53,
        "queue units",
        include_str!("../migrations/0053_queue_units.sql"),
    ),
    (60, "users", include_str!("../migrations/0060_users.sql")),
    (
        61,
        "case lifecycle",
        include_str!("../migrations/0061_case_lifecycle.sql"),
    ),
    (
        62,
        "run started by",
        include_str!("../migrations/0062_run_started_by.sql"),
    ),
    (
        70,
        "rate buckets",
        include_str!("../migrations/0070_rate_buckets.sql"),
    ),
    (
        71,
        "run cases case id",
        include_str!("../migrations/0071_run_cases_case_id.sql"),
    ),
    (
        75,
        "run warnings",
        include_str!("../migrations/0075_run_warnings.sql"),
    ),
    (
        76,
        "sign in limits",
        include_str!("../migrations/0076_sign_in_limits.sql"),
    ),
    (
        77,
        "execution cost",
        include_str!("../migrations/0077_execution_cost.sql"),
    ),
    (
        80,
        "review labels",
        include_str!("../migrations/0080_review_labels.sql"),
    ),
    (
        81,
        "run decisions",
        include_str!("../migrations/0081_run_decisions.sql"),
    ),
];

/// The migrator over [`FILES`]: what `sqlx::migrate!()` builds from the folder
/// (the same versions, descriptions and checksums, so stores migrated before
/// read as migrated), without sqlx's proc macros and the second build of sqlx
/// they need.
pub(crate) static MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| {
    Migrator::with_migrations(
        FILES
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    description.into(),
                    MigrationType::Simple,
                    SqlStr::from_static(sql),
                    sql.starts_with("-- no-transaction"),
                )
            })
            .collect(),
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.sql` file of the folder is listed, under its version and words.
    #[test]
    fn every_migration_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut on_disk: Vec<(i64, String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "sql"))
            .map(|path| {
                let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
                let (version, words) = name.split_once('_').unwrap();
                let sql = std::fs::read_to_string(&path).unwrap();
                (version.parse().unwrap(), words.replace('_', " "), sql)
            })
            .collect();
        on_disk.sort();
        let listed: Vec<(i64, String, String)> = FILES
            .iter()
            .map(|&(v, d, sql)| (v, d.to_owned(), sql.to_owned()))
            .collect();
        assert_eq!(listed, on_disk);
    }
}
