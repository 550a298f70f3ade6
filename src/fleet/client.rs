//! One task a rig: takes its summary stream (`provetop.v1.Fleet`) into its row; a rig that
//! does not offer it (an older provetop, or cuzk) is asked cuzk's `GetStatus` every few seconds
//! instead, and its row says so. A stream that ends, fails or goes quiet for `QUIET` marks the
//! rig unreachable from that moment; it is tried again with backoff (0.5 s doubling to 10 s).

use parking_lot::Mutex;
use provetop_proto::cuzk::v1::proving_engine_client::ProvingEngineClient;
use provetop_proto::cuzk::v1::{GetStatusRequest, GetStatusResponse};
use provetop_proto::provetop::v1::fleet_client::FleetClient;
use provetop_proto::provetop::v1::{RigSummary, SummaryRequest};
use provetop_ui::fleet::{FleetRow, Reach};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::attach::client::{describe, Target};

/// A summary a second; a rig silent this long is counted lost (within the 5 s an operator is
/// promised, however the connection died).
const QUIET: Duration = Duration::from_secs(3);
const INTERVAL_MS: u32 = 1000;
/// How often a rig with only `GetStatus` is asked.
const STATUS_EVERY: Duration = Duration::from_secs(2);
const FIRST_RETRY: Duration = Duration::from_millis(500);
const LAST_RETRY: Duration = Duration::from_secs(10);

/// The rows every task writes and the view reads.
pub type Rows = Arc<Mutex<Vec<FleetRow>>>;

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Marks row `i` lost now (keeping the moment it was first lost) and why.
fn lost(rows: &Rows, i: usize, why: String) {
    let mut rows = rows.lock();
    let r = &mut rows[i];
    let since = match &r.reach {
        Reach::Unreachable { since, .. } => *since,
        _ => unix_now(),
    };
    r.reach = Reach::Unreachable { since, why };
}

/// Watches rig `i` at `target` until the runtime ends.
pub async fn watch(rows: Rows, i: usize, target: Target) {
    let mut wait = FIRST_RETRY;
    loop {
        let channel = target.channel();
        let why = match stream(&rows, i, FleetClient::new(channel.clone())).await {
            Ended::Unimplemented => status_only(&rows, i, ProvingEngineClient::new(channel)).await,
            Ended::Lost { why, had_data } => {
                if had_data {
                    wait = FIRST_RETRY;
                }
                why
            }
        };
        lost(&rows, i, why);
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(LAST_RETRY);
    }
}

enum Ended {
    /// The rig has no Fleet service.
    Unimplemented,
    Lost {
        why: String,
        had_data: bool,
    },
}

/// Reads the summary stream into row `i` until it ends.
async fn stream(
    rows: &Rows,
    i: usize,
    mut client: FleetClient<tonic::transport::Channel>,
) -> Ended {
    let req = SummaryRequest {
        interval_ms: INTERVAL_MS,
    };
    let mut s = match tokio::time::timeout(QUIET * 2, client.summaries(req)).await {
        Err(_) => return lost_as("no answer", false),
        Ok(Err(e)) if e.code() == tonic::Code::Unimplemented => return Ended::Unimplemented,
        Ok(Err(e)) => return lost_as(&describe(&e), false),
        Ok(Ok(r)) => r.into_inner(),
    };
    let mut had_data = false;
    loop {
        match tokio::time::timeout(QUIET, s.message()).await {
            Err(_) => return lost_as("silent", had_data),
            Ok(Err(e)) => return lost_as(&describe(&e), had_data),
            Ok(Ok(None)) => return lost_as("the stream ended", had_data),
            Ok(Ok(Some(m))) => {
                had_data = true;
                fill(&mut rows.lock()[i], &m);
            }
        }
    }
}

fn lost_as(why: &str, had_data: bool) -> Ended {
    Ended::Lost {
        why: why.to_string(),
        had_data,
    }
}

/// A rig's row from its summary.
pub fn fill(r: &mut FleetRow, m: &RigSummary) {
    r.reach = Reach::Live;
    r.limited.clear();
    r.serving.clone_from(&m.serving);
    r.gpus = m
        .gpus
        .iter()
        .map(|g| {
            (
                g.name.clone(),
                g.busy,
                g.vram_used_bytes,
                g.vram_total_bytes,
            )
        })
        .collect();
    r.rates = m
        .kinds
        .iter()
        .map(|k| {
            (
                k.kind.clone(),
                k.done_1m as f64 * 60.0,
                k.done_10m as f64 * 6.0,
            )
        })
        .collect();
    r.queues = m
        .queues
        .iter()
        .map(|q| (q.kind.clone(), q.priority.clone(), q.pending, q.running))
        .collect();
    r.failures = m.failures;
    r.winning = (m.winning_last_ms > 0).then_some((m.winning_last_ms, m.winning_median_ms));
    r.alerts.clone_from(&m.alerts);
    r.bottleneck.clone_from(&m.bottleneck);
}

/// A rig with cuzk's interface only: `GetStatus` every few seconds, until it fails.
async fn status_only(
    rows: &Rows,
    i: usize,
    mut client: ProvingEngineClient<tonic::transport::Channel>,
) -> String {
    loop {
        let answer = tokio::time::timeout(QUIET, client.get_status(GetStatusRequest {})).await;
        match answer {
            Err(_) => return "GetStatus: no answer".into(),
            Ok(Err(e)) => return format!("GetStatus: {}", describe(&e)),
            Ok(Ok(s)) => fill_status(&mut rows.lock()[i], &s.into_inner()),
        }
        tokio::time::sleep(STATUS_EVERY).await;
    }
}

/// What cuzk's `GetStatus` gives: devices and their VRAM, queues by kind, failures.
pub fn fill_status(r: &mut FleetRow, s: &GetStatusResponse) {
    r.reach = Reach::Live;
    // provetop fills `parameters`; cuzk does not.
    r.limited = match s.parameters.is_empty() {
        true => "GetStatus only (cuzk)".into(),
        false => "GetStatus only (older provetop)".into(),
    };
    r.serving = format!("{} proved since start", s.total_proofs_completed);
    r.gpus = s
        .gpus
        .iter()
        .map(|g| {
            let used = g.vram_total_bytes.saturating_sub(g.vram_free_bytes);
            let busy = f64::from(u8::from(!g.current_job_id.is_empty()));
            (format!("gpu{}", g.ordinal), busy, used, g.vram_total_bytes)
        })
        .collect();
    r.rates.clear();
    r.queues = s
        .queues
        .iter()
        .map(|q| {
            let kind = crate::serve::short_kind(&q.proof_kind).to_string();
            (kind, "any".into(), q.pending, q.in_progress)
        })
        .collect();
    r.failures = s.total_proofs_failed;
    r.winning = None;
    r.alerts.clear();
    r.bottleneck.clear();
}
