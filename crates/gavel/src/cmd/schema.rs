//! `gavel schema`: the JSON Schema of the native suite format.

use super::EXIT_OK;

pub(crate) fn schema() -> anyhow::Result<u8> {
    let schema = gavel::load::suite_schema();
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(EXIT_OK)
}
