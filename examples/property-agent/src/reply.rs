//! Answer text: every sentence the agent says is built here.

use crate::data::{Booking, Listing, RevenueRow};
use crate::policy::MONTHS;

/// Reply to an out-of-domain request.
pub(crate) const OUT_OF_DOMAIN: &str =
    "Sorry, I can only help with your listings, bookings and revenue.";
/// Reply to an empty prompt.
pub(crate) const EMPTY_PROMPT: &str =
    "Please ask a question about your listings, bookings or revenue.";

/// "A", "A and B", "A, B and C" (with `last` instead of "and").
fn join(items: &[String], last: &str) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., tail] => format!("{} {last} {tail}", init.join(", ")),
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `12345` → `"$12,345"`.
pub(crate) fn usd(amount: i64) -> String {
    let digits = amount.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}${grouped}")
}

/// `0.78` → `"78%"`.
fn percent(rate: f64) -> String {
    format!("{}%", (rate * 100.0).round())
}

/// `"2026-03"` → `"March 2026"`.
fn month_label(month: &str) -> String {
    let (year, number) = month.split_once('-').unwrap_or((month, ""));
    let name = number
        .parse::<usize>()
        .ok()
        .and_then(|n| MONTHS.get(n.wrapping_sub(1)))
        .copied()
        .unwrap_or(number);
    format!("{name} {year}")
}

/// `"January–June 2026"` for the months covered by `rows`, or the requested month.
fn period(rows: &[RevenueRow], month: Option<&str>) -> String {
    let first = rows.iter().map(|r| r.month.as_str()).min();
    let last = rows.iter().map(|r| r.month.as_str()).max();
    match (month, first, last) {
        (Some(month), _, _) => month_label(month),
        (None, Some(first), Some(last)) if first != last => {
            let (first, last) = (month_label(first), month_label(last));
            match (first.split_once(' '), last.split_once(' ')) {
                (Some((a, y1)), Some((b, y2))) if y1 == y2 => format!("{a}–{b} {y1}"),
                _ => format!("{first}–{last}"),
            }
        }
        (None, Some(first), _) => month_label(first),
        _ => "the recorded period".into(),
    }
}

/// "You have 3 listings: Beach House, Mountain Cabin and City Apartment."
pub(crate) fn listings(listings: &[Listing]) -> String {
    if listings.is_empty() {
        return "You have no listings.".into();
    }
    let names: Vec<String> = listings.iter().map(|l| l.name.clone()).collect();
    format!(
        "You have {}: {}.",
        plural(names.len(), "listing"),
        join(&names, "and")
    )
}

/// Name, address, bedrooms, nightly price and occupancy of one listing.
pub(crate) fn details(l: &Listing) -> String {
    format!(
        "{} is at {}: {}, {} per night, occupancy rate {}.",
        l.name,
        l.address,
        plural(usize::try_from(l.bedrooms).unwrap_or(0), "bedroom"),
        usd(l.nightly_price),
        percent(l.occupancy_rate)
    )
}

/// Occupancy of each listing, plus the highest and lowest when there are several.
pub(crate) fn occupancy(listings: &[Listing]) -> String {
    let mut sentences: Vec<String> = listings
        .iter()
        .map(|l| {
            format!(
                "{} has an occupancy rate of {}.",
                l.name,
                percent(l.occupancy_rate)
            )
        })
        .collect();
    let by_rate = |a: &&Listing, b: &&Listing| a.occupancy_rate.total_cmp(&b.occupancy_rate);
    let extremes = (
        listings.iter().max_by(by_rate),
        listings.iter().min_by(by_rate),
    );
    if let (true, (Some(best), Some(worst))) = (listings.len() > 1, extremes) {
        sentences.push(format!(
            "{} has the highest occupancy and {} the lowest.",
            best.name, worst.name
        ));
    }
    sentences.join(" ")
}

/// Bookings of one listing: count, then each guest with dates and amount.
pub(crate) fn listing_bookings(name: &str, bookings: &[Booking]) -> String {
    if bookings.is_empty() {
        return format!("{name} has no bookings.");
    }
    let guests: Vec<String> = bookings
        .iter()
        .map(|b| {
            format!(
                "{} ({} to {}, {})",
                b.guest_name,
                b.check_in,
                b.check_out,
                usd(b.total_amount)
            )
        })
        .collect();
    format!(
        "{name} has {}: {}.",
        plural(bookings.len(), "booking"),
        join(&guests, "and")
    )
}

/// All bookings: total count, then guests grouped by listing.
pub(crate) fn all_bookings(bookings: &[Booking]) -> String {
    if bookings.is_empty() {
        return "You have no bookings.".into();
    }
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for b in bookings {
        match groups.last_mut() {
            Some((name, guests)) if *name == b.listing_name => guests.push(b.guest_name.clone()),
            _ => groups.push((&b.listing_name, vec![b.guest_name.clone()])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(name, guests)| format!("{name} has {} ({})", guests.len(), join(guests, "and")))
        .collect();
    format!(
        "You have {}: {}.",
        plural(bookings.len(), "booking"),
        join(&parts, "and")
    )
}

/// Revenue total for `listing` (or all listings, with a per-listing breakdown).
pub(crate) fn revenue(
    listing: Option<&str>,
    month: Option<&str>,
    rows: &[RevenueRow],
    total: i64,
) -> String {
    let period = period(rows, month);
    if rows.is_empty() {
        let whose = listing.map(|n| format!(" for {n}")).unwrap_or_default();
        return format!("No revenue is recorded{whose} for {period}.");
    }
    if let Some(name) = listing {
        return format!("{name} earned {} in revenue for {period}.", usd(total));
    }
    let mut by_listing: Vec<(&str, i64)> = Vec::new();
    for r in rows {
        match by_listing.last_mut() {
            Some((name, sum)) if *name == r.listing_name => *sum += r.amount,
            _ => by_listing.push((&r.listing_name, r.amount)),
        }
    }
    let parts: Vec<String> = by_listing
        .iter()
        .map(|(name, sum)| format!("{name} {}", usd(*sum)))
        .collect();
    format!(
        "Your total revenue for {period} is {}: {}.",
        usd(total),
        join(&parts, "and")
    )
}

/// "Which listing do you mean: Beach House, Mountain Cabin or City Apartment?"
pub(crate) fn clarify(listings: &[Listing]) -> String {
    let names: Vec<String> = listings.iter().map(|l| l.name.clone()).collect();
    format!("Which listing do you mean: {}?", join(&names, "or"))
}

/// "Hi Ana, " + reply, lower-casing the reply's first letter unless it starts with a listing name.
pub(crate) fn greet(user_name: &str, reply: &str, listings: &[Listing]) -> String {
    let proper = listings.iter().any(|l| reply.starts_with(&l.name));
    let mut chars = reply.chars();
    let body = match chars.next() {
        Some(first) if !proper => first.to_lowercase().chain(chars).collect(),
        _ => reply.to_owned(),
    };
    format!("Hi {user_name}, {body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(listing_id: i64, name: &str, month: &str, amount: i64) -> RevenueRow {
        RevenueRow {
            listing_id,
            listing_name: name.into(),
            month: month.into(),
            amount,
        }
    }

    #[test]
    fn formats_numbers() {
        assert_eq!(usd(0), "$0");
        assert_eq!(usd(999), "$999");
        assert_eq!(usd(12_345), "$12,345");
        assert_eq!(usd(1_234_567), "$1,234,567");
        assert_eq!(percent(0.78), "78%");
        assert_eq!(percent(0.91), "91%");
        assert_eq!(month_label("2026-03"), "March 2026");
    }

    #[test]
    fn revenue_sentences() {
        let rows = [
            row(1, "Beach House", "2026-01", 1000),
            row(1, "Beach House", "2026-02", 500),
            row(2, "Mountain Cabin", "2026-01", 2000),
        ];
        assert_eq!(
            revenue(None, None, &rows, 3500),
            "Your total revenue for January–February 2026 is $3,500: Beach House $1,500 and Mountain Cabin $2,000."
        );
        assert_eq!(
            revenue(Some("Beach House"), Some("2026-02"), &rows[1..2], 500),
            "Beach House earned $500 in revenue for February 2026."
        );
        assert_eq!(
            revenue(None, Some("2026-07"), &[], 0),
            "No revenue is recorded for July 2026."
        );
    }

    #[test]
    fn greets_by_name() {
        assert_eq!(
            greet("Ana", "You have 1 listing.", &[]),
            "Hi Ana, you have 1 listing."
        );
    }
}
