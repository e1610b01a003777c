//! SQLite storage: schema, seed data and the queries the tools and sessions need.

use std::str::FromStr;

use serde::Serialize;
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};

/// Tables, created when missing.
const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS listings (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        address TEXT NOT NULL,
        city TEXT NOT NULL,
        nightly_price INTEGER NOT NULL,
        currency TEXT NOT NULL,
        bedrooms INTEGER NOT NULL,
        occupancy_rate REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bookings (
        id INTEGER PRIMARY KEY,
        listing_id INTEGER NOT NULL REFERENCES listings(id),
        guest_name TEXT NOT NULL,
        check_in TEXT NOT NULL,
        check_out TEXT NOT NULL,
        total_amount INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS revenue (
        listing_id INTEGER NOT NULL REFERENCES listings(id),
        month TEXT NOT NULL,
        amount INTEGER NOT NULL,
        PRIMARY KEY (listing_id, month))",
    "CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
    "CREATE TABLE IF NOT EXISTS messages (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        PRIMARY KEY (session_id, seq))",
];

/// Seed listings: id, name, address, city, nightly price (USD), bedrooms, occupancy rate.
#[rustfmt::skip]
const LISTINGS: &[(i64, &str, &str, &str, i64, i64, f64)] = &[
    (1, "Beach House", "12 Ocean Drive, Malibu, CA", "Malibu", 350, 3, 0.78),
    (2, "Mountain Cabin", "48 Pine Ridge Road, Aspen, CO", "Aspen", 220, 2, 0.64),
    (3, "City Apartment", "901 Market Street, San Francisco, CA", "San Francisco", 180, 1, 0.91),
];

/// Seed bookings: id, listing id, guest, check-in, check-out, total (nights x nightly price).
const BOOKINGS: &[(i64, i64, &str, &str, &str, i64)] = &[
    (1, 1, "Alice Johnson", "2026-03-06", "2026-03-10", 1400),
    (2, 1, "Brian Lee", "2026-04-17", "2026-04-24", 2450),
    (3, 1, "Carla Gomez", "2026-06-12", "2026-06-15", 1050),
    (4, 2, "David Kim", "2026-01-09", "2026-01-14", 1100),
    (5, 2, "Emma Rossi", "2026-02-20", "2026-02-23", 660),
    (6, 2, "Farid Haddad", "2026-05-22", "2026-05-26", 880),
    (7, 3, "Grace Chen", "2026-02-02", "2026-02-06", 720),
    (8, 3, "Hiro Tanaka", "2026-03-15", "2026-03-17", 360),
    (9, 3, "Isabel Martin", "2026-05-01", "2026-05-08", 1260),
    (10, 3, "Jonas Berg", "2026-06-20", "2026-06-22", 360),
];

/// Seed revenue in USD for 2026-01..2026-06, one array per listing id 1..=3.
const REVENUE: &[(i64, [i64; 6])] = &[
    (1, [6300, 5950, 7700, 8050, 8750, 9800]),
    (2, [5280, 5060, 4180, 2640, 3080, 3960]),
    (3, [4860, 4680, 5040, 4860, 5220, 4950]),
];

/// One rental listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Listing {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) address: String,
    pub(crate) city: String,
    pub(crate) nightly_price: i64,
    pub(crate) currency: String,
    pub(crate) bedrooms: i64,
    pub(crate) occupancy_rate: f64,
}

/// One booking, with its listing's name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Booking {
    pub(crate) id: i64,
    pub(crate) listing_id: i64,
    pub(crate) listing_name: String,
    pub(crate) guest_name: String,
    pub(crate) check_in: String,
    pub(crate) check_out: String,
    pub(crate) total_amount: i64,
}

/// Revenue of one listing in one month (`YYYY-MM`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RevenueRow {
    pub(crate) listing_id: i64,
    pub(crate) listing_name: String,
    pub(crate) month: String,
    pub(crate) amount: i64,
}

/// One persisted chat message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Message {
    pub(crate) seq: i64,
    pub(crate) role: String,
    pub(crate) content: String,
    pub(crate) created_at: String,
}

/// Handle on the agent's database.
#[derive(Debug, Clone)]
pub(crate) struct Db {
    pool: SqlitePool,
}

impl Db {
    /// Opens `target` (a `sqlite:` URL or a file path), creating tables and seeding if empty.
    pub(crate) async fn open(target: &str) -> Result<Self, sqlx::Error> {
        let options = if target.starts_with("sqlite:") {
            SqliteConnectOptions::from_str(target)?
        } else {
            SqliteConnectOptions::new().filename(target)
        }
        .create_if_missing(true)
        .busy_timeout(std::time::Duration::from_secs(5));
        // One connection: keeps an in-memory database alive and serialises writers.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await?;
        let db = Self { pool };
        db.migrate().await?;
        db.seed_if_empty().await?;
        Ok(db)
    }

    async fn migrate(&self) -> Result<(), sqlx::Error> {
        for statement in SCHEMA {
            sqlx::query(*statement).execute(&self.pool).await?;
        }
        Ok(())
    }

    /// Seeds an empty database; idempotent, so processes racing on a new file agree.
    async fn seed_if_empty(&self) -> Result<(), sqlx::Error> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM listings")
            .fetch_one(&self.pool)
            .await?;
        if count > 0 {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        for &(id, name, address, city, price, bedrooms, rate) in LISTINGS {
            sqlx::query(
                "INSERT OR IGNORE INTO listings (id, name, address, city, nightly_price, currency, bedrooms, occupancy_rate)
                 VALUES (?, ?, ?, ?, ?, 'USD', ?, ?)",
            )
            .bind(id)
            .bind(name)
            .bind(address)
            .bind(city)
            .bind(price)
            .bind(bedrooms)
            .bind(rate)
            .execute(&mut *tx)
            .await?;
        }
        for &(id, listing_id, guest, check_in, check_out, total) in BOOKINGS {
            sqlx::query(
                "INSERT OR IGNORE INTO bookings (id, listing_id, guest_name, check_in, check_out, total_amount)
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(id)
            .bind(listing_id)
            .bind(guest)
            .bind(check_in)
            .bind(check_out)
            .bind(total)
            .execute(&mut *tx)
            .await?;
        }
        for &(listing_id, amounts) in REVENUE {
            for (month, amount) in (1..).zip(amounts) {
                sqlx::query(
                    "INSERT OR IGNORE INTO revenue (listing_id, month, amount) VALUES (?, ?, ?)",
                )
                .bind(listing_id)
                .bind(format!("2026-{month:02}"))
                .bind(amount)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await
    }

    /// All listings, by id.
    pub(crate) async fn listings(&self) -> Result<Vec<Listing>, sqlx::Error> {
        sqlx::query("SELECT * FROM listings ORDER BY id")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(listing_from_row)
            .collect()
    }

    /// One listing, if it exists.
    pub(crate) async fn listing(&self, id: i64) -> Result<Option<Listing>, sqlx::Error> {
        sqlx::query("SELECT * FROM listings WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(listing_from_row)
            .transpose()
    }

    /// Bookings of one listing, or of all listings, by listing then check-in.
    pub(crate) async fn bookings(
        &self,
        listing_id: Option<i64>,
    ) -> Result<Vec<Booking>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT b.*, l.name AS listing_name FROM bookings b JOIN listings l ON l.id = b.listing_id
             WHERE (? IS NULL OR b.listing_id = ?) ORDER BY b.listing_id, b.check_in",
        )
        .bind(listing_id)
        .bind(listing_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Booking {
                    id: row.try_get("id")?,
                    listing_id: row.try_get("listing_id")?,
                    listing_name: row.try_get("listing_name")?,
                    guest_name: row.try_get("guest_name")?,
                    check_in: row.try_get("check_in")?,
                    check_out: row.try_get("check_out")?,
                    total_amount: row.try_get("total_amount")?,
                })
            })
            .collect()
    }

    /// Revenue rows, optionally filtered by listing and month (`YYYY-MM`).
    pub(crate) async fn revenue(
        &self,
        listing_id: Option<i64>,
        month: Option<&str>,
    ) -> Result<Vec<RevenueRow>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT r.*, l.name AS listing_name FROM revenue r JOIN listings l ON l.id = r.listing_id
             WHERE (? IS NULL OR r.listing_id = ?) AND (? IS NULL OR r.month = ?)
             ORDER BY r.listing_id, r.month",
        )
        .bind(listing_id)
        .bind(listing_id)
        .bind(month)
        .bind(month)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(RevenueRow {
                    listing_id: row.try_get("listing_id")?,
                    listing_name: row.try_get("listing_name")?,
                    month: row.try_get("month")?,
                    amount: row.try_get("amount")?,
                })
            })
            .collect()
    }

    /// Persists one exchange (user message, then assistant reply), creating the session if new.
    pub(crate) async fn append_exchange(
        &self,
        session_id: &str,
        user: &str,
        assistant: &str,
    ) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT OR IGNORE INTO sessions (id) VALUES (?)")
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        for (role, content) in [("user", user), ("assistant", assistant)] {
            sqlx::query(
                "INSERT INTO messages (session_id, seq, role, content)
                 SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ? FROM messages WHERE session_id = ?",
            )
            .bind(session_id)
            .bind(role)
            .bind(content)
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await
    }

    /// Creates `child` holding a copy of `parent`'s messages; `false` when the
    /// parent is unknown or the child exists already.
    pub(crate) async fn fork_session(
        &self,
        parent: &str,
        child: &str,
    ) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let parent_known: Option<String> =
            sqlx::query_scalar("SELECT id FROM sessions WHERE id = ?")
                .bind(parent)
                .fetch_optional(&mut *tx)
                .await?;
        let created = sqlx::query("INSERT OR IGNORE INTO sessions (id) VALUES (?)")
            .bind(child)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if parent_known.is_none() || created == 0 {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO messages (session_id, seq, role, content)
             SELECT ?, seq, role, content FROM messages WHERE session_id = ? ORDER BY seq",
        )
        .bind(child)
        .bind(parent)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The session's messages in order, or `None` for an unknown session.
    pub(crate) async fn messages(
        &self,
        session_id: &str,
    ) -> Result<Option<Vec<Message>>, sqlx::Error> {
        let known: Option<String> = sqlx::query_scalar("SELECT id FROM sessions WHERE id = ?")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        if known.is_none() {
            return Ok(None);
        }
        let rows = sqlx::query(
            "SELECT seq, role, content, created_at FROM messages WHERE session_id = ? ORDER BY seq",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await?;
        let messages = rows
            .iter()
            .map(|row| {
                Ok(Message {
                    seq: row.try_get("seq")?,
                    role: row.try_get("role")?,
                    content: row.try_get("content")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok(Some(messages))
    }
}

fn listing_from_row(row: &SqliteRow) -> Result<Listing, sqlx::Error> {
    Ok(Listing {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        address: row.try_get("address")?,
        city: row.try_get("city")?,
        nightly_price: row.try_get("nightly_price")?,
        currency: row.try_get("currency")?,
        bedrooms: row.try_get("bedrooms")?,
        occupancy_rate: row.try_get("occupancy_rate")?,
    })
}

#[cfg(test)]
mod tests;
