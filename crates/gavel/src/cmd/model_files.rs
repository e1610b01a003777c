//! `gavel models list|pull|path`: the model files gavel runs locally.

use clap::{Args, Subcommand};
use gavel_model_files::{ModelFiles, ModelKind, known};

use super::{EXIT_BAD_INPUT, EXIT_OK};

/// Arguments of `gavel models`.
#[derive(Debug, Args)]
pub(crate) struct ModelsArgs {
    #[command(subcommand)]
    action: ModelsAction,
}

#[derive(Debug, Subcommand)]
enum ModelsAction {
    /// Installed models ($GAVEL_MODELS and the Hugging Face cache), and the known
    /// names not installed yet.
    List,
    /// Download a model from the Hugging Face hub into $GAVEL_MODELS.
    Pull {
        /// A known name (see `gavel models list`) or org/name/FILE.gguf.
        model: String,
    },
    /// Print where a model is, without any network; exit 2 if it is not installed.
    Path {
        /// A path, a known name, or a hub repository org/name[/FILE.gguf].
        model: String,
        /// What to look for when the name is not a known one.
        #[arg(long, value_enum, default_value = "gguf")]
        kind: ModelKind,
    },
}

/// Runs `gavel models`.
pub(crate) async fn models(args: ModelsArgs) -> anyhow::Result<u8> {
    let files = ModelFiles::from_env();
    match args.action {
        ModelsAction::List => {
            print!("{}", files.listing());
            Ok(EXIT_OK)
        }
        ModelsAction::Pull { model } => match files.pull(&model).await {
            Ok(found) => {
                eprintln!(
                    "{} ({}): {}",
                    found.name,
                    found.source.as_str(),
                    found.path.display()
                );
                println!("{}", found.path.display());
                Ok(EXIT_OK)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(EXIT_BAD_INPUT)
            }
        },
        ModelsAction::Path { model, kind } => {
            let kind = known(&model).map_or(kind, |m| m.kind);
            match files.locate(&model, kind) {
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
    }
}
