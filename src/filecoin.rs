//! A run's Filecoin proofs: each kind's circuits prepared from a test sector sealed here or a
//! request file (every input checked before parameters or proofs), and filecoin-proofs' own
//! verdict on each finished job (`verify_seal`, `verify_window_post`, …).

use anyhow::{bail, Context, Result};
use provetop_porep::{Kind, PorepArgs, Prepared, SectorSize};
use serde::Serialize;
use std::collections::BTreeMap;

use crate::cli::EngineArgs;
use crate::run::{RunOutput, Session};

/// Reads or seals what a `kind` workload proves and registers its circuits.
pub fn prepare(kind: Kind, args: &EngineArgs) -> Result<Prepared> {
    let sector_size = args
        .sector_size
        .as_deref()
        .map(|s| s.parse::<SectorSize>().context("--sector-size"))
        .transpose()?;
    let progress = |m: &str| eprintln!("{kind}: {m}");
    let prepared = match kind {
        Kind::Porep => Prepared::Porep(provetop_porep::prepare(
            &PorepArgs {
                sector_size,
                c1: args.c1.clone(),
                prover_id: args.prover_id.clone(),
                sector_id: args.sector_id,
                params_dir: args.params_dir.clone(),
                seed: args.seed,
            },
            &progress,
        )?),
        _ => {
            let given = [
                ("--c1", args.c1.is_some()),
                ("--prover-id", args.prover_id.is_some()),
                ("--sector-id", args.sector_id.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                bail!("{flag} is for --workload porep; --workload {kind} proves a test sector sealed here (--sector-size) or a request file (--request)");
            }
            let Some(size) = sector_size else {
                bail!("--workload {kind} needs --sector-size 2KiB|8MiB|512MiB (a test sector sealed here), or --request FILE");
            };
            provetop_porep::prepared::prepare_sealed(
                kind,
                size,
                args.seed,
                args.params_dir.as_deref(),
                &progress,
            )?
        }
    };
    eprintln!("{}", prepared.describe());
    Ok(prepared)
}

/// What a request file proves, checked as `serve` checks a request.
pub fn prepare_request(path: &std::path::Path, args: &EngineArgs) -> Result<Prepared> {
    let what = || format!("--request {}", path.display());
    let r = crate::request_file::read(path).with_context(what)?;
    let (kind, size) = crate::serve::check_request(&r).with_context(what)?;
    // cuzk's rule, as serve's: the registered proof's size.
    if let Some(note) = crate::serve::size_note(&r, size) {
        tracing::warn!("{}: {note}", what());
        eprintln!("{}: warning: {note}", what());
    }
    if let Some(k) = args.workload.filecoin().filter(|k| *k != kind) {
        bail!(
            "--request {}: a {kind} request, not --workload {k}",
            path.display()
        );
    }
    provetop_porep::filecoin::configure(args.params_dir.as_deref())?;
    // The name `bench --workload KIND` gives the circuit: the parameter cache is shared.
    let name = format!("{kind}-{size}");
    let prepared =
        crate::serve::prepare_request(&r, args.params_dir.as_deref(), &name).with_context(what)?;
    eprintln!(
        "request {:?}: miner f0{}, {}",
        r.request_id,
        r.miner_id,
        prepared.describe()
    );
    Ok(prepared)
}

/// A proof's partitions, which `--partitions` (1 unless given) must not contradict.
pub fn partitions(f: &Prepared, asked: u32) -> Result<u32> {
    let have = f.circuits().partitions;
    if asked != 1 && asked != have {
        bail!(
            "--partitions {asked}: a {} proof of a {} sector has {have} partition(s)",
            f.kind(),
            f.size(),
        );
    }
    Ok(have)
}

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
