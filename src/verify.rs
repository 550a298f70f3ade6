//! `provetop verify`: filecoin-proofs' own verifier of the request's kind (`verify_seal`,
//! `verify_empty_sector_update_proof`, `verify_window_post`, `verify_winning_post`) over a
//! proof of a request file, with the verifying key of the parameters this machine proves with
//! (exit 0 verified, 1 not; 2 for a file that is not proofs).

use anyhow::{Context, Result};
use provetop_engine::circuit::Workload;
use provetop_engine::params::store::{Loaded, ParamsStore};
use provetop_porep::Prepared;
use provetop_proto::cuzk::v1::SubmitProofRequest;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::VerifyArgs;
use crate::proof_file::Shape;
use crate::run::{usage, UsageError};

pub fn main(args: &VerifyArgs) -> Result<i32> {
    let request = usage(crate::request_file::read(&args.request))?;
    let proof = usage(
        provetop_telemetry::input::read_regular(&args.proof, provetop_telemetry::input::SMALL_FILE)
            .with_context(|| format!("--proof {}", args.proof.display())),
    )?;
    // Its shape first: a file that is not proofs is bad input, a point off the curve a proof
    // that cannot verify, both said before parameters are read.
    match crate::proof_file::check(&args.proof, &proof) {
        Ok(_) => {}
        Err(Shape::Malformed(why)) => return Err(UsageError(anyhow::anyhow!("{why}")).into()),
        Err(Shape::Invalid(why)) => {
            println!("not verified: {why}");
            return Ok(1);
        }
    }
    let checker = Checker::new(&request, args.params_cache.clone())?;
    let verifier = checker.proof.kind().verifier();
    match checker.check(&proof)? {
        true => {
            println!("verified by {verifier}: {}", checker.proof.describe());
            Ok(0)
        }
        false => {
            println!("not verified: {verifier} rejected {}", args.proof.display());
            Ok(1)
        }
    }
}

/// Checks proofs of one request with filecoin-proofs, as often as asked.
pub struct Checker {
    proof: Prepared,
    loaded: Arc<Loaded>,
}

impl Checker {
    /// The request's statement and the verifying key of its parameters (from `params_cache`,
    /// or made there as any run would). A request that does not check is bad input.
    pub fn new(request: &SubmitProofRequest, params_cache: Option<PathBuf>) -> Result<Checker> {
        provetop_porep::filecoin::configure(None)?;
        let (kind, size) = usage(crate::serve::check_request(request))?;
        // The name `bench` gives the circuit: the parameter cache is shared.
        let name = format!("{kind}-{size}");
        let proof = usage(crate::serve::prepare_request(request, None, &name))?;
        let store = ParamsStore::new(params_cache, None);
        let quiet = |_: &str, _: usize, _: usize| {};
        let loaded = store
            .get(&Workload::External { circuit: name }, &quiet)
            .context("the verifying key")?;
        Ok(Checker { proof, loaded })
    }

    /// Whether filecoin-proofs accepts `proof`.
    pub fn check(&self, proof: &[u8]) -> Result<bool> {
        let ok = self.proof.verify(&self.loaded.params.vk, proof)?;
        Ok(ok == Some(true))
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        self.proof.cleanup();
    }
}
