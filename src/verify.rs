//! `provetop verify`: filecoin-proofs' `verify_seal` over a proof of a request file, with the
//! verifying key of the parameters this machine proves with (exit 0 verified, 1 not).

use anyhow::{Context, Result};
use provetop_engine::circuit::Workload;
use provetop_engine::params::store::{Loaded, ParamsStore};
use provetop_porep::Porep;
use provetop_proto::cuzk::v1::SubmitProofRequest;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::VerifyArgs;
use crate::run::usage;

pub fn main(args: &VerifyArgs) -> Result<i32> {
    let request = usage(crate::request_file::read(&args.request))?;
    let proof = usage(
        std::fs::read(&args.proof).with_context(|| format!("--proof {}", args.proof.display())),
    )?;
    let checker = Checker::new(&request, args.params_cache.clone())?;
    match checker.check(&proof)? {
        true => {
            println!(
                "verified: sector {} of miner f0{}",
                request.sector_number, request.miner_id
            );
            Ok(0)
        }
        false => {
            println!("not verified: verify_seal rejected the proof");
            Ok(1)
        }
    }
}

/// Checks proofs of one request with filecoin-proofs, as often as asked.
pub struct Checker {
    porep: Porep,
    loaded: Arc<Loaded>,
}

impl Checker {
    /// The request's sector and the verifying key of its parameters (from `params_cache`, or
    /// made there as any run would). A request that does not check is bad input.
    pub fn new(request: &SubmitProofRequest, params_cache: Option<PathBuf>) -> Result<Checker> {
        provetop_porep::filecoin::configure(None)?;
        let (c1, prover_id) = usage(crate::serve::request_c1(request))?;
        let name = format!("porep-{}", c1.size);
        let porep = usage(provetop_porep::source::register(
            c1,
            Some(prover_id),
            Some(request.sector_number),
            None,
            &name,
        ))?;
        let store = ParamsStore::new(params_cache, None);
        let quiet = |_: &str, _: usize, _: usize| {};
        let loaded = store
            .get(&Workload::External { circuit: name }, &quiet)
            .context("the verifying key")?;
        Ok(Checker { porep, loaded })
    }

    /// Whether `verify_seal` accepts `proof`.
    pub fn check(&self, proof: &[u8]) -> Result<bool> {
        let ok = provetop_porep::filecoin::verify(&self.porep, &self.loaded.params.vk, proof)?;
        Ok(ok == Some(true))
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        provetop_porep::filecoin::cleanup(&self.porep);
    }
}
