//! Playing a case's conversation with a target: rounds in one session, follow-ups
//! to clarifying questions, revival after round 1, branches forked from the
//! parent rounds, or a simulated user.
//!
//! The conversation stops at the first turn that failed or at the deadline; every
//! turn sent is in the transcript, follow-ups marked `followup`, branch turns
//! marked with their `branch`.

mod followup;
mod simulated;

use std::time::{Duration, Instant};

use gavel_checks::JudgeRuntime;
use gavel_core::workspace::WorkspaceRequest;
use gavel_core::{Case, ModelCall, ModelCaller, Round, TargetFailure, Transcript, Turn, Usage};
use gavel_models::{ChatModel, ChatRequest, ChatResponse};
use gavel_targets::{Session, Target, TurnRequest};

/// A played conversation, or why it could not be played.
pub(crate) enum Played {
    /// The transcript (complete or stopped at a failure).
    Transcript(Transcript),
    /// Nothing could be played, for a reason that is not the target's fault
    /// (e.g. no model for the simulated user).
    Skipped(String),
}

/// What every step of one conversation shares.
struct Conversation<'a> {
    case: &'a Case,
    target: &'a dyn Target,
    deadline: Instant,
    timeout: Duration,
    rt: &'a JudgeRuntime<'a>,
    transcript: Transcript,
    /// The case's `followups` hints not used yet.
    hints: std::slice::Iter<'a, String>,
    /// gavel's own model calls not yet attributed to a turn (the simulated user's
    /// first message, written before any turn exists).
    unattributed: Spent,
    /// What the case asks of a `workspace` target (other targets ignore it).
    workspace: WorkspaceRequest,
}

/// The conversation stopped: a turn failed or the deadline passed.
struct Stopped;

/// Plays `case` against `target` in the session `session_id`, within `deadline`.
pub(crate) async fn converse(
    case: &Case,
    target: &dyn Target,
    session_id: String,
    deadline: Instant,
    timeout: Duration,
    rt: &JudgeRuntime<'_>,
) -> Played {
    if let Some(recorded) = target.recorded(&case.id) {
        return replayed(case, recorded, session_id);
    }
    let mut c = Conversation {
        case,
        target,
        deadline,
        timeout,
        rt,
        transcript: Transcript {
            session_id,
            turns: Vec::new(),
        },
        hints: case.followups.iter(),
        unattributed: Spent::default(),
        workspace: WorkspaceRequest::of(case),
    };
    if let Some(user) = &case.simulated_user {
        return simulated::play(&mut c, user).await;
    }
    let _ = c.rounds().await;
    Played::Transcript(c.transcript)
}

/// A recorded conversation as the case's transcript: recorded turn `i` answers
/// round `i`, turns past the case's last round count as that round's. What
/// needs a live agent (revival, branches, a simulated user) is skipped.
fn replayed(
    case: &Case,
    recorded: Result<Transcript, TargetFailure>,
    session_id: String,
) -> Played {
    let live = if case.revival {
        Some("revival")
    } else if !case.branches().is_empty() {
        Some("branching")
    } else if case.simulated_user.is_some() {
        Some("a simulated user")
    } else {
        None
    };
    if let Some(feature) = live {
        return Played::Skipped(format!(
            "{feature} needs a live agent; a replay target only has recorded conversations"
        ));
    }
    match recorded {
        Ok(mut transcript) => {
            let last = case.rounds.len().max(1) - 1;
            for (i, turn) in transcript.turns.iter_mut().enumerate() {
                turn.round = i.min(last);
            }
            Played::Transcript(transcript)
        }
        Err(failure) => Played::Transcript(Transcript {
            session_id,
            turns: vec![Turn {
                failure: Some(failure),
                ..Turn::default()
            }],
        }),
    }
}

/// gavel's own model calls around a turn: their summed usage and each call.
#[derive(Debug, Default)]
struct Spent {
    usage: Option<Usage>,
    calls: Vec<ModelCall>,
}

impl Spent {
    /// Asks `model` for `caller`, keeping the call and, when it answered, its
    /// usage; the answer, or why there is none.
    async fn chat(
        &mut self,
        model: &dyn ChatModel,
        request: &ChatRequest,
        caller: ModelCaller,
    ) -> Result<ChatResponse, String> {
        let (answer, call) = gavel_models::chat_recorded(model, request, caller).await;
        self.calls.extend(call);
        let response = answer.map_err(|e| e.message)?;
        self.usage.get_or_insert_with(Usage::default).add(&Usage {
            input_tokens: response.usage.input_tokens,
            output_tokens: response.usage.output_tokens,
            cost_usd: response.cost_usd,
        });
        Ok(response)
    }
}

impl Conversation<'_> {
    /// Books model calls gavel made for this conversation on the latest turn
    /// (the one they were about), or on the next turn when there is none yet.
    fn spend(&mut self, spent: Spent) {
        let (usage, calls) = match self.transcript.turns.last_mut() {
            Some(turn) => (&mut turn.harness_usage, &mut turn.model_calls),
            None => (&mut self.unattributed.usage, &mut self.unattributed.calls),
        };
        if let Some(u) = spent.usage {
            usage.get_or_insert_with(Usage::default).add(&u);
        }
        calls.extend(spent.calls);
    }

    /// The parent rounds in one session (revived after round 1 when asked), then
    /// each branch in a session forked from the parent.
    async fn rounds(&mut self) -> Result<(), Stopped> {
        let parent_id = self.transcript.session_id.clone();
        let mut session = self.open(&parent_id, 0, None).await?;
        let case = self.case;
        let parent_rounds = case
            .rounds
            .iter()
            .take_while(|r| r.branch.is_none())
            .count();
        let revive = case.revival && case.rounds.len() > 1;
        for (index, round) in case.rounds[..parent_rounds].iter().enumerate() {
            let played = self.round(session.as_mut(), index, round).await;
            if played.is_err() {
                session.close().await;
                return played;
            }
            if revive && index == 0 {
                session = self.revive(session, &parent_id).await?;
            }
        }
        let result = self.branches(&parent_id, parent_rounds).await;
        session.close().await;
        result
    }

    /// Forks a session per branch from the parent and plays its rounds there.
    async fn branches(&mut self, parent_id: &str, first: usize) -> Result<(), Stopped> {
        let case = self.case;
        for name in case.branches() {
            let child_id = Transcript::branch_session(parent_id, name);
            let start = (first..case.rounds.len())
                .find(|&i| case.rounds[i].branch.as_deref() == Some(name))
                .unwrap_or(first);
            let branch = Some(name);
            match self.within(self.target.fork(parent_id, &child_id)).await {
                Some(Ok(())) => {}
                Some(Err(failure)) => return Err(self.failed(start, branch, failure)),
                None => return Err(self.timed_out(start, branch)),
            }
            let mut session = self.open(&child_id, start, branch).await?;
            for (index, round) in case.rounds.iter().enumerate().skip(first) {
                if round.branch.as_deref() != branch {
                    continue;
                }
                if self.round(session.as_mut(), index, round).await.is_err() {
                    session.close().await;
                    return Err(Stopped);
                }
            }
            session.close().await;
        }
        Ok(())
    }

    /// Sends one round's message, then answers clarifying questions with
    /// follow-ups, up to the case's limit. A round that expects a clarifying
    /// question (`expect_clarification`) is left unanswered: the question is what
    /// its checks grade.
    async fn round(
        &mut self,
        session: &mut dyn Session,
        index: usize,
        round: &Round,
    ) -> Result<(), Stopped> {
        let mut message = round.message();
        let branch = round.branch.as_deref();
        let limit = if round.expect_clarification {
            0
        } else {
            self.case.followup_limit()
        };
        let mut sent = 0;
        loop {
            let turn = self
                .send(session, index, &message, branch, sent > 0)
                .await?;
            if sent >= limit {
                return Ok(());
            }
            let mut spent = Spent::default();
            let asked =
                followup::detect(self.case, &message, &turn.output, self.rt, &mut spent).await;
            self.spend(spent);
            let Some(asked) = asked else {
                return Ok(());
            };
            match self.hints.next().cloned().or(asked.proposed) {
                Some(reply) => message = reply,
                None => {
                    tracing::debug!(case = %self.case.id, round = index, "clarifying question left unanswered: no `followups` hint and no model");
                    return Ok(());
                }
            }
            sent += 1;
        }
    }

    /// Sends one message in `session` and records the turn; a failed turn stops
    /// the conversation. The target sees the history of this branch only.
    async fn send(
        &mut self,
        session: &mut dyn Session,
        index: usize,
        message: &str,
        branch: Option<&str>,
        followup: bool,
    ) -> Result<Turn, Stopped> {
        let history: Vec<Turn> = self
            .transcript
            .turns
            .iter()
            .filter(|t| t.branch.is_none() || t.branch.as_deref() == branch)
            .cloned()
            .collect();
        let session_id = match branch {
            Some(name) => Transcript::branch_session(&self.transcript.session_id, name),
            None => self.transcript.session_id.clone(),
        };
        let request = TurnRequest {
            session_id: &session_id,
            case_id: &self.case.id,
            round: index,
            message,
            followup,
            context: self.case.context.as_ref(),
            history: &history,
            workspace: Some(&self.workspace),
        };
        let mut turn = match self.within(session.send(&request)).await {
            Some(turn) => turn,
            None => self.timeout_turn(index, message.to_owned()),
        };
        turn.branch = branch.map(str::to_owned);
        turn.followup = followup;
        let spent = std::mem::take(&mut self.unattributed);
        turn.harness_usage = spent.usage;
        turn.model_calls.extend(spent.calls);
        let failed = turn.failure.is_some();
        self.transcript.turns.push(turn.clone());
        if failed { Err(Stopped) } else { Ok(turn) }
    }

    /// Opens a session; a failure is recorded as a turn of `round`.
    async fn open(
        &mut self,
        session_id: &str,
        round: usize,
        branch: Option<&str>,
    ) -> Result<Box<dyn Session>, Stopped> {
        match self.within(self.target.open(session_id)).await {
            Some(Ok(s)) => Ok(s),
            Some(Err(failure)) => Err(self.failed(round, branch, failure)),
            None => Err(self.timed_out(round, branch)),
        }
    }

    /// Closes the session for real and reopens it with the same id.
    async fn revive(
        &mut self,
        session: Box<dyn Session>,
        session_id: &str,
    ) -> Result<Box<dyn Session>, Stopped> {
        match self.within(self.target.revive(session, session_id)).await {
            Some(Ok(s)) => Ok(s),
            Some(Err(mut failure)) => {
                failure.message = format!("revival: {}", failure.message);
                Err(self.failed(1, None, failure))
            }
            None => Err(self.timed_out(1, None)),
        }
    }

    async fn within<F: std::future::Future>(&self, f: F) -> Option<F::Output> {
        tokio::time::timeout_at(self.deadline.into(), f).await.ok()
    }

    fn timeout_turn(&self, round: usize, input: String) -> Turn {
        Turn {
            round,
            input,
            failure: Some(TargetFailure {
                message: format!(
                    "the execution timed out after {:.1}s",
                    self.timeout.as_secs_f64()
                ),
                transient: true,
            }),
            ..Turn::default()
        }
    }

    /// Records a failure outside any message (open, fork, revival) as a turn.
    fn failed(&mut self, round: usize, branch: Option<&str>, failure: TargetFailure) -> Stopped {
        self.transcript.turns.push(Turn {
            round,
            branch: branch.map(str::to_owned),
            failure: Some(failure),
            ..Turn::default()
        });
        Stopped
    }

    fn timed_out(&mut self, round: usize, branch: Option<&str>) -> Stopped {
        let mut turn = self.timeout_turn(round, String::new());
        turn.branch = branch.map(str::to_owned);
        self.transcript.turns.push(turn);
        Stopped
    }
}
