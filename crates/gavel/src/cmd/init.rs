//! `gavel init`: flags (or answers in a terminal) to a first suite file.

use gavel_scaffold::{InitOptions, ScaffoldError};

use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK};

/// Writes the scaffold and says how to run it.
pub(crate) fn init(options: InitOptions) -> anyhow::Result<u8> {
    match options.init() {
        Ok(path) => {
            let path = path.display();
            println!("wrote {path}\nnext: gavel run {path}");
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            let io = matches!(e, ScaffoldError::Io { .. });
            Ok(if io { EXIT_INFRA } else { EXIT_BAD_INPUT })
        }
    }
}
