//! The agent's four tools; each call is recorded with its arguments and JSON result.

use serde_json::{Map, Value, json};

use crate::api::ToolCall;
use crate::data::{Booking, Db, Listing, RevenueRow};

/// Revenue rows and their total, as returned by `get_revenue_data`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Revenue {
    /// Matching rows, by listing then month.
    pub(crate) rows: Vec<RevenueRow>,
    /// Sum of `rows`' amounts in USD.
    pub(crate) total: i64,
}

/// Tool runner for one request.
#[derive(Debug)]
pub(crate) struct Tools<'a> {
    db: &'a Db,
    record: bool,
    string_ids: bool,
    repeat: bool,
    calls: Vec<ToolCall>,
}

impl<'a> Tools<'a> {
    /// Tools over `db`; with `record == false` calls leave no trace (the `skip-tools` bug).
    pub(crate) fn new(db: &'a Db, record: bool) -> Self {
        Self {
            db,
            record,
            string_ids: false,
            repeat: false,
            calls: Vec::new(),
        }
    }

    /// Injects the `wrong-tool-args` (ids recorded as strings) and
    /// `redundant-calls` (each call made twice) bugs.
    pub(crate) fn with_bugs(mut self, string_ids: bool, repeat: bool) -> Self {
        self.string_ids = string_ids;
        self.repeat = repeat;
        self
    }

    /// The calls recorded so far.
    pub(crate) fn into_calls(self) -> Vec<ToolCall> {
        self.calls
    }

    fn record(&mut self, name: &'static str, mut arguments: Value, result: Value) {
        if !self.record {
            return;
        }
        if self.string_ids
            && let Some(id) = arguments.get_mut("listing_id")
        {
            *id = Value::String(id.to_string());
        }
        let call = ToolCall {
            name,
            arguments,
            result,
        };
        if self.repeat {
            self.calls.push(call.clone());
        }
        self.calls.push(call);
    }

    /// `get_listings {}` → `[{id, name, city}]`.
    pub(crate) async fn get_listings(&mut self) -> Result<Vec<Listing>, sqlx::Error> {
        let listings = self.db.listings().await?;
        let result = listings
            .iter()
            .map(|l| json!({ "id": l.id, "name": l.name, "city": l.city }))
            .collect();
        self.record("get_listings", json!({}), Value::Array(result));
        Ok(listings)
    }

    /// `get_listing_details {listing_id}` → the full row (or null).
    pub(crate) async fn get_listing_details(
        &mut self,
        listing_id: i64,
    ) -> Result<Option<Listing>, sqlx::Error> {
        let listing = self.db.listing(listing_id).await?;
        self.record(
            "get_listing_details",
            json!({ "listing_id": listing_id }),
            serde_json::to_value(&listing).unwrap_or(Value::Null),
        );
        Ok(listing)
    }

    /// `get_bookings {listing_id?}` → bookings of one or all listings.
    pub(crate) async fn get_bookings(
        &mut self,
        listing_id: Option<i64>,
    ) -> Result<Vec<Booking>, sqlx::Error> {
        let bookings = self.db.bookings(listing_id).await?;
        let mut arguments = Map::new();
        if let Some(id) = listing_id {
            arguments.insert("listing_id".into(), id.into());
        }
        self.record(
            "get_bookings",
            Value::Object(arguments),
            serde_json::to_value(&bookings).unwrap_or(Value::Null),
        );
        Ok(bookings)
    }

    /// `get_revenue_data {listing_id?, month?}` → `{rows, total, currency}`.
    pub(crate) async fn get_revenue_data(
        &mut self,
        listing_id: Option<i64>,
        month: Option<&str>,
    ) -> Result<Revenue, sqlx::Error> {
        let rows = self.db.revenue(listing_id, month).await?;
        let total = rows.iter().map(|r| r.amount).sum();
        let mut arguments = Map::new();
        if let Some(id) = listing_id {
            arguments.insert("listing_id".into(), id.into());
        }
        if let Some(month) = month {
            arguments.insert("month".into(), month.into());
        }
        let result = json!({
            "rows": serde_json::to_value(&rows).unwrap_or(Value::Null),
            "total": total,
            "currency": "USD",
        });
        self.record("get_revenue_data", Value::Object(arguments), result);
        Ok(Revenue { rows, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_recorded_with_arguments_and_results() -> Result<(), sqlx::Error> {
        let db = Db::open("sqlite::memory:").await?;
        let mut tools = Tools::new(&db, true);
        tools.get_listings().await?;
        tools.get_listing_details(2).await?;
        tools.get_bookings(Some(1)).await?;
        let revenue = tools.get_revenue_data(Some(3), Some("2026-02")).await?;
        assert_eq!(revenue.total, 4680);
        let calls = tools.into_calls();
        let names: Vec<&str> = calls.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "get_listings",
                "get_listing_details",
                "get_bookings",
                "get_revenue_data"
            ]
        );
        assert_eq!(calls[0].arguments, json!({}));
        assert_eq!(
            calls[0].result[2],
            json!({"id": 3, "name": "City Apartment", "city": "San Francisco"})
        );
        assert_eq!(
            calls[1].result["address"],
            json!("48 Pine Ridge Road, Aspen, CO")
        );
        assert_eq!(calls[2].arguments, json!({"listing_id": 1}));
        assert_eq!(calls[2].result.as_array().map(Vec::len), Some(3));
        assert_eq!(
            calls[3].arguments,
            json!({"listing_id": 3, "month": "2026-02"})
        );
        assert_eq!(calls[3].result["total"], json!(4680));

        let mut buggy = Tools::new(&db, true).with_bugs(true, true);
        buggy.get_bookings(Some(1)).await?;
        let calls = buggy.into_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0], calls[1]);
        assert_eq!(calls[0].arguments, json!({"listing_id": "1"}));

        let mut silent = Tools::new(&db, false);
        silent.get_listings().await?;
        assert!(silent.into_calls().is_empty());
        Ok(())
    }
}
