//! `provetop verify`: filecoin-proofs' `verify_seal` over a proof of a request file, with the
//! verifying key of the parameters this machine proves with (exit 0 verified, 1 not).

use anyhow::{Context, Result};
use provetop_engine::circuit::Workload;
use provetop_engine::params::store::ParamsStore;

use crate::cli::VerifyArgs;
use crate::run::usage;

pub fn main(args: &VerifyArgs) -> Result<i32> {
    let request = usage(crate::request_file::read(&args.request))?;
    let proof = usage(
        std::fs::read(&args.proof).with_context(|| format!("--proof {}", args.proof.display())),
    )?;
    provetop_porep::filecoin::configure(None)?;
    let (c1, prover_id) = usage(crate::serve::request_c1(&request))?;
    let size = c1.size;
    let name = format!("porep-{size}");
    let porep = usage(provetop_porep::source::register(
        c1,
        Some(prover_id),
        Some(request.sector_number),
        None,
        &name,
    ))?;
    let store = ParamsStore::new(args.params_cache.clone(), None);
    let quiet = |_: &str, _: usize, _: usize| {};
    let loaded = store
        .get(&Workload::External { circuit: name }, &quiet)
        .context("the verifying key")?;
    let ok = provetop_porep::filecoin::verify(&porep, &loaded.params.vk, &proof);
    provetop_porep::filecoin::cleanup(&porep);
    match ok? {
        Some(true) => {
            println!(
                "verified: sector {} of miner f0{}",
                request.sector_number, request.miner_id
            );
            Ok(0)
        }
        _ => {
            println!("not verified: verify_seal rejected the proof");
            Ok(1)
        }
    }
}
