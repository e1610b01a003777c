//! Opaque page cursors: the offset of the next page and the tool it belongs to,
//! hex-encoded so that clients treat them as tokens.

use crate::ToolError;

/// Where the next page of a tool's results starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// Results to skip.
    pub(crate) offset: u64,
}

impl Cursor {
    /// The cursor of `tool`'s page after `offset` results.
    pub(crate) fn encode(tool: &str, offset: u64) -> String {
        hex::encode(format!("{tool}:{offset}"))
    }

    /// Reads the `cursor` argument of `tool`; none is the first page.
    pub(crate) fn decode(tool: &str, cursor: Option<&str>) -> Result<Cursor, ToolError> {
        let Some(text) = cursor else {
            return Ok(Cursor { offset: 0 });
        };
        let bad = || {
            ToolError::field(
                "cursor",
                format!(
                    "`{text}` is not a cursor this tool returned; pass a `next_cursor` of {tool}"
                ),
            )
        };
        let bytes = hex::decode(text).map_err(|_| bad())?;
        let decoded = String::from_utf8(bytes).map_err(|_| bad())?;
        let (owner, offset) = decoded.split_once(':').ok_or_else(bad)?;
        if owner != tool {
            return Err(bad());
        }
        Ok(Cursor {
            offset: offset.parse().map_err(|_| bad())?,
        })
    }
}

/// The cursor of the page after `offset + shown`, when more results remain.
pub(crate) fn next(tool: &str, offset: u64, shown: usize, more: bool) -> Option<String> {
    more.then(|| Cursor::encode(tool, offset + shown as u64))
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    #[test]
    fn cursors_round_trip_and_reject_strangers() {
        let c = Cursor::encode("list_runs", 200);
        assert_eq!(Cursor::decode("list_runs", Some(&c)).unwrap().offset, 200);
        let err = Cursor::decode("query_evaluations", Some(&c)).unwrap_err();
        assert!(err.to_string().contains("`cursor`"), "{err}");
        assert!(Cursor::decode("list_runs", Some("zz")).is_err());
        assert_eq!(Cursor::decode("list_runs", None).unwrap().offset, 0);
    }
}
