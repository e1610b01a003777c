//! Unit tests of intent detection, reference resolution and planning.

use super::*;

fn listings() -> Vec<Listing> {
    [
        (1, "Beach House"),
        (2, "Mountain Cabin"),
        (3, "City Apartment"),
    ]
    .into_iter()
    .map(|(id, name)| Listing {
        id,
        name: name.into(),
        address: String::new(),
        city: String::new(),
        nightly_price: 100,
        currency: "USD".into(),
        bedrooms: 1,
        occupancy_rate: 0.5,
    })
    .collect()
}

fn history(turns: &[(&str, &str)]) -> Vec<Message> {
    let mut messages = Vec::new();
    for (user, assistant) in turns {
        for (role, content) in [("user", user), ("assistant", assistant)] {
            messages.push(Message {
                seq: i64::try_from(messages.len()).unwrap_or(0) + 1,
                role: role.into(),
                content: (*content).into(),
                created_at: String::new(),
            });
        }
    }
    messages
}

#[test]
fn detects_intents() {
    let cases = [
        ("What are my listings?", Some(Intent::Listings)),
        ("Show me my places", Some(Intent::Listings)),
        ("How many PROPERTIES do I have?", Some(Intent::Listings)),
        (
            "What's the address of the Beach House?",
            Some(Intent::Details),
        ),
        ("How much is the cabin per night?", Some(Intent::Details)),
        ("Occupancy rate of the apartment?", Some(Intent::Occupancy)),
        ("Price and occupancy of the cabin", Some(Intent::Details)),
        ("Show bookings for the beach house", Some(Intent::Bookings)),
        ("Who are my guests?", Some(Intent::Bookings)),
        ("What was my revenue?", Some(Intent::Revenue)),
        ("Total earnings of all my listings", Some(Intent::Revenue)),
        ("How much did I make in March?", Some(Intent::Revenue)),
        ("What is the weather on Mars?", None),
        ("Transactions on Mars?", None),
        ("hello", None),
    ];
    for (message, intent) in cases {
        assert_eq!(parse(message).intent, intent, "{message}");
    }
}

#[test]
fn finds_listings_references_and_months() {
    assert_eq!(parse("cabin vs Beach House").named, [2, 1]);
    assert_eq!(parse("the San Francisco apartment").named, [3]);
    assert_eq!(parse("the first one").reference, Some(Reference::Nth(0)));
    assert_eq!(
        parse("What about the second listing?").reference,
        Some(Reference::Nth(1))
    );
    assert_eq!(parse("and the last one?").reference, Some(Reference::Last));
    assert_eq!(
        parse("what's its occupancy").reference,
        Some(Reference::Pronoun)
    );
    assert_eq!(parse("that one please").reference, Some(Reference::Pronoun));
    assert_eq!(parse("revenue last month").reference, None);
    assert_eq!(parse("revenue in March").month, Some(3));
    assert_eq!(parse("revenue for feb").month, Some(2));
    assert_eq!(parse("May I see the revenue?").month, None);
    assert_eq!(parse("May revenue?").month, Some(5));
    assert!(parse("occupancy of each listing").all);
    assert!(!parse("occupancy of the cabin").all);
}

#[test]
fn plans_direct_questions() {
    let l = listings();
    assert_eq!(plan("list my properties", &[], &l), Action::Listings);
    assert_eq!(
        plan("Beach House details", &[], &l),
        Action::Details(vec![1])
    );
    assert_eq!(plan("Mountain Cabin", &[], &l), Action::Details(vec![2]));
    assert_eq!(
        plan("occupancy of all listings", &[], &l),
        Action::Occupancy(vec![1, 2, 3])
    );
    assert_eq!(plan("all bookings", &[], &l), Action::Bookings(vec![]));
    assert_eq!(plan("any bookings?", &[], &l), Action::Bookings(vec![]));
    assert_eq!(
        plan("cabin revenue in April", &[], &l),
        Action::Revenue(vec![2], Some("2026-04".into()))
    );
    assert_eq!(plan("Transactions on Mars?", &[], &l), Action::OutOfDomain);
}

#[test]
fn resolves_references_against_the_last_reply() {
    let l = listings();
    let h = history(&[(
        "What are my listings?",
        "You have 3 listings: Beach House, Mountain Cabin and City Apartment.",
    )]);
    assert_eq!(
        plan("occupancy for the first one?", &h, &l),
        Action::Occupancy(vec![1])
    );
    assert_eq!(
        plan("bookings of the second one", &h, &l),
        Action::Bookings(vec![2])
    );
    assert_eq!(
        plan("details of the last one", &h, &l),
        Action::Details(vec![3])
    );
    assert_eq!(
        plan("what's its occupancy?", &h, &l),
        Action::Clarify(Intent::Occupancy)
    );
    let h = history(&[(
        "cabin occupancy",
        "Mountain Cabin has an occupancy rate of 64%.",
    )]);
    assert_eq!(
        plan("and its revenue?", &h, &l),
        Action::Revenue(vec![2], None)
    );
    assert_eq!(plan("where is it?", &h, &l), Action::Details(vec![2]));
    assert_eq!(
        plan("what's the address?", &h, &l),
        Action::Details(vec![2])
    );
}

#[test]
fn clarifies_then_answers_the_pending_question() {
    let l = listings();
    assert_eq!(
        plan("What's the occupancy?", &[], &l),
        Action::Clarify(Intent::Occupancy)
    );
    assert_eq!(
        plan("occupancy of the first one", &[], &l),
        Action::Clarify(Intent::Occupancy)
    );
    assert_eq!(
        plan("bookings for that listing", &[], &l),
        Action::Clarify(Intent::Bookings)
    );
    let question = "Which listing do you mean: Beach House, Mountain Cabin or City Apartment?";
    let h = history(&[("What's the occupancy?", question)]);
    assert_eq!(
        plan("The mountain cabin", &h, &l),
        Action::Occupancy(vec![2])
    );
    assert_eq!(plan("the last one", &h, &l), Action::Occupancy(vec![3]));
    let h = history(&[("What's the occupancy?", question), ("it", question)]);
    assert_eq!(plan("Beach House", &h, &l), Action::Occupancy(vec![1]));
    let h = history(&[("revenue of that one in May", question)]);
    assert_eq!(
        plan("apartment", &h, &l),
        Action::Revenue(vec![3], Some("2026-05".into()))
    );
}
