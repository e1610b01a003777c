//! `gavel init`: flags (or answers in a terminal) to a first suite file.

use gavel_scaffold::InitOptions;

use super::EXIT_OK;

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
            Ok(super::refused(e.is_bad_input()))
        }
    }
}
