//! Tests of the schema, seed data and session storage.

use super::*;

/// Days since 1970-01-01 of a `YYYY-MM-DD` date (proleptic Gregorian).
fn days(date: &str) -> i64 {
    let parts: Vec<i64> = date.split('-').filter_map(|p| p.parse().ok()).collect();
    let (y, m, d) = (parts[0], parts[1], parts[2]);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[tokio::test]
async fn seed_is_consistent() -> Result<(), sqlx::Error> {
    let db = Db::open("sqlite::memory:").await?;
    let listings = db.listings().await?;
    let names: Vec<&str> = listings.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["Beach House", "Mountain Cabin", "City Apartment"]);
    for booking in db.bookings(None).await? {
        let listing = &listings[usize::try_from(booking.listing_id - 1).unwrap_or(0)];
        let nights = days(&booking.check_out) - days(&booking.check_in);
        assert!(nights > 0, "{booking:?}");
        assert_eq!(
            booking.total_amount,
            nights * listing.nightly_price,
            "{booking:?}"
        );
        assert!(booking.check_in.starts_with("2026-"));
    }
    let all = db.revenue(None, None).await?;
    assert_eq!(all.len(), 18);
    assert_eq!(all.iter().map(|r| r.amount).sum::<i64>(), 100_360);
    let beach: i64 = db
        .revenue(Some(1), None)
        .await?
        .iter()
        .map(|r| r.amount)
        .sum();
    assert_eq!(beach, 46_550);
    let march = db.revenue(None, Some("2026-03")).await?;
    assert_eq!(
        march.iter().map(|r| r.amount).sum::<i64>(),
        7700 + 4180 + 5040
    );
    assert_eq!(db.bookings(Some(3)).await?.len(), 4);
    Ok(())
}

#[tokio::test]
async fn exchanges_are_numbered_per_session() -> Result<(), sqlx::Error> {
    let db = Db::open("sqlite::memory:").await?;
    assert_eq!(db.messages("s1").await?, None);
    db.append_exchange("s1", "hi", "hello").await?;
    db.append_exchange("s2", "a", "b").await?;
    db.append_exchange("s1", "again", "sure").await?;
    let messages = db.messages("s1").await?.unwrap_or_default();
    let seqs: Vec<(i64, &str, &str)> = messages
        .iter()
        .map(|m| (m.seq, m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        seqs,
        [
            (1, "user", "hi"),
            (2, "assistant", "hello"),
            (3, "user", "again"),
            (4, "assistant", "sure")
        ]
    );
    Ok(())
}

#[tokio::test]
async fn file_database_is_seeded_once() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("agent.db");
    let path = path.to_str().ok_or("non-utf8 temp path")?;
    Db::open(path).await?.append_exchange("s", "q", "a").await?;
    let db = Db::open(path).await?;
    assert_eq!(db.listings().await?.len(), 3);
    assert_eq!(db.bookings(None).await?.len(), BOOKINGS.len());
    assert_eq!(db.messages("s").await?.map(|m| m.len()), Some(2));
    Ok(())
}

#[tokio::test]
async fn concurrent_openers_of_a_new_file_both_succeed() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("race.db");
    let path = path.to_str().ok_or("non-utf8 temp path")?;
    let (a, b) = tokio::join!(Db::open(path), Db::open(path));
    let (a, b) = (a?, b?);
    assert_eq!(a.listings().await?, b.listings().await?);
    assert_eq!(a.revenue(None, None).await?.len(), 18);
    Ok(())
}
