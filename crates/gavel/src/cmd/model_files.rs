//! `gavel models list|pull|path`: the model files gavel runs locally.

use gavel_model_files::{ModelFiles, ModelsAction, known};

use super::{EXIT_BAD_INPUT, EXIT_OK};

/// Runs `gavel models`.
pub(crate) async fn models(action: ModelsAction) -> anyhow::Result<u8> {
    let files = ModelFiles::from_env();
    let found = match action {
        ModelsAction::List => {
            print!("{}", files.listing());
            return Ok(EXIT_OK);
        }
        ModelsAction::Pull { model } => files.pull(&model).await.inspect(|found| {
            let (name, source) = (&found.name, found.source.as_str());
            eprintln!("{name} ({source}): {}", found.path.display());
        }),
        ModelsAction::Path { model, kind } => {
            files.locate(&model, known(&model).map_or(kind, |m| m.kind))
        }
    };
    match found {
        Ok(found) => {
            println!("{}", found.path.display());
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_BAD_INPUT)
        }
    }
}
