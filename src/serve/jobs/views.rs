//! What the served requests look like from outside, read under the lock: counts and totals,
//! the running jobs and queues (`GetStatus`, `/status`, metrics), and the fleet's summary.

use super::*;

impl Jobs {
    /// Requests not yet answered.
    pub fn open(&self) -> usize {
        let st = self.inner.lock();
        st.entries
            .values()
            .filter(|e| !matches!(e.phase, Phase::Finished))
            .count()
    }

    /// Answered (completed, failed) since start.
    pub fn totals(&self) -> (u64, u64) {
        let st = self.inner.lock();
        (st.completed, st.failed)
    }

    /// Requests whose proof failed: a partition that did not prove or verify, or a proof
    /// filecoin-proofs rejected. Refused requests are not counted.
    pub fn proof_failures(&self) -> u64 {
        self.inner.lock().proof_failed
    }

    /// Answers by kind so far.
    pub fn tally(&self) -> Tally {
        self.inner.lock().tally.clone()
    }

    /// The requests in the engine, oldest first.
    pub fn running(&self) -> Vec<Running> {
        let st = self.inner.lock();
        let mut out: Vec<Running> = st
            .entries
            .iter()
            .filter_map(|(id, e)| {
                let engine_job = e.engine_job.filter(|_| matches!(e.phase, Phase::Running))?;
                Some(Running {
                    engine_job,
                    job_id: id.clone(),
                    kind: request::kind_name(e.kind),
                    since: e.submitted.unwrap_or(e.accepted),
                    partitions: e.proofs.len() as u32,
                    done: e.proofs.iter().filter(|p| p.is_some()).count() as u32,
                })
            })
            .collect();
        out.sort_by_key(|r| r.engine_job);
        out
    }

    /// Pending and in-progress requests of each proof kind, every kind listed.
    pub fn queues(&self) -> Queues {
        let st = self.inner.lock();
        [
            ProofKind::PorepSealCommit,
            ProofKind::SnapDealsUpdate,
            ProofKind::WindowPostPartition,
            ProofKind::WinningPost,
        ]
        .into_iter()
        .map(|k| {
            let of = |running: bool| {
                st.entries
                    .values()
                    .filter(|e| e.kind == k)
                    .filter(|e| match e.phase {
                        Phase::Checking | Phase::Queued => !running,
                        Phase::Running => running,
                        Phase::Finished => false,
                    })
                    .count() as u32
            };
            (request::kind_name(k), of(false), of(true))
        })
        .collect()
    }

    /// The answers of the last ten minutes by kind, and WinningPoSt's (last, median) ms.
    pub fn served(&self) -> (Vec<crate::serve::served::Recent>, Option<(u64, u64)>) {
        let st = self.inner.lock();
        (st.served.recent(Instant::now()), st.served.winning())
    }

    /// Within `window`: the slowest WinningPoSt answer (ms) and the requests failed.
    pub fn within(&self, window: std::time::Duration) -> (u64, u64) {
        self.inner.lock().served.within(window, Instant::now())
    }

    /// Requests waiting and running by (kind, priority), for the fleet's queue column.
    pub fn depths(&self) -> std::collections::BTreeMap<(&'static str, Priority), (u32, u32)> {
        let st = self.inner.lock();
        let mut out = std::collections::BTreeMap::new();
        for e in st.entries.values() {
            let running = match e.phase {
                Phase::Checking | Phase::Queued => false,
                Phase::Running => true,
                Phase::Finished => continue,
            };
            let d: &mut (u32, u32) = out
                .entry((request::kind_name(e.kind), e.priority))
                .or_default();
            *(if running { &mut d.1 } else { &mut d.0 }) += 1;
        }
        out
    }

    /// The requests running on each circuit_id: the parameter sets in use.
    pub fn in_use(&self) -> HashMap<String, u32> {
        let st = self.inner.lock();
        let mut n = HashMap::new();
        for e in st.entries.values() {
            if matches!(e.phase, Phase::Queued | Phase::Running) {
                *n.entry(e.circuit_id.clone()).or_insert(0) += 1;
            }
        }
        n
    }
}
