//! The embedding cache: vectors under (text hash, model), read and written in
//! batches.

use std::collections::HashMap;

use sqlx::Row;

use crate::{Store, StoreError};

/// Hashes per `SELECT … IN (…)`, well under both engines' bind limits.
const CHUNK: usize = 500;

const UPSERT_EMBEDDING: &str = "INSERT INTO embedding_cache \
     (text_hash, model, dimensions, vector, created_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (text_hash, model) DO UPDATE SET \
         dimensions = excluded.dimensions, vector = excluded.vector, \
         created_at = excluded.created_at";

impl Store {
    /// The cached vectors of `model` among `hashes`, by hash; absent hashes are
    /// simply missing from the map.
    pub async fn embeddings_get(
        &self,
        model: &str,
        hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, StoreError> {
        let mut found = HashMap::new();
        for chunk in hashes.chunks(CHUNK) {
            let placeholders: Vec<String> =
                (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT text_hash, dimensions, vector FROM embedding_cache \
                 WHERE model = $1 AND text_hash IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(model);
            for hash in chunk {
                query = query.bind(hash.as_str());
            }
            for row in query.fetch_all(&self.pool).await? {
                let hash: String = row.try_get("text_hash")?;
                let dimensions: i64 = row.try_get("dimensions")?;
                let hex: String = row.try_get("vector")?;
                let vector = decode(&hex)
                    .filter(|v| i64::try_from(v.len()) == Ok(dimensions))
                    .ok_or_else(|| {
                        StoreError::corrupt(
                            format!("embedding_cache vector of {hash} ({model})"),
                            format!("not {dimensions} hex-encoded f32 values"),
                        )
                    })?;
                found.insert(hash, vector);
            }
        }
        Ok(found)
    }

    /// Keeps `model`'s vectors under their text hashes (one transaction),
    /// replacing earlier entries.
    pub async fn embeddings_put(
        &self,
        model: &str,
        entries: &[(String, Vec<f32>)],
    ) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let now = gavel_core::now_rfc3339();
        let mut tx = self.pool.begin().await?;
        for (hash, vector) in entries {
            sqlx::query(UPSERT_EMBEDDING)
                .bind(hash.as_str())
                .bind(model)
                .bind(i64::try_from(vector.len()).unwrap_or(i64::MAX))
                .bind(encode(vector))
                .bind(now.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// Little-endian f32 bytes as lowercase hex.
fn encode(vector: &[f32]) -> String {
    let mut hex = String::with_capacity(vector.len() * 8);
    for value in vector {
        for byte in value.to_le_bytes() {
            hex.push_str(&format!("{byte:02x}"));
        }
    }
    hex
}

/// The inverse of [`encode`]; `None` when the text is not whole f32s in hex.
fn decode(hex: &str) -> Option<Vec<f32>> {
    if !hex.is_ascii() || !hex.len().is_multiple_of(8) {
        return None;
    }
    hex.as_bytes()
        .chunks(8)
        .map(|chunk| {
            let mut bytes = [0u8; 4];
            for (i, pair) in chunk.chunks(2).enumerate() {
                let text = std::str::from_utf8(pair).ok()?;
                bytes[i] = u8::from_str_radix(text, 16).ok()?;
            }
            Some(f32::from_le_bytes(bytes))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn vectors_round_trip_bit_exact() {
        let v = vec![0.0, -0.0, 1.5, f32::MIN_POSITIVE, -123.456_79, f32::MAX];
        let back = decode(&encode(&v)).unwrap_or_default();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(decode("zz000000"), None);
        assert_eq!(decode("0000"), None);
    }
}
