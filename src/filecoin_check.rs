//! filecoin-proofs' own verdict on each finished job of a run (`verify_seal`,
//! `verify_window_post`, …), and the run's Filecoin parts as `bench --json` lists them. Apart
//! from `filecoin` so that the run loop, which prepares through it, is not imported back.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::run::{RunOutput, Session};

/// filecoin-proofs' own verdict on each job's proofs (all its partitions, in order), by its
/// verifier of the kind.
#[derive(Serialize, Default)]
pub struct Check {
    /// The verifiers that ran: `verify_seal`, `verify_window_post`, … (comma separated).
    pub verifier: String,
    pub verified: usize,
    pub failed: usize,
    /// Per kind, with several (`--mix`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub kinds: BTreeMap<&'static str, KindCheck>,
    /// Why jobs were not checked (no prover or sector id), if they were not.
    pub skipped: Option<String>,
    pub errors: Vec<String>,
}

/// One kind's share of a [`Check`].
#[derive(Serialize, Default)]
pub struct KindCheck {
    pub verifier: &'static str,
    pub verified: usize,
    pub failed: usize,
}

impl Check {
    /// Whether every job checked was accepted.
    pub fn ok(&self) -> bool {
        self.failed == 0 && self.errors.is_empty()
    }

    /// `filecoin-proofs verify_seal: 3 job(s) accepted, 0 rejected`, with errors below.
    pub fn line(&self) -> String {
        let v = &self.verifier;
        let mut line = format!(
            "filecoin-proofs {v}: {} job(s) accepted, {} rejected",
            self.verified, self.failed
        );
        if self.kinds.len() > 1 {
            let each: Vec<String> = self
                .kinds
                .iter()
                .map(|(k, c)| format!("{k} {}/{}", c.verified, c.verified + c.failed))
                .collect();
            line.push_str(&format!(" ({})", each.join(", ")));
        }
        if let Some(why) = &self.skipped {
            line = format!("filecoin-proofs {v}: not run ({why})");
        }
        for e in &self.errors {
            line.push_str(&format!("\nfilecoin-proofs {v}: error: {e}"));
        }
        line
    }
}

/// Checks every whole job of a run with filecoin-proofs; None when the run proved no Filecoin
/// circuit.
pub fn check(session: &Session, out: &RunOutput) -> Option<Check> {
    let parts = &session.plan.parts;
    if parts.iter().all(|p| p.filecoin.is_none()) {
        return None;
    }
    let mut check = Check::default();
    let mut jobs: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for r in &out.results {
        if let Some(p) = &r.proof {
            jobs.entry(r.record.job).or_default().extend(p.to_bytes());
        }
    }
    let quiet = |_: &str, _: usize, _: usize| {};
    for (job, bytes) in &jobs {
        let Some(part) = out.job_parts.get(job).and_then(|i| parts.get(*i)) else {
            continue;
        };
        let Some(proof) = &part.filecoin else {
            continue;
        };
        if bytes.len() != part.partitions as usize * provetop_engine::prover::Proof::BYTES {
            continue;
        }
        let kind = proof.kind();
        let verdict = session
            .engine
            .store()
            .get(&part.workload, &quiet)
            .and_then(|key| proof.verify(&key.params.vk, bytes));
        let each = check.kinds.entry(kind.name()).or_default();
        each.verifier = kind.verifier();
        match verdict {
            Ok(Some(true)) => {
                (check.verified, each.verified) = (check.verified + 1, each.verified + 1)
            }
            Ok(Some(false)) => (check.failed, each.failed) = (check.failed + 1, each.failed + 1),
            Ok(None) => {
                check.skipped = Some(
                    "the prover id or sector id is unknown: give --prover-id and --sector-id"
                        .into(),
                );
            }
            Err(e) => check.errors.push(format!("{e:#}")),
        }
    }
    let verifiers: Vec<&str> = check.kinds.values().map(|k| k.verifier).collect();
    check.verifier = verifiers.join(", ");
    if check.kinds.is_empty() {
        if let Some(f) = parts.iter().find_map(|p| p.filecoin.as_ref()) {
            check.verifier = f.kind().verifier().to_string();
        }
    }
    if check.kinds.len() == 1 {
        check.kinds.clear();
    }
    // Every kind's key folder is the process's one: removed once, after them all.
    if let Some(f) = parts.iter().find_map(|p| p.filecoin.as_ref()) {
        f.cleanup();
    }
    Some(check)
}

/// The parts' labels for `workload.mix` in `bench --json`: kind, weight, priority, circuit.
pub fn mix_json(session: &Session) -> Option<serde_json::Value> {
    let parts = &session.plan.parts;
    (parts.len() > 1).then(|| {
        parts
            .iter()
            .map(|p| {
                let shape = p.workload.shape().ok();
                serde_json::json!({
                    "kind": p.workload.kind(),
                    "label": p.workload.label(),
                    "weight": p.weight,
                    "priority": p.priority.name(),
                    "partitions": p.partitions,
                    "constraints": shape.as_ref().map(|s| s.num_constraints),
                })
            })
            .collect()
    })
}
