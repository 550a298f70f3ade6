//! A device that fails mid-run: its partitions move to the other devices and no proof is lost;
//! with no other device, the partition fails with the fault and the device stays in service.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use anyhow::Result;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::backend::{
    BackendKind, DeviceFault, Executor, Gate, RegionInput, RegionResult, Steps,
};
use provetop_engine::telemetry::{Bus, DeviceInfo, Event, JobState};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A CPU device that proves `good` regions, then fails every later one as a lost GPU does.
struct Flaky {
    name: &'static str,
    inner: CpuExecutor,
    good: usize,
    regions: AtomicUsize,
}

impl Executor for Flaky {
    fn device(&self) -> &str {
        self.name
    }
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            id: self.name.into(),
            ..self.inner.info()
        }
    }
    fn prove_region(
        &self,
        input: RegionInput<'_>,
        gate: &mut dyn Gate,
        steps: &mut Steps,
    ) -> Result<RegionResult> {
        if self.regions.fetch_add(1, Ordering::SeqCst) >= self.good {
            return Err(DeviceFault("the device fell off the bus".into()).into());
        }
        self.inner.prove_region(input, gate, steps)
    }
}

fn flaky(name: &'static str, good: usize) -> Arc<Flaky> {
    Arc::new(Flaky {
        name,
        inner: CpuExecutor::new(9, 1).unwrap(),
        good,
        regions: AtomicUsize::new(0),
    })
}

/// Every partition's device and error (none when verified), the devices left in service and
/// the events of a run.
struct Run {
    parts: Vec<(String, Option<String>)>,
    devices: Vec<String>,
    events: Vec<Event>,
}

/// Runs `jobs` jobs of 3 partitions on a cpu engine with `device` beside its own.
fn run(device: Arc<Flaky>, jobs: u64) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::new();
    let events = bus.subscribe(1 << 16);
    let engine = common::engine_with(dir.path(), device, bus);
    let mut parts = BTreeMap::new();
    common::run_jobs(&engine, jobs, 3, |p| {
        let key = (p.record.job, p.record.partition);
        assert_eq!(p.record.verified, p.record.error.is_none());
        let value = (p.record.device.clone(), p.record.error.clone());
        assert!(parts.insert(key, value).is_none(), "duplicate {key:?}");
    });
    let devices = engine
        .status()
        .devices
        .into_iter()
        .map(|d| d.name)
        .collect();
    engine.shutdown();
    assert_eq!(
        parts.len() as u64,
        jobs * 3,
        "every partition reported once"
    );
    Run {
        parts: parts.into_values().collect(),
        devices,
        events: events.rx.try_iter().collect(),
    }
}

#[test]
fn a_failed_device_hands_its_partitions_to_the_others() {
    let device = flaky("flaky0", 2);
    let r = run(device.clone(), 6);
    assert!(
        r.parts.iter().all(|(_, e)| e.is_none()),
        "every proof verifies: {:?}",
        r.parts
    );
    let on = |name: &str| r.parts.iter().filter(|(d, _)| d == name).count();
    assert_eq!(
        on("flaky0"),
        2,
        "the device proved until it failed, then nothing"
    );
    assert_eq!(on("cpu0"), 16);
    assert_eq!(r.devices, ["cpu0"], "the failed device left service");
    assert!(device.regions.load(Ordering::SeqCst) >= 3, "it did fail");
    // Each faulted partition went back to be synthesised again, saying why.
    let moved = r
        .events
        .iter()
        .filter(|e| {
            matches!(e, Event::Job(j) if j.state == JobState::Submitted
                && j.detail.as_deref().is_some_and(|d| d.contains("moved off flaky0")))
        })
        .count();
    assert!(moved >= 1, "no partition was moved");
}

#[test]
fn a_device_that_fails_alone_fails_its_partitions_and_stays() {
    // Named cpu0, it is the cpu backend's only device: nowhere to move partitions to.
    let r = run(flaky("cpu0", 1), 2);
    let verified = r.parts.iter().filter(|(_, e)| e.is_none()).count();
    assert_eq!(verified, 1);
    for (device, e) in &r.parts {
        assert_eq!(device, "cpu0");
        if let Some(e) = e {
            assert!(
                e.contains("device fault: the device fell off the bus"),
                "{e}"
            );
        }
    }
    assert_eq!(r.devices, ["cpu0"], "the only device stays in service");
}
