//! `bench --server ADDR --token-file FILE`: a running `provetop serve` proving its own workload
//! (`serve --workload`), the jobs submitted through `provetop.v1.Telemetry`'s Control as a viewer
//! holding the token would, `--concurrency` in flight, and counted from the server's own events
//! on the same stream: proofs per hour on the server's clock, and its peak resident memory from
//! its samples. What `scripts/attach-bench.sh` measures a stalled viewer's cost with.

use anyhow::{anyhow, Result};
use provetop_proto::provetop::v1::control_request::Action;
use provetop_proto::provetop::v1::Submit;
use provetop_telemetry::metrics::PROCESS_RSS;
use provetop_telemetry::record::stream::decode_frame;
use provetop_telemetry::record::{Hole, Record};
use provetop_telemetry::{Event, JobState, Nanos};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::attach::client::{self, Client, Incoming, Viewer};
use crate::cli::{BenchArgs, Concurrency};
use crate::run::{self, UsageError};

/// Jobs kept in flight when `--concurrency` is auto.
const AUTO_IN_FLIGHT: u64 = 2;

/// One job as the server's events told it.
#[derive(Default)]
struct Seen {
    submitted: Option<Nanos>,
    done: Option<Nanos>,
    verified: u64,
    failed: u64,
}

/// What the server's events said, from where the bench began; the bench's own jobs are `mine`
/// (a job's events may arrive before the answer that names it).
#[derive(Default)]
struct Tally {
    jobs: BTreeMap<u64, Seen>,
    mine: BTreeSet<u64>,
    rss_max: f64,
    lost: Hole,
}

impl Tally {
    fn record(&mut self, r: &Record) {
        match r {
            Record::Event(Event::Proof(p)) => {
                let j = self.jobs.entry(p.job).or_default();
                match p.verified {
                    true => j.verified += 1,
                    false => j.failed += 1,
                }
            }
            Record::Event(Event::Job(e)) if e.partition.is_none() => {
                let j = self.jobs.entry(e.job).or_default();
                match e.state {
                    JobState::Submitted => j.submitted = Some(e.t),
                    JobState::Verified | JobState::Failed | JobState::Cancelled => {
                        j.done = Some(e.t)
                    }
                    _ => {}
                }
            }
            Record::Event(Event::Sample(s)) if s.metric == PROCESS_RSS => {
                self.rss_max = self.rss_max.max(s.value);
            }
            Record::Hole(h) => self.lost.add_counts(h),
            _ => {}
        }
    }

    fn mine(&self) -> impl Iterator<Item = &Seen> {
        self.mine.iter().filter_map(|j| self.jobs.get(j))
    }

    fn done(&self) -> u64 {
        self.mine().filter(|j| j.done.is_some()).count() as u64
    }

    /// (verified, failed) proofs of the bench's jobs.
    fn proofs(&self) -> (u64, u64) {
        self.mine()
            .fold((0, 0), |(v, f), j| (v + j.verified, f + j.failed))
    }

    /// From the first job's submission to the last one's end, on the server's clock (seconds).
    fn wall(&self) -> f64 {
        let first = self.mine().filter_map(|j| j.submitted).min();
        let last = self.mine().filter_map(|j| j.done).max();
        match (first, last) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
            _ => 0.0,
        }
    }
}

pub fn main(args: &BenchArgs, server: &str, token_file: &std::path::Path) -> Result<i32> {
    let token = run::usage(crate::token::read(token_file, "--token-file"))?;
    let target = run::usage(client::target(server, None))?;
    let proofs = args.run.jobs.proofs.unwrap_or(crate::cli::DEFAULT_PROOFS);
    let in_flight = match args.run.concurrency.concurrency {
        Concurrency::Jobs(n) => n,
        Concurrency::Auto => AUTO_IN_FLIGHT,
    }
    .clamp(1, proofs.max(1));
    let partitions = args.run.workload.partitions;
    let name = "bench".to_string();
    let mut client = Client::start(target, Viewer { name, token })?;
    let stop = run::stop_flag()?;
    let mut t = Tally::default();
    let mut caught_up = false;
    let mut asked = 0u64;
    eprintln!(
        "bench: {proofs} job(s) of the server's workload through {server}, {in_flight} in flight"
    );
    while t.done() < proofs {
        if stop.load(Ordering::SeqCst) {
            let left = proofs - t.done();
            eprintln!("bench: stopped by a signal: {left} of {proofs} job(s) unfinished");
            return Ok(3);
        }
        // One request at a time, answered before the next, while fewer than in_flight are open.
        let answered = t.mine.len() as u64;
        if caught_up && asked < proofs && asked == answered && answered - t.done() < in_flight {
            client.control(Action::Submit(Submit { partitions }));
            asked += 1;
        }
        let Some(m) = client.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        match m {
            Incoming::Hello { control, note, .. } => {
                if !control {
                    eprintln!("bench: {server}: {note}");
                    return Ok(1);
                }
            }
            Incoming::Frame(b) => {
                let rs = decode_frame(&b).map_err(|e| anyhow!("{server}: a damaged frame: {e}"))?;
                // The history before the bench is not counted, its holes neither.
                if caught_up {
                    rs.iter().for_each(|r| t.record(r));
                }
            }
            Incoming::CaughtUp => caught_up = true,
            Incoming::Reply {
                error: true, text, ..
            } => return Err(UsageError(anyhow!("{server} refused a job: {text}")).into()),
            Incoming::Reply { job, .. } => {
                t.mine.insert(job);
            }
            Incoming::Lost { why, .. } | Incoming::Refused { why, .. } => {
                eprintln!("bench: lost {server}: {why}");
                return Ok(1);
            }
        }
    }
    let wall = t.wall();
    let (verified, failed) = t.proofs();
    let per_hour = verified as f64 * 3600.0 / wall.max(1e-9);
    if args.json {
        let report = json!({
            "server": server,
            "jobs": proofs,
            "partitions": partitions,
            "in_flight": in_flight,
            "verified": verified,
            "failed": failed,
            "wall_seconds": wall,
            "proofs_per_hour": per_hour,
            "server_rss_max_bytes": t.rss_max,
            "not_received": t.lost.total(),
        });
        println!("{report}");
    } else {
        println!(
            "{}/{} proofs verified by {server} in {wall:.1} s of its clock: {per_hour:.0} proofs/h \
             · its peak memory {:.0} MiB · {} event(s) not received",
            verified,
            verified + failed,
            t.rss_max / (1 << 20) as f64,
            t.lost.total()
        );
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
