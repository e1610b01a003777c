//! Deterministic keyword policy: what the user asks for, which listing they mean, and what to do.

use crate::data::{Listing, Message};

/// What the user wants to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// The list of listings.
    Listings,
    /// Address, price, bedrooms and occupancy of listings.
    Details,
    /// Occupancy rate of listings.
    Occupancy,
    /// Bookings of one or all listings.
    Bookings,
    /// Revenue of one or all listings, optionally for a month.
    Revenue,
}

/// A reference to a listing named in an earlier assistant reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reference {
    /// "the first one" (0), "the second one" (1), ...
    Nth(usize),
    /// "the last one".
    Last,
    /// "it", "that one": the single listing the last reply was about.
    Pronoun,
}

/// Keywords found in one message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Parsed {
    /// The strongest intent, if any.
    pub(crate) intent: Option<Intent>,
    /// Listing ids named, in order of mention.
    pub(crate) named: Vec<i64>,
    /// A reference to an earlier turn.
    pub(crate) reference: Option<Reference>,
    /// "all", "each", "highest", plural "listings": every listing.
    pub(crate) all: bool,
    /// Month number (1-12) mentioned.
    pub(crate) month: Option<u32>,
}

/// What the agent will do for a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// No property-management intent.
    OutOfDomain,
    /// Ask which listing is meant; the intent stays pending in the session.
    Clarify(Intent),
    /// List the listings.
    Listings,
    /// Details of these listings.
    Details(Vec<i64>),
    /// Occupancy of these listings.
    Occupancy(Vec<i64>),
    /// Bookings of these listings (empty: all bookings).
    Bookings(Vec<i64>),
    /// Revenue of these listings (empty: all), optionally in `2026-MM`.
    Revenue(Vec<i64>, Option<String>),
}

/// Listing aliases by listing id: lower-case phrases separated by `|`.
const ALIASES: &[(i64, &str)] = &[
    (1, "beach house|beach|house|malibu|ocean drive"),
    (2, "mountain cabin|cabin|mountain|aspen|pine ridge"),
    (
        3,
        "city apartment|apartment|apt|san francisco|market street|city one",
    ),
];
// Keyword sets: space-separated lower-case words.
const REVENUE: &str = "revenue revenues earnings earning earn earned earns income profit profits";
const BOOKINGS: &str = "booking bookings booked reservation reservations reserved guest guests";
const OCCUPANCY: &str = "occupancy occupied utilization utilisation vacancy";
const DETAILS: &str = "detail details address price prices pricing cost costs nightly night \
                       bedroom bedrooms where located location info information describe about";
const LISTINGS: &str = "listings properties places rentals homes portfolio";
const ALL: &str = "all each every highest lowest best worst compare most least top";
const REFERENCE_NOUNS: &str = "one listing property place home rental unit";
/// Month names, January first.
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Lower-case alphanumeric words of `text`.
fn tokenize(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `word` is one of the space-separated words of `set`.
fn is_one_of(word: &str, set: &str) -> bool {
    set.split_whitespace().any(|w| w == word)
}

/// Position of the first occurrence of the word sequence `phrase` in `tokens`.
fn find_phrase(tokens: &[String], phrase: &str) -> Option<usize> {
    let words: Vec<&str> = phrase.split(' ').collect();
    tokens
        .windows(words.len())
        .position(|window| window.iter().zip(&words).all(|(t, w)| t == w))
}

/// Extracts intent, listings, references and month from a user message.
pub(crate) fn parse(message: &str) -> Parsed {
    let tokens = tokenize(message);
    let has = |set: &str| tokens.iter().any(|t| is_one_of(t, set));
    let revenue = has(REVENUE) || (has("much") && has("make made makes"));
    let details = has(DETAILS);
    let occupancy = has(OCCUPANCY);
    let intent = if revenue {
        Some(Intent::Revenue)
    } else if has(BOOKINGS) {
        Some(Intent::Bookings)
    } else if occupancy && !details {
        Some(Intent::Occupancy)
    } else if details {
        Some(Intent::Details)
    } else if has(LISTINGS) || find_phrase(&tokens, "my places").is_some() {
        Some(Intent::Listings)
    } else {
        None
    };
    let mut named: Vec<(usize, i64)> = ALIASES
        .iter()
        .filter_map(|(id, aliases)| {
            let pos = aliases
                .split('|')
                .filter_map(|a| find_phrase(&tokens, a))
                .min()?;
            Some((pos, *id))
        })
        .collect();
    named.sort_unstable();
    Parsed {
        intent,
        named: named.into_iter().map(|(_, id)| id).collect(),
        reference: reference(&tokens),
        all: has(ALL) || has(LISTINGS),
        month: month(&tokens),
    }
}

fn reference(tokens: &[String]) -> Option<Reference> {
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(String::as_str);
        let noun_follows = next.is_none_or(|n| is_one_of(n, REFERENCE_NOUNS));
        let ordinal = match token.as_str() {
            "former" => return Some(Reference::Nth(0)),
            "latter" => return Some(Reference::Last),
            "first" | "1st" => Reference::Nth(0),
            "second" | "2nd" => Reference::Nth(1),
            "third" | "3rd" => Reference::Nth(2),
            "last" => Reference::Last,
            "it" | "its" => return Some(Reference::Pronoun),
            "that" | "this" | "same" if next.is_some_and(|n| is_one_of(n, REFERENCE_NOUNS)) => {
                return Some(Reference::Pronoun);
            }
            _ => continue,
        };
        if noun_follows {
            return Some(ordinal);
        }
    }
    None
}

fn month(tokens: &[String]) -> Option<u32> {
    tokens.iter().enumerate().find_map(|(i, token)| {
        // "May I ...", "you may ...": a verb, not a month.
        let next = tokens.get(i + 1).map_or("", String::as_str);
        if token == "may" && is_one_of(next, "i you we he she they it") {
            return None;
        }
        let index = MONTHS.iter().position(|m| {
            let m = m.to_lowercase();
            *token == m || (token.len() >= 3 && m.starts_with(token.as_str()) && token.len() <= 4)
        })?;
        u32::try_from(index + 1).ok()
    })
}

/// Listing ids named (by exact name) in `text`, in order of first appearance.
pub(crate) fn listings_in(text: &str, listings: &[Listing]) -> Vec<i64> {
    let mut found: Vec<(usize, i64)> = listings
        .iter()
        .filter_map(|l| Some((text.find(&l.name)?, l.id)))
        .collect();
    found.sort_unstable();
    found.into_iter().map(|(_, id)| id).collect()
}

/// Whether an assistant reply is the clarifying question.
pub(crate) fn is_clarification(reply: &str) -> bool {
    reply.to_lowercase().contains("which listing do you mean")
}

/// The intent (and month) left pending by a trailing clarifying question, if any.
fn pending(history: &[Message]) -> Option<Parsed> {
    let mut end = history.len();
    while end >= 2 {
        let (user, assistant) = (&history[end - 2], &history[end - 1]);
        if user.role != "user"
            || assistant.role != "assistant"
            || !is_clarification(&assistant.content)
        {
            return None;
        }
        let parsed = parse(&user.content);
        if parsed.intent.is_some() {
            return Some(parsed);
        }
        end -= 2;
    }
    None
}

/// Listing ids named in the most recent assistant reply that names any.
fn prior_listings(history: &[Message], listings: &[Listing]) -> Vec<i64> {
    history
        .iter()
        .rev()
        .filter(|m| m.role == "assistant")
        .map(|m| listings_in(&m.content, listings))
        .find(|ids| !ids.is_empty())
        .unwrap_or_default()
}

/// Decides what to do with `message`, given the session `history` (oldest first).
pub(crate) fn plan(message: &str, history: &[Message], listings: &[Listing]) -> Action {
    let parsed = parse(message);
    let (intent, month) = match parsed.intent {
        Some(intent) => (intent, parsed.month),
        None if parsed.named.is_empty() && parsed.reference.is_none() => {
            return Action::OutOfDomain;
        }
        None => match pending(history) {
            Some(p) => (
                p.intent.unwrap_or(Intent::Details),
                parsed.month.or(p.month),
            ),
            None => (Intent::Details, parsed.month),
        },
    };
    if intent == Intent::Listings {
        return Action::Listings;
    }
    let prior = prior_listings(history, listings);
    let targets = if !parsed.named.is_empty() {
        parsed.named
    } else if let Some(reference) = parsed.reference {
        let resolved = match reference {
            Reference::Nth(n) => prior.get(n).copied(),
            Reference::Last => prior.last().copied(),
            Reference::Pronoun if prior.len() == 1 => prior.first().copied(),
            Reference::Pronoun => None,
        };
        match resolved {
            Some(id) => vec![id],
            None => return Action::Clarify(intent),
        }
    } else if !matches!(intent, Intent::Details | Intent::Occupancy) {
        Vec::new() // bookings and revenue default to every listing, in one call
    } else if parsed.all {
        listings.iter().map(|l| l.id).collect()
    } else if prior.len() == 1 {
        prior
    } else {
        return Action::Clarify(intent);
    };
    let month = month.map(|m| format!("2026-{m:02}"));
    match intent {
        Intent::Listings => Action::Listings,
        Intent::Details => Action::Details(targets),
        Intent::Occupancy => Action::Occupancy(targets),
        Intent::Bookings => Action::Bookings(targets),
        Intent::Revenue => Action::Revenue(targets, month),
    }
}

#[cfg(test)]
mod tests;
