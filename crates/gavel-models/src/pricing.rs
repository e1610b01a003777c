//! What models cost: a built-in price table, overridable per suite.

use std::collections::BTreeMap;

use gavel_core::judge::Price;

use crate::{ModelId, Provider};

const fn price(input_per_mtok: f64, output_per_mtok: f64) -> Price {
    Price {
        input_per_mtok,
        output_per_mtok,
    }
}

/// Built-in prices in US dollars per million tokens (input, output), by exact model
/// id. These are the providers' public list prices as of late 2025, for standard
/// (not batch, not cached-input) usage; Gemini 2.5 Pro's is its price for prompts of
/// up to 200k tokens. Prices change: a suite overrides any of them, or prices a
/// model missing here, with `judge.prices` (see [`price_for`]).
const BUILTIN: &[(&str, Price)] = &[
    ("openai:gpt-4", price(30.00, 60.00)),
    ("openai:gpt-3.5-turbo", price(0.50, 1.50)),
    ("openai:gpt-4o", price(2.50, 10.00)),
    ("openai:gpt-4o-mini", price(0.15, 0.60)),
    ("openai:gpt-4.1", price(2.00, 8.00)),
    ("openai:gpt-4.1-mini", price(0.40, 1.60)),
    ("openai:gpt-4.1-nano", price(0.10, 0.40)),
    ("openai:gpt-5", price(1.25, 10.00)),
    ("openai:gpt-5-mini", price(0.25, 2.00)),
    ("openai:gpt-5-nano", price(0.05, 0.40)),
    ("openai:o3", price(2.00, 8.00)),
    ("openai:o4-mini", price(1.10, 4.40)),
    ("anthropic:claude-opus-4-5", price(5.00, 25.00)),
    ("anthropic:claude-opus-4-1", price(15.00, 75.00)),
    ("anthropic:claude-sonnet-4-5", price(3.00, 15.00)),
    ("anthropic:claude-sonnet-4-0", price(3.00, 15.00)),
    ("anthropic:claude-haiku-4-5", price(1.00, 5.00)),
    ("anthropic:claude-3-5-haiku-latest", price(0.80, 4.00)),
    ("gemini:gemini-2.5-pro", price(1.25, 10.00)),
    ("gemini:gemini-2.5-flash", price(0.30, 2.50)),
    ("gemini:gemini-2.5-flash-lite", price(0.10, 0.40)),
];

/// The built-in price table: (model id, price), see [`price_for`].
pub fn builtin_prices() -> &'static [(&'static str, Price)] {
    BUILTIN
}

/// The price of `model`: the suite's override (`judge.prices`, keyed by model id)
/// when there is one, else the built-in list price, else `None`: the cost is
/// unknown (shown as `-`), as for every `openai-compatible` model unless priced.
///
/// Ids match exactly, after normalizing how they are written (`google:` is
/// `gemini:`; a trailing `/` of a base URL is dropped); a dated snapshot such as
/// `anthropic:claude-sonnet-4-5-20250929` needs an override. A `local:` model
/// costs nothing.
pub fn price_for(model: &ModelId, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    if model.provider == Provider::Local {
        // Runs on this machine: no bill.
        return Some(price(0.0, 0.0));
    }
    let wanted = model.to_string();
    overrides
        .iter()
        .find(|(id, _)| normalize(id) == wanted)
        .map(|(_, price)| *price)
        .or_else(|| {
            BUILTIN
                .iter()
                .find(|(id, _)| *id == wanted)
                .map(|(_, price)| *price)
        })
}

/// The id as `ModelId` writes it, or as given when it does not parse.
fn normalize(id: &str) -> String {
    id.parse::<ModelId>()
        .map_or_else(|_| id.to_owned(), |id| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().unwrap()
    }

    #[test]
    fn built_in_overridden_and_unknown() {
        let none = BTreeMap::new();
        assert_eq!(
            price_for(&id("openai:gpt-5-mini"), &none),
            Some(price(0.25, 2.00))
        );
        assert_eq!(
            price_for(&id("google:gemini-2.5-pro"), &none),
            Some(price(1.25, 10.00))
        );
        assert_eq!(price_for(&id("openai:gpt-5-mini-2025-08-07"), &none), None);
        let local = id("openai-compatible:llama3@http://127.0.0.1:11434/v1");
        assert_eq!(price_for(&local, &none), None);
        assert_eq!(
            price_for(&id("local:gemma-3-270m-q4_k_m"), &none),
            Some(price(0.0, 0.0))
        );

        let overrides = BTreeMap::from([
            ("openai:gpt-5-mini".to_owned(), price(1.0, 1.0)),
            (
                "openai-compatible:llama3@http://127.0.0.1:11434/v1/".to_owned(),
                price(0.0, 0.0),
            ),
        ]);
        assert_eq!(
            price_for(&id("openai:gpt-5-mini"), &overrides),
            Some(price(1.0, 1.0))
        );
        assert_eq!(price_for(&local, &overrides), Some(price(0.0, 0.0)));
        assert_eq!(
            price_for(&id("anthropic:claude-haiku-4-5"), &overrides),
            Some(price(1.0, 5.0))
        );
    }

    #[test]
    fn every_built_in_id_parses_and_is_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for (model, p) in builtin_prices() {
            assert_eq!(id(model).to_string(), *model);
            assert!(seen.insert(*model), "{model} twice");
            assert!(p.input_per_mtok > 0.0 && p.output_per_mtok >= p.input_per_mtok);
        }
    }
}
