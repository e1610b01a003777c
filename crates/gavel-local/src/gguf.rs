//! Reading a GGUF file's header without loading its weights: is it a GGUF file
//! at all, and does it carry a chat template (an instruction-tuned model)?

use std::io::Read;
use std::path::Path;

use llama_cpp_2::gguf::GgufContext;

/// The metadata key llama.cpp reads a model's chat template from.
const CHAT_TEMPLATE_KEY: &str = "tokenizer.chat_template";
/// `GGUF_TYPE_STRING` in ggml's `gguf.h`: reading a key of another type as a
/// string aborts the process, so the type is checked first.
const GGUF_TYPE_STRING: u32 = 8;

/// What the header of a GGUF file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufInfo {
    /// `general.name`, when set.
    pub name: Option<String>,
    /// Whether it has a chat template: instruction-tuned models do, base models
    /// do not.
    pub has_chat_template: bool,
}

/// Reads the header of the GGUF file at `path`. The error names the file and
/// says what is wrong: missing, unreadable, not a GGUF file, or a corrupt header.
pub fn inspect(path: &Path) -> Result<GgufInfo, String> {
    let shown = path.display();
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{shown}: no such file"),
            std::io::ErrorKind::UnexpectedEof => {
                format!("{shown}: not a GGUF model file (it is shorter than a GGUF header)")
            }
            _ => format!("{shown}: cannot read it: {e}"),
        })?;
    if &magic != b"GGUF" {
        return Err(format!(
            "{shown}: not a GGUF model file (it starts with {:?}, a GGUF file with \"GGUF\")",
            String::from_utf8_lossy(&magic)
        ));
    }
    let header = GgufContext::from_file(path)
        .ok_or_else(|| format!("{shown}: the GGUF header is corrupt or truncated"))?;
    let string = |key: &str| {
        let index = header.find_key(key);
        (index >= 0 && header.kv_type(index) == GGUF_TYPE_STRING)
            .then(|| header.val_str(index))
            .flatten()
            .map(str::to_owned)
    };
    Ok(GgufInfo {
        name: string("general.name"),
        has_chat_template: string(CHAT_TEMPLATE_KEY).is_some_and(|t| !t.trim().is_empty()),
    })
}
