//! The turns a check reads: its [`Scope`], the [`Subject`] that scope finds in a
//! transcript (or why there is none), and the [`Judged`] turn a judge is shown.

use gavel_core::{ToolCall, Transcript, Turn};

/// Which turns a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The last turn of round `i` (its text), or all its turns (tools, latency).
    Round(usize),
    /// The last turn of the conversation, which must have reached the last round.
    LastTurn,
    /// Every turn; the conversation must be complete and unbroken.
    Transcript,
}

impl Scope {
    /// The round a verdict of this scope applies to, once the answer is known.
    pub(crate) fn round(self, answer: Option<&Turn>, rounds: usize) -> Option<usize> {
        match self {
            Scope::Round(r) => Some(r),
            Scope::LastTurn => Some(answer.map_or(rounds - 1, |a| a.round)),
            Scope::Transcript => None,
        }
    }
}

/// The turns a check reads, once they are known to be there and sound.
pub(crate) struct Subject<'a> {
    /// The answer to grade: the last targeted turn.
    pub(crate) answer: &'a Turn,
    /// Every targeted turn, in order (the answer last).
    pub(crate) turns: Vec<&'a Turn>,
}

/// The turn under judgement and what came before it.
pub(crate) struct Judged<'a> {
    /// The turns before the judged one, in order.
    pub(crate) history: &'a [Turn],
    /// The judged turn.
    pub(crate) turn: &'a Turn,
    /// The tool calls made on the judged turn's behalf (its round's, or the whole
    /// conversation's for case-level judges).
    pub(crate) tool_calls: Vec<&'a ToolCall>,
    /// What only other branches of the conversation were told (the
    /// `branch-isolation` judge), shown fenced; `None` for every other judge.
    pub(crate) withheld: Option<String>,
}

/// Where `turn` sits in the transcript (its length when it is not there).
pub(crate) fn position(transcript: &Transcript, turn: &Turn) -> usize {
    transcript
        .turns
        .iter()
        .position(|t| std::ptr::eq(t, turn))
        .unwrap_or(transcript.turns.len())
}

/// The turns before position `index` that a turn of `branch` was answered seeing:
/// the parent's and its own branch's only.
pub(crate) fn seen_before(
    transcript: &Transcript,
    index: usize,
    branch: Option<&str>,
) -> Vec<Turn> {
    transcript.turns[..index.min(transcript.turns.len())]
        .iter()
        .filter(|t| t.branch.is_none() || t.branch.as_deref() == branch)
        .cloned()
        .collect()
}

/// Finds the turns a scope reads, or says why there is no answer to check.
pub(crate) fn resolve(
    scope: Scope,
    transcript: &Transcript,
    rounds: usize,
) -> Result<Subject<'_>, String> {
    let last_round = rounds - 1;
    let of_round =
        |r: usize| -> Vec<&Turn> { transcript.turns.iter().filter(|t| t.round == r).collect() };
    let (answer, turns) = match scope {
        Scope::Round(r) => {
            let turns = of_round(r);
            let answer = *turns
                .last()
                .ok_or_else(|| not_reached(r, rounds, transcript))?;
            (answer, turns)
        }
        Scope::LastTurn => {
            let answer = transcript
                .last()
                .filter(|t| t.round >= last_round)
                .ok_or_else(|| not_reached(first_unreached(transcript), rounds, transcript))?;
            (answer, of_round(answer.round))
        }
        Scope::Transcript => {
            if let Some(failure) = transcript.turns.iter().find_map(|t| t.failure.as_ref()) {
                return Err(failure.message.clone());
            }
            let answer = transcript
                .last()
                .filter(|_| first_unreached(transcript) > last_round)
                .ok_or_else(|| not_reached(first_unreached(transcript), rounds, transcript))?;
            (answer, transcript.turns.iter().collect())
        }
    };
    match &answer.failure {
        Some(failure) => Err(failure.message.clone()),
        None => Ok(Subject { answer, turns }),
    }
}

/// The first round index with no turn at or after it: one past the highest round seen.
fn first_unreached(transcript: &Transcript) -> usize {
    transcript
        .turns
        .iter()
        .map(|t| t.round + 1)
        .max()
        .unwrap_or(0)
}

/// "round 2 of 3 was not reached", with the failure that stopped the conversation.
fn not_reached(round: usize, rounds: usize, transcript: &Transcript) -> String {
    let mut why = format!("round {} of {rounds} was not reached", round + 1);
    if let Some(failure) = transcript.turns.iter().find_map(|t| t.failure.as_ref()) {
        why.push_str(&format!(" ({})", failure.message));
    }
    why
}
