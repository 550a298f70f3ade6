//! A `Prove` whose caller goes away (its deadline passes, it disconnects) cancels the job it
//! made: tonic drops the call's future then, and with it this guard. A job the call only
//! joined (a retry of an open request) is someone else's and goes on.

use parking_lot::Mutex;
use std::sync::Arc;

use super::identity::shown;
use super::jobs::{Accepted, Jobs};

enum State {
    /// The request is being checked: no job id yet.
    Submitting,
    /// The call made this job.
    Made(String),
    /// The call joined another's job, or has its answer: nothing to cancel.
    Settled,
    /// The caller left before the job was made: it is cancelled once it is.
    Abandoned,
}

/// Held by a `Prove` call until its answer; dropped early, it cancels the call's job.
pub struct OnAbandon {
    jobs: Arc<Jobs>,
    state: Arc<Mutex<State>>,
}

/// The half that reports the job once `submit` returns (on the blocking thread).
pub struct Made {
    jobs: Arc<Jobs>,
    state: Arc<Mutex<State>>,
}

impl OnAbandon {
    pub fn new(jobs: Arc<Jobs>) -> (OnAbandon, Made) {
        let state = Arc::new(Mutex::new(State::Submitting));
        let made = Made {
            jobs: jobs.clone(),
            state: state.clone(),
        };
        (OnAbandon { jobs, state }, made)
    }

    /// The caller has its answer.
    pub fn answered(self) {
        *self.state.lock() = State::Settled;
    }
}

impl Made {
    /// The request was accepted as `a`: cancelled now if the caller already left.
    pub fn report(&self, a: &Accepted) {
        let mut s = self.state.lock();
        match (&*s, a.joined) {
            (State::Abandoned, false) => {
                drop(s);
                cancel(&self.jobs, &a.job_id);
            }
            (_, true) => *s = State::Settled,
            (_, false) => *s = State::Made(a.job_id.clone()),
        }
    }
}

impl Drop for OnAbandon {
    fn drop(&mut self) {
        let was = std::mem::replace(&mut *self.state.lock(), State::Abandoned);
        if let State::Made(id) = was {
            cancel(&self.jobs, &id);
        }
    }
}

fn cancel(jobs: &Jobs, id: &str) {
    if jobs.cancel(id).is_some() {
        tracing::info!(
            "serve: {}: its Prove's caller left (deadline or disconnect): cancelled",
            shown(id)
        );
    }
}
