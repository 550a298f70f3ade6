//! The exporter's state and text format over hand-made events.

use std::collections::BTreeMap;

use super::render::{esc, num};
use super::*;
use crate::config::EngineConfig;
use crate::{Event, JobEvent, JobState, Lane, Nanos, ProofRecord, Sample, Span, Stage};

#[test]
fn addresses() {
    assert_eq!(
        parse_addr("9464").unwrap(),
        "127.0.0.1:9464".parse().unwrap()
    );
    assert_eq!(
        parse_addr(":9464").unwrap(),
        "127.0.0.1:9464".parse().unwrap()
    );
    assert_eq!(
        parse_addr("0.0.0.0:9464").unwrap(),
        "0.0.0.0:9464".parse().unwrap()
    );
    assert_eq!(parse_addr("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
    assert!(parse_addr("localhost:9464").unwrap().ip().is_loopback());
    for bad in [
        "",
        "abc",
        "127.0.0.1",
        "127.0.0.1:99999",
        "70000",
        "host:",
        ":x",
    ] {
        assert!(parse_addr(bad).is_err(), "{bad}");
    }
}

#[test]
fn only_loopback_listeners_go_without_a_warning() {
    for quiet in ["127.0.0.1:9464", "[::1]:9464", "127.0.0.2:1"] {
        assert_eq!(exposure_warning(quiet.parse().unwrap()), None, "{quiet}");
    }
    for open in [
        "0.0.0.0:9464",
        "[::]:9464",
        "192.168.1.5:9464",
        "[fe80::1]:80",
    ] {
        let w = exposure_warning(open.parse().unwrap()).unwrap_or_default();
        assert!(w.starts_with("warning:") && w.contains(open), "{open}: {w}");
    }
    let every = exposure_warning("[::]:9464".parse().unwrap()).unwrap();
    assert!(every.contains("every network interface"), "{every}");
}

fn sample(metric: &str, device: Option<&str>, value: f64) -> Event {
    Event::Sample(Sample {
        t: 0,
        metric: metric.into(),
        device: device.map(Into::into),
        value,
    })
}

#[test]
fn state_renders_counters_histograms_samples_and_config() {
    let mut st = MetricsState::new(&EngineConfig::default(), 0);
    let mut stages = BTreeMap::new();
    stages.insert(Stage::MsmH, 0.3);
    stages.insert(Stage::Synthesis, 2.0);
    for verified in [true, true, false] {
        st.observe(&Event::Proof(ProofRecord {
            t: 0,
            job: 0,
            partition: 0,
            device: "cpu0".into(),
            verified,
            error: None,
            stages: stages.clone(),
        }));
    }
    st.observe(&sample("vram.used.srs", Some("gpu0"), 1024.0));
    st.observe(&sample("pcie.h2d.total", Some("gpu0"), 77.0));
    st.observe(&sample("host.ddr.source.probe", None, 1.0));
    st.observe(&sample("host.ddr", None, 9e9));
    st.observe(&sample("host.engine_bytes", None, 0.0));
    st.observe(&sample("cpu.pool.synthesis", None, 0.5));
    st.observe(&sample("no.such.metric", None, 0.5));
    st.observe(&Event::Span(Span {
        lane: Lane::Compute {
            device: "cpu0".into(),
        },
        stage: Stage::MsmH,
        start: 1_000_000_000,
        end: 3_000_000_000,
        job: Some(0),
        partition: Some(0),
        bytes: 0,
    }));
    st.observe(&Event::Job(JobEvent {
        t: 0,
        job: 0,
        partition: None,
        state: JobState::Submitted,
        detail: None,
        kind: None,
        name: None,
    }));
    st.settle_until(4_000_000_000);
    let text = st.render();
    for line in [
        "provetop_proofs_total{result=\"verified\"} 2",
        "provetop_proofs_total{result=\"failed\"} 1",
        "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"0.25\"} 0",
        "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"0.5\"} 3",
        "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"+Inf\"} 3",
        "provetop_partition_stage_seconds_count{stage=\"synthesis\"} 3",
        "provetop_vram_used_bytes{device=\"gpu0\",purpose=\"srs\"} 1024",
        "provetop_pcie_bytes_total{device=\"gpu0\",direction=\"h2d\"} 77",
        "provetop_host_memory_bandwidth_bytes_per_second{source=\"probe\"} 9000000000",
        "provetop_host_memory_bandwidth_bytes_per_second{source=\"engine\"} 0",
        "provetop_cpu_pool_busy_ratio{pool=\"synthesis\"} 0.5",
        "provetop_device_busy_ratio{device=\"cpu0\"} 0.5",
        "provetop_device_busy_seconds_total{device=\"cpu0\"} 2",
        "provetop_gpu_idle_seconds_total{device=\"cpu0\",cause=\"no_work\"} 2",
        "# TYPE provetop_pcie_bytes_total counter",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in\n{text}"
        );
    }
    let info = text
        .lines()
        .find(|l| l.starts_with("provetop_config_info{"))
        .unwrap();
    for k in crate::config::KEYS {
        assert!(info.contains(&format!("{k}=\"")), "{k} in {info}");
    }
    assert!(info.contains("lock=\"single\"") && info.contains("devices=\"all\""));
}

#[test]
fn settling_never_counts_twice_and_never_goes_back() {
    let mut st = MetricsState::new(&EngineConfig::default(), 0);
    st.observe(&Event::Span(Span {
        lane: Lane::Compute {
            device: "gpu0".into(),
        },
        stage: Stage::NttH,
        start: 0,
        end: 1_000_000_000,
        job: None,
        partition: None,
        bytes: 0,
    }));
    st.settle(4_000_000_000); // lag 2 s: settles [0, 2 s]
    st.settle(4_000_000_000);
    st.settle(3_000_000_000);
    let t = &st.devices["gpu0"];
    assert_eq!(t.busy, 1_000_000_000);
    assert_eq!(t.idle.iter().sum::<Nanos>(), 1_000_000_000);
}

#[test]
fn label_values_are_escaped() {
    assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    assert_eq!(num(f64::INFINITY), "+Inf");
    assert_eq!(num(0.25), "0.25");
}

#[test]
fn idle_reasons_are_counted_where_they_never_wait_on_later_events() {
    let mut st = MetricsState::new(&EngineConfig::default(), 0);
    let span = |lane: Lane, stage: Stage, start: u64, end: u64| {
        Event::Span(Span {
            lane,
            stage,
            start: start * 1_000_000_000,
            end: end * 1_000_000_000,
            job: Some(0),
            partition: Some(0),
            bytes: 0,
        })
    };
    // Synthesis 0..1 s with its pool half busy: it lacked workers, not cores.
    st.observe(&sample("cpu.pool.synthesis", None, 0.5));
    let pool = Lane::Pool {
        name: "synthesis".into(),
    };
    st.observe(&span(pool, Stage::Synthesis, 0, 1));
    let cpu0 = Lane::Compute {
        device: "cpu0".into(),
    };
    st.observe(&span(cpu0, Stage::MsmH, 1, 2));
    st.settle_until(3_000_000_000);
    let text = st.render();
    let line = "provetop_gpu_idle_reason_seconds_total{device=\"cpu0\",cause=\"waiting_synthesis\",reason=\"workers\"} 1";
    assert!(
        text.lines().any(|l| l == line),
        "missing `{line}` in\n{text}"
    );
    assert!(
        !text.contains("cause=\"no_work\",reason"),
        "no_work's reasons wait on later submissions"
    );
}

/// `GET path` on a fresh connection: the whole response.
fn get(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn a_trickling_client_and_idle_connections_never_delay_a_scrape() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let bus = crate::Bus::new();
    let cfg = EngineConfig::default();
    let mut ex = Exporter::start(
        "127.0.0.1:0".parse().unwrap(),
        &bus,
        crate::Clock::start(),
        &cfg,
    )
    .unwrap();
    let addr = ex.local_addr();
    // Four connections that never send a byte, and one that sends a byte every 200 ms.
    let idle: Vec<_> = (0..4)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            for b in b"GET /metrics HTTP/1.1\r\n" {
                if done.load(std::sync::atomic::Ordering::Relaxed) || c.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    for _ in 0..3 {
        let r = get(addr, "/metrics");
        assert!(r.starts_with("HTTP/1.1 200 OK"), "{r}");
        assert!(r.contains("provetop_"), "{r}");
    }
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "three scrapes took {took:?} beside idle and trickling connections"
    );
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(idle);
    ex.stop();
    trickle.join().unwrap();
}

/// The benchmark of scripts/slow-tests.sh: 100 scrapes at once while 4 connections trickle a
/// byte a second; every scrape answered, the slowest well inside a scrape timeout.
#[test]
#[ignore = "a benchmark: scripts/slow-tests.sh runs it"]
fn a_hundred_concurrent_scrapes_beside_four_trickling_connections() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let bus = crate::Bus::new();
    let cfg = EngineConfig::default();
    let addr = "127.0.0.1:0".parse().unwrap();
    let mut ex = Exporter::start(addr, &bus, crate::Clock::start(), &cfg).unwrap();
    let addr = ex.local_addr();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let trickles: Vec<_> = (0..4)
        .map(|_| {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                for b in b"GET /metrics HTTP/1.1\r\n".iter().cycle() {
                    if done.load(Ordering::Relaxed) || c.write_all(&[*b]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let scrapes: Vec<_> = (0..100)
        .map(|_| {
            std::thread::spawn(move || {
                let t = Instant::now();
                let ok = get(addr, "/metrics").starts_with("HTTP/1.1 200 OK");
                (ok, t.elapsed())
            })
        })
        .collect();
    let mut took: Vec<Duration> = scrapes
        .into_iter()
        .map(|s| {
            let (ok, t) = s.join().unwrap();
            assert!(ok, "a scrape was not answered 200");
            t
        })
        .collect();
    took.sort();
    done.store(true, Ordering::Relaxed);
    ex.stop();
    trickles.into_iter().for_each(|t| t.join().unwrap());
    let (p50, max) = (took[49], took[99]);
    println!(
        "100 concurrent scrapes beside 4 trickling connections: median {p50:?}, slowest {max:?}"
    );
    assert!(max < Duration::from_secs(2), "slowest scrape {max:?}");
}
