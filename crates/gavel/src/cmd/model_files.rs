//! `gavel models list|pull|path`: the model files gavel runs locally.

use clap::{Args, Subcommand};
use gavel_model_files::{KNOWN, Located, ModelFiles, ModelKind, known};

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
        kind: KindArg,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum KindArg {
    Encoder,
    Gguf,
}

/// Runs `gavel models`.
pub(crate) async fn models(args: ModelsArgs) -> anyhow::Result<u8> {
    let files = ModelFiles::from_env();
    match args.action {
        ModelsAction::List => {
            list(&files);
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
            let kind = known(&model).map_or(
                match kind {
                    KindArg::Encoder => ModelKind::Encoder,
                    KindArg::Gguf => ModelKind::Gguf,
                },
                |m| m.kind,
            );
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

fn list(files: &ModelFiles) {
    println!(
        "models folder: {} (GAVEL_MODELS)",
        files.models_dir.display()
    );
    if let Some(cache) = &files.hf_cache {
        println!("hugging face cache: {}", cache.display());
    }
    let installed = files.list();
    let rows: Vec<[String; 4]> = installed.iter().map(row).collect();
    print_rows(&rows);
    let missing: Vec<_> = KNOWN
        .iter()
        .filter(|m| files.locate(m.name, m.kind).is_err())
        .collect();
    if !missing.is_empty() {
        println!("\nnot installed (gavel models pull NAME, or scripts/setup):");
        for m in missing {
            println!("  {:<24} {:<8} {}", m.name, m.kind.as_str(), m.about);
        }
    }
}

fn row(found: &Located) -> [String; 4] {
    [
        found.name.clone(),
        found.kind.as_str().to_owned(),
        found.source.as_str().to_owned(),
        found.path.display().to_string(),
    ]
}

fn print_rows(rows: &[[String; 4]]) {
    if rows.is_empty() {
        println!("\nno models installed");
        return;
    }
    let header = ["NAME", "KIND", "FOUND IN", "PATH"].map(str::to_owned);
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .chain([&header])
                .map(|r| r[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    println!();
    for r in std::iter::once(&header).chain(rows) {
        println!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
}
