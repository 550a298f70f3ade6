//! Exporters: the event stream in other tools' formats. `prometheus` serves a live session's
//! counters over HTTP; `perfetto` writes a recording as a trace Perfetto opens (JSON), and
//! `pftrace` as Perfetto's native protobuf trace.

pub mod perfetto;
pub mod pftrace;
pub mod prometheus;
mod protobuf;

use std::collections::HashMap;

use crate::{Event, JobEvent};

/// Each job's name as its `submitted` event gave it (a served request's id), so an exporter
/// names a proof as the views do: `porep-1000-7/3`, else `#12/3`.
#[derive(Default)]
pub(crate) struct JobNames(HashMap<u64, String>);

impl JobNames {
    pub(crate) fn observe(&mut self, e: &Event) {
        if let Event::Job(JobEvent {
            job, name: Some(n), ..
        }) = e
        {
            self.0.insert(*job, n.clone());
        }
    }

    /// `proof porep-1000-7/3 verified`: how a finished partition is named.
    pub(crate) fn proof(&self, job: u64, partition: u32, verified: bool) -> String {
        let what = if verified { "verified" } else { "FAILED" };
        let label = JobEvent::label(job, self.0.get(&job).map(String::as_str));
        format!("proof {label}/{partition} {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JobState;

    #[test]
    fn a_proof_is_named_by_its_request_id_where_its_job_had_one() {
        let mut names = JobNames::default();
        for (job, name) in [(1, Some("porep-1000-7")), (2, None)] {
            names.observe(&Event::Job(JobEvent {
                t: 0,
                job,
                partition: None,
                state: JobState::Submitted,
                detail: None,
                kind: Some("porep".into()),
                name: name.map(str::to_string),
            }));
        }
        assert_eq!(names.proof(1, 3, true), "proof porep-1000-7/3 verified");
        assert_eq!(names.proof(2, 0, false), "proof #2/0 FAILED");
    }
}
