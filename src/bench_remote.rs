//! `bench --request FILE --server ADDR`: the request proved `--proofs` times by a running
//! `provetop serve` (or any `cuzk.v1.ProvingEngine`) instead of an engine here, each answer
//! checked with filecoin-proofs' own verifier of its kind (`verify_seal`, …): proofs per hour
//! through the API, to set beside `bench --request FILE` on the same machine and settings.

use anyhow::{anyhow, Context, Result};
use provetop_proto::cuzk::v1::await_proof_response::Status;
use provetop_proto::cuzk::v1::proving_engine_client::ProvingEngineClient;
use provetop_proto::cuzk::v1::{PreloadSrsRequest, ProveRequest, SubmitProofRequest};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{BenchArgs, Concurrency};
use crate::run::{usage, UsageError};

/// Requests kept outstanding when `--concurrency` is auto: enough that the server's own queue
/// never runs dry, whatever it runs at once.
const AUTO_OUTSTANDING: u64 = 16;

/// One answer, as the client saw it.
struct Answer {
    status: Status,
    error: String,
    proof: Vec<u8>,
    total_ms: u64,
    queue_wait_ms: u64,
    synthesis_ms: u64,
    gpu_compute_ms: u64,
}

pub fn main(args: &BenchArgs, server: &str) -> Result<i32> {
    let path = args.run.inputs.request.as_ref().ok_or_else(|| {
        UsageError(anyhow!(
            "--server proves a request file (--request FILE), or the server's own workload \
             (--token-file FILE)"
        ))
    })?;
    let request = usage(crate::request_file::read(path))?;
    let (_, checked) = usage(crate::cuzk::checked(&request))?;
    let (kind, size) = (checked.kind, checked.size);
    let circuit_id = kind.circuit_id(size);
    let verifier = kind.verifier();
    // Filecoin's key where --params-dir names the folder, else that of parameters made here.
    let keys = match &args.run.workload.params_dir {
        Some(d) => crate::verify::Keys::folder(Some(d.clone())),
        None => crate::verify::Keys::Made(args.run.session.params_cache.clone()),
    };
    let checker = crate::verify::Checker::new(&request, keys)?;
    let proofs = args.run.jobs.proofs.unwrap_or(crate::cli::DEFAULT_PROOFS);
    let outstanding = match args.run.concurrency.concurrency {
        Concurrency::Jobs(n) => n,
        Concurrency::Auto => AUTO_OUTSTANDING,
    }
    .max(1);
    let endpoint = usage(endpoint(server))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    eprintln!(
        "bench: request {:?} through {server} · {proofs} proof(s), {outstanding} outstanding",
        request.request_id
    );
    let (answers, wall) =
        runtime.block_on(drive(endpoint, request, circuit_id, proofs, outstanding))?;
    let mut verified = 0;
    let mut failed = vec![];
    for (i, a) in answers.iter().enumerate() {
        match a.status {
            Status::Completed if checker.check(&a.proof)? => verified += 1,
            Status::Completed => failed.push(format!("{i}: {verifier} rejected the proof")),
            s => failed.push(format!("{i}: {} {}", s.as_str_name(), a.error)),
        }
    }
    let per_hour = verified as f64 * 3600.0 / wall.as_secs_f64().max(1e-9);
    let median = |f: fn(&Answer) -> u64| {
        let mut v: Vec<u64> = answers.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let (total_ms, queue_ms) = (median(|a| a.total_ms), median(|a| a.queue_wait_ms));
    if args.json {
        let report = json!({
            "server": server,
            "proofs": proofs,
            "verified": verified,
            "failed": failed.len(),
            "errors": failed,
            "wall_seconds": wall.as_secs_f64(),
            "proofs_per_hour": per_hour,
            "outstanding": outstanding,
            "median_total_ms": total_ms,
            "max_total_ms": answers.iter().map(|a| a.total_ms).max().unwrap_or(0),
            "median_queue_wait_ms": queue_ms,
            // The server's own split of a request's time (its partitions' sums).
            "median_synthesis_ms": median(|a| a.synthesis_ms),
            "median_gpu_compute_ms": median(|a| a.gpu_compute_ms),
        });
        println!("{report}");
    } else {
        println!(
            "{verified}/{proofs} verified by {verifier} through {server} in {:.1} s: {per_hour:.0} proofs/h \
             · median {total_ms} ms a request, {queue_ms} ms of it queued",
            wall.as_secs_f64()
        );
        for f in &failed {
            println!("failed: {f}");
        }
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

/// `http://HOST:PORT` for `HOST:PORT` or a bare port; the client speaks TCP only.
fn endpoint(server: &str) -> Result<String> {
    if server.starts_with("unix:") {
        return Err(anyhow!(
            "--server {server}: the bench client connects over TCP (HOST:PORT)"
        ));
    }
    let addr = match server.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => server.trim_start_matches("http://").to_string(),
    };
    Ok(format!("http://{addr}"))
}

/// Loads the parameters first (not timed), then keeps `outstanding` Prove calls in flight
/// until `proofs` have answered. Returns the answers in order and the wall time of the proofs.
async fn drive(
    endpoint: String,
    request: SubmitProofRequest,
    circuit_id: String,
    proofs: u64,
    outstanding: u64,
) -> Result<(Vec<Answer>, Duration)> {
    let channel = tonic::transport::Endpoint::from_shared(endpoint.clone())?
        .connect()
        .await
        .with_context(|| format!("connecting to {endpoint}"))?;
    let limit = crate::serve::MAX_MESSAGE;
    let client = ProvingEngineClient::new(channel)
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let t = Instant::now();
    client
        .clone()
        .preload_srs(PreloadSrsRequest {
            circuit_id: circuit_id.clone(),
        })
        .await
        .with_context(|| format!("PreloadSRS {circuit_id}"))?;
    eprintln!(
        "bench: {circuit_id} loaded on the server in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let gate = Arc::new(tokio::sync::Semaphore::new(outstanding as usize));
    let start = Instant::now();
    let run = std::process::id();
    let mut tasks = vec![];
    for i in 0..proofs {
        let permit = gate.clone().acquire_owned().await?;
        let mut client = client.clone();
        let mut r = request.clone();
        r.request_id = format!("bench-{run}-{i}");
        tasks.push(tokio::spawn(async move {
            let answer = client.prove(ProveRequest { submit: Some(r) }).await;
            drop(permit);
            let a = match answer {
                Ok(resp) => match resp.into_inner().result {
                    Some(r) => Answer {
                        status: Status::try_from(r.status).unwrap_or(Status::Unknown),
                        error: r.error_message,
                        proof: r.proof,
                        total_ms: r.total_ms,
                        queue_wait_ms: r.queue_wait_ms,
                        synthesis_ms: r.synthesis_ms,
                        gpu_compute_ms: r.gpu_compute_ms,
                    },
                    None => failed_answer("an answer without a result".into()),
                },
                Err(e) => failed_answer(format!("gRPC {}: {}", e.code(), e.message())),
            };
            eprintln!(
                "proof {}/{proofs}: {} · {:.2} s",
                i + 1,
                a.status.as_str_name(),
                a.total_ms as f64 / 1000.0
            );
            a
        }));
    }
    let mut answers = vec![];
    for t in tasks {
        answers.push(t.await?);
    }
    Ok((answers, start.elapsed()))
}

fn failed_answer(error: String) -> Answer {
    Answer {
        status: Status::Failed,
        error,
        proof: vec![],
        total_ms: 0,
        queue_wait_ms: 0,
        synthesis_ms: 0,
        gpu_compute_ms: 0,
    }
}
