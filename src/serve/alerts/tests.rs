use super::notify::{alertmanager_json, parse_url, rfc3339, Alert};
use super::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant, UNIX_EPOCH};

fn table(text: &str) -> toml::Table {
    toml::from_str(text).expect("test TOML")
}

#[test]
fn a_threshold_fires_after_its_hold_and_clears_below_its_lower_mark() {
    let t0 = Instant::now();
    let s = |secs: u64| t0 + Duration::from_secs(secs);
    let mut t = Threshold::new(2000.0, 1800.0, Duration::from_secs(10));
    assert_eq!(t.step(2500.0, s(0)), None);
    // A dip below the bound restarts the hold.
    assert_eq!(t.step(1500.0, s(5)), None);
    assert_eq!(t.step(2500.0, s(6)), None);
    assert_eq!(t.step(2500.0, s(15)), None);
    assert_eq!(t.step(2500.0, s(16)), Some(Change::Fired));
    assert!(t.firing());
    // Between the marks: still firing however long (hysteresis).
    assert_eq!(t.step(1900.0, s(17)), None);
    assert_eq!(t.step(1900.0, s(60)), None);
    assert_eq!(t.step(1700.0, s(61)), None);
    assert_eq!(t.step(1700.0, s(71)), Some(Change::Cleared));
    assert!(!t.firing());
}

#[test]
fn the_alerts_table_is_read_and_bad_keys_are_named() {
    let r = Rules::from_table(&table(
        "hold = \"5s\"\ngpu_idle = true\nfailures = 2\nwinning_post_latency = \"2s\"\n\
         vram_fraction = 0.9\nwebhook = \"http://127.0.0.1:9/hook\"\nretries = 2",
    ))
    .expect("a good table");
    assert_eq!(r.hold, Duration::from_secs(5));
    assert_eq!(r.winning_latency, Some(Duration::from_secs(2)));
    assert_eq!((r.failures, r.retries, r.gpu_idle), (Some(2), 2, true));
    assert!(r.any());
    assert!(!Rules::default().any());
    for (bad, says) in [
        ("failures = 0", "failures"),
        ("vram_fraction = 1.5", "vram_fraction"),
        ("webhook = \"https://x/\"", "webhook"),
        ("hold = \"soon\"", "hold"),
        ("nosuch = 1", "unknown key `nosuch`"),
    ] {
        let e = Rules::from_table(&table(bad)).expect_err(bad).to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn the_webhook_body_is_alertmanagers() {
    let a = Alert {
        name: WINNING_LATE,
        firing: true,
        summary: "slow".into(),
        instance: "rig7".into(),
    };
    let at = UNIX_EPOCH + Duration::from_secs(1_796_458_800);
    let v = alertmanager_json(&a, at);
    assert_eq!(v["version"], "4");
    assert_eq!(v["status"], "firing");
    assert_eq!(v["alerts"][0]["labels"]["alertname"], WINNING_LATE);
    assert_eq!(v["alerts"][0]["startsAt"], "2026-12-05T08:20:00Z");
    assert_eq!(v["alerts"][0]["endsAt"], "0001-01-01T00:00:00Z");
    let resolved = alertmanager_json(&Alert { firing: false, ..a }, at);
    assert_eq!(resolved["status"], "resolved");
    assert_eq!(resolved["alerts"][0]["endsAt"], "2026-12-05T08:20:00Z");
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    assert_eq!(
        parse_url("http://h:81/a/b").expect("url"),
        ("h".into(), 81, "/a/b".into())
    );
}

#[test]
fn a_refused_delivery_is_retried_and_the_next_one_lands() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let rules = Rules {
        webhook: Some(format!("http://127.0.0.1:{port}/hook")),
        retries: 2,
        timeout: Duration::from_secs(2),
        ..Rules::default()
    };
    let n = Notifier::start(&rules).expect("thread").expect("a webhook");
    n.send(Alert {
        name: GPU_IDLE,
        firing: true,
        summary: "idle".into(),
        instance: "rig".into(),
    });
    let mut bodies = vec![];
    for answer in ["HTTP/1.1 500 Oops", "HTTP/1.1 200 OK"] {
        let (s, _) = listener.accept().expect("a delivery");
        let mut r = BufReader::new(s);
        let mut len = 0;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).expect("a header");
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().expect("a length");
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body).expect("the body");
        bodies.push(String::from_utf8(body).expect("utf-8"));
        write!(r.get_mut(), "{answer}\r\nContent-Length: 0\r\n\r\n").expect("answer");
    }
    assert_eq!(bodies[0], bodies[1]);
    assert!(bodies[0].contains(GPU_IDLE), "{}", bodies[0]);
}
