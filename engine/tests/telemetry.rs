//! Telemetry of a running engine on the cpu backend: the samplers publish what the contract
//! names, gap attribution over the recorded stream is a pure function (a replay gives the
//! same answer), busy time plus gaps tile the window, and a disabled bus carries nothing
//! while proofs still verify.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::circuit::Workload;
use provetop_engine::config::EngineConfig;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome};
use provetop_engine::store::ParamsStore;
use provetop_engine::telemetry::gaps::{self, GapCause};
use provetop_engine::telemetry::{metrics, Bus, Clock, Event, Lane};
use provetop_telemetry::report::ReportBuilder;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

fn engine(dir: &tempfile::TempDir, bus: Bus) -> EngineHandle {
    let cfg = EngineConfig {
        synthesis_threads: 1,
        prover_threads: 1,
        ..Default::default()
    };
    let store = Arc::new(ParamsStore::new(Some(dir.path().to_path_buf()), None));
    EngineHandle::start(cfg, store, bus, Clock::start()).unwrap()
}

/// Proves `jobs` jobs of 2 partitions each; returns how many partitions verified.
fn prove(engine: &EngineHandle, jobs: u64) -> usize {
    let spec = JobSpec {
        workload: Workload::Synthetic {
            log2_constraints: 10,
        },
        partitions: 2,
        seed: 7,
        priority: provetop_engine::pipeline::Priority::Normal,
        name: None,
    };
    for _ in 0..jobs {
        engine.submit(spec.clone()).unwrap();
    }
    let (mut done, mut verified) = (0, 0);
    while done < jobs {
        match engine
            .outcomes()
            .recv_timeout(Duration::from_secs(120))
            .unwrap()
        {
            Outcome::Partition(p) => verified += p.record.verified as usize,
            Outcome::JobDone { .. } => done += 1,
        }
    }
    verified
}

#[test]
fn a_running_engine_publishes_samples_spans_and_consistent_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::new();
    let sub = bus.subscribe(1 << 20);
    let engine = engine(&dir, bus);
    let start = engine.clock().now();
    assert_eq!(prove(&engine, 3), 6);
    // Let every sampler report at least once (the slowest runs once a second).
    std::thread::sleep(Duration::from_millis(2300));
    let end = engine.clock().now();
    engine.shutdown();
    let events: Vec<Event> = sub.rx.try_iter().collect();
    assert_eq!(sub.dropped(), 0);

    let metrics_seen: BTreeSet<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sample(s) => Some(s.metric.as_str()),
            _ => None,
        })
        .collect();
    for m in [
        metrics::PIPELINE_PENDING,
        metrics::PIPELINE_SYNTHESIZING,
        metrics::PIPELINE_QUEUED,
        metrics::PIPELINE_PROVING,
        metrics::HOST_RAM_USED,
        metrics::HOST_RAM_TOTAL,
        metrics::PROCESS_RSS,
        "cpu.core.0",
        "cpu.pool.synthesis",
        "cpu.pool.prover",
        "cpu.pool.cpu0",
        metrics::HOST_DDR,
        metrics::HOST_DDR_PRESSURE,
        metrics::HOST_DDR_IDLE,
        metrics::HOST_DDR_PROBE_DUTY,
        metrics::HOST_DDR_PROBE_BYTES,
        metrics::HOST_ENGINE_BYTES,
    ] {
        assert!(
            metrics_seen.contains(m),
            "no {m} sample; saw {metrics_seen:?}"
        );
    }
    assert!(
        metrics_seen
            .iter()
            .any(|m| m.starts_with(metrics::HOST_DDR_SOURCE_PREFIX)),
        "the DDR source is named"
    );
    for e in &events {
        if let Event::Sample(s) = e {
            assert!(s.value.is_finite(), "{s:?}");
            if s.metric.starts_with(metrics::CPU_POOL_PREFIX)
                || s.metric == metrics::HOST_DDR_PRESSURE
            {
                assert!((0.0..=1.0).contains(&s.value), "{s:?}");
            }
            if s.metric == metrics::HOST_DDR_PROBE_DUTY {
                assert!(s.value < 0.05, "the probe uses {} of a core", s.value);
            }
        }
    }
    // The cpu backend reports no PCIe or VRAM: nothing registers in the accounting.
    assert!(!metrics_seen.contains(metrics::PCIE_H2D));

    // Compute spans on the device's compute lane, the worker's own steps (its lock waits) on
    // its lane, each published once.
    assert!(events.iter().any(|e| matches!(e,
        Event::Span(s) if matches!(&s.lane, Lane::Compute { device } if device == "cpu0")
            && s.stage.is_compute())));
    assert!(events.iter().any(|e| matches!(e,
        Event::Span(s) if matches!(&s.lane, Lane::Worker { device, .. } if device == "cpu0"))));
    assert!(!events.iter().any(|e| matches!(e,
        Event::Span(s) if matches!(&s.lane, Lane::Worker { .. }) && s.stage.is_compute())));

    // Gaps: busy + idle is the window; the causes sum to the idle time; replay order and the
    // report agree.
    let g = gaps::attribute(&events, start, end);
    assert_eq!(g.len(), 1);
    let d = &g[0];
    assert_eq!(d.device, "cpu0");
    assert_eq!(d.busy + d.idle, end - start);
    assert_eq!(d.by_cause.values().sum::<u64>(), d.idle);
    assert!(d.busy > 0 && d.by_cause["waiting_synthesis"] > 0);
    // After the last proof the engine had nothing to do.
    assert!(d.by_cause["no_work"] >= 2_000_000_000, "{:?}", d.by_cause);
    let mut reversed = events.clone();
    reversed.reverse();
    assert_eq!(gaps::attribute(&reversed, start, end), g);
    let mut report = ReportBuilder::default();
    events.iter().for_each(|e| report.observe(e));
    let r = &report.devices(start, end)[0];
    assert_eq!(r.id, "cpu0");
    assert!((r.busy_seconds - d.busy as f64 / 1e9).abs() < 1e-9);
    assert_eq!(r.gaps.len(), GapCause::KEYS.len());
    // Every gap is cut into segments that tile it, each with a cause.
    for gap in &d.gaps {
        assert_eq!(gap.segments.first().unwrap().start, gap.start);
        assert_eq!(gap.segments.last().unwrap().end, gap.end);
        assert!(gap.segments.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(gap.cause_at(gap.start), Some(gap.segments[0].cause));
    }
}

#[test]
fn a_disabled_bus_carries_nothing_and_proofs_still_verify() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::disabled();
    let sub = bus.subscribe(1024);
    let engine = engine(&dir, bus);
    assert_eq!(prove(&engine, 1), 2);
    std::thread::sleep(Duration::from_millis(1200));
    engine.shutdown();
    assert_eq!(sub.rx.try_iter().count(), 0, "no event with telemetry off");
}
