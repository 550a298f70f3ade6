//! Telemetry from the outside: the Prometheus endpoint scraped with a real HTTP client during
//! a bench run (every line parsed strictly), `--metrics-addr` validation, the per-device gap
//! summary of `bench --json`, and `--telemetry off`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn provetop(cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_provetop"));
    c.env("XDG_CACHE_HOME", cache)
        .env("XDG_STATE_HOME", cache)
        .env("XDG_CONFIG_HOME", cache);
    c
}

fn run(cache: &Path, args: &[&str]) -> Output {
    provetop(cache)
        .args(args)
        .output()
        .expect("running provetop")
}

/// Kills the child when the test ends, however it ends.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------------
// A strict parser of the text exposition format (version 0.0.4).

#[derive(Debug)]
struct SampleLine {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

#[derive(Debug, Default)]
struct Exposition {
    /// Family name → type.
    types: BTreeMap<String, String>,
    help: BTreeSet<String>,
    samples: Vec<SampleLine>,
}

fn is_metric_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_' || ch == ':')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse::<f64>().map_err(|_| format!("bad value `{s}`")),
    }
}

/// `{a="x",b="y"}` from the start of `s`; returns the labels and the rest.
fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = s.strip_prefix('{').ok_or("no `{`")?;
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let eq = rest.find('=').ok_or("label without `=`")?;
        let name = &rest[..eq];
        if !is_label_name(name) {
            return Err(format!("bad label name `{name}`"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value not quoted")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next().ok_or("unterminated label value")? {
                (i, '"') => break i,
                (_, '\\') => match chars.next().ok_or("dangling escape")?.1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    c => return Err(format!("bad escape `\\{c}`")),
                },
                (_, '\n') => return Err("newline in label value".into()),
                (_, c) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label `{name}` twice"));
        }
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err("expected `,` or `}` after a label".into());
        }
    }
}

/// The family a sample belongs to: histogram series carry suffixes.
fn family_of<'a>(name: &'a str, types: &BTreeMap<String, String>) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if types
                .get(base)
                .is_some_and(|t| t == "histogram" || t == "summary")
            {
                return base;
            }
        }
    }
    name
}

fn parse_exposition(text: &str) -> Result<Exposition, String> {
    let mut e = Exposition::default();
    if !text.ends_with('\n') {
        return Err("the body does not end with a newline".into());
    }
    let mut done_families: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}: `{line}`", n + 1);
        if line.is_empty() {
            return Err(err("empty line".into()));
        }
        if let Some(c) = line.strip_prefix('#') {
            let c = c
                .strip_prefix(' ')
                .ok_or_else(|| err("comment without a space".into()))?;
            let (kw, rest) = c.split_once(' ').unwrap_or((c, ""));
            match kw {
                "HELP" => {
                    let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
                    if !is_metric_name(name) {
                        return Err(err("bad name in HELP".into()));
                    }
                    if help.trim().is_empty() {
                        return Err(err("empty HELP".into()));
                    }
                    if !e.help.insert(name.to_string()) {
                        return Err(err("second HELP for a family".into()));
                    }
                }
                "TYPE" => {
                    let (name, ty) = rest
                        .split_once(' ')
                        .ok_or_else(|| err("TYPE without a type".into()))?;
                    if !is_metric_name(name) {
                        return Err(err("bad name in TYPE".into()));
                    }
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&ty) {
                        return Err(err(format!("unknown type `{ty}`")));
                    }
                    if e.types.insert(name.to_string(), ty.to_string()).is_some() {
                        return Err(err("second TYPE for a family".into()));
                    }
                    if e.samples
                        .iter()
                        .any(|s| family_of(&s.name, &e.types) == name)
                    {
                        return Err(err("TYPE after the family's samples".into()));
                    }
                }
                _ => {} // other comments are allowed
            }
            continue;
        }
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| err("no value".into()))?;
        let name = &line[..name_end];
        if !is_metric_name(name) {
            return Err(err(format!("bad metric name `{name}`")));
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..]).map_err(err)?
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| err("no space before the value".into()))?;
        let mut parts = rest.split(' ');
        let value = parse_value(parts.next().unwrap_or("")).map_err(err)?;
        if let Some(ts) = parts.next() {
            ts.parse::<i64>().map_err(|_| err("bad timestamp".into()))?;
        }
        if parts.next().is_some() {
            return Err(err("trailing fields".into()));
        }
        let family = family_of(name, &e.types).to_string();
        if !e.types.contains_key(&family) {
            return Err(err(format!("sample of `{family}` before its TYPE")));
        }
        // A family's samples are contiguous.
        if current.as_deref() != Some(family.as_str()) {
            if done_families.contains(&family) {
                return Err(err(format!("`{family}` samples are not contiguous")));
            }
            if let Some(c) = current.take() {
                done_families.insert(c);
            }
            current = Some(family.clone());
        }
        e.samples.push(SampleLine {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(e)
}

impl Exposition {
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.samples
            .iter()
            .find(|s| {
                s.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
    }

    /// Prometheus naming conventions for every family, and histogram consistency.
    fn check_conventions(&self) -> Result<(), String> {
        for (name, ty) in &self.types {
            if !name.starts_with("provetop_") {
                return Err(format!("`{name}` lacks the provetop_ prefix"));
            }
            if !self.help.contains(name) {
                return Err(format!("`{name}` has no HELP"));
            }
            if (ty == "counter") != name.ends_with("_total") {
                return Err(format!(
                    "`{name}`: counters, and only counters, end in _total"
                ));
            }
            for bad in ["_ms", "millis", "_kb", "_mb", "_percent", "kib", "mib"] {
                if name.contains(bad) {
                    return Err(format!("`{name}` is not in base units"));
                }
            }
        }
        for s in &self.samples {
            if s.value.is_nan() {
                return Err(format!("`{}` is NaN", s.name));
            }
        }
        /// Labels other than `le` → (le, cumulative count) of each bucket.
        type Buckets = BTreeMap<Vec<(String, String)>, Vec<(f64, f64)>>;
        for name in self
            .types
            .iter()
            .filter(|(_, t)| *t == "histogram")
            .map(|(n, _)| n)
        {
            let mut series: Buckets = BTreeMap::new();
            for s in self
                .samples
                .iter()
                .filter(|s| s.name == format!("{name}_bucket"))
            {
                let le = parse_value(s.labels.get("le").ok_or("bucket without le")?)?;
                let key: Vec<_> = s
                    .labels
                    .iter()
                    .filter(|(k, _)| *k != "le")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                series.entry(key).or_default().push((le, s.value));
            }
            for (key, buckets) in series {
                let mut last = (f64::NEG_INFINITY, 0.0);
                for &(le, c) in &buckets {
                    if le <= last.0 || c < last.1 {
                        return Err(format!("{name}{key:?}: buckets not cumulative"));
                    }
                    last = (le, c);
                }
                if last.0 != f64::INFINITY {
                    return Err(format!("{name}{key:?}: no +Inf bucket"));
                }
                let labels: Vec<(&str, &str)> =
                    key.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let count = self
                    .get(&format!("{name}_count"), &labels)
                    .ok_or(format!("{name}{key:?}: no _count"))?;
                self.get(&format!("{name}_sum"), &labels)
                    .ok_or(format!("{name}{key:?}: no _sum"))?;
                if count != last.1 {
                    return Err(format!("{name}{key:?}: +Inf bucket is not _count"));
                }
            }
        }
        Ok(())
    }
}

#[test]
fn the_parser_refuses_malformed_expositions() {
    let good = "# HELP provetop_x_total X.\n# TYPE provetop_x_total counter\nprovetop_x_total{a=\"q\\\"\"} 1\n";
    assert!(parse_exposition(good).is_ok());
    for bad in [
        "provetop_x_total 1\n",                                             // no TYPE
        "# TYPE provetop_x gauge\nprovetop_x{a=\"1\" 1\n",                   // unclosed labels
        "# TYPE provetop_x gauge\nprovetop_x{a=1} 1\n",                      // unquoted
        "# TYPE provetop_x gauge\nprovetop_x one\n",                         // bad value
        "# TYPE provetop_x gauge\nprovetop_x 1",                             // no final newline
        "# TYPE provetop_x gauge\nprovetop_x{a=\"\\q\"} 1\n",                // bad escape
        "# TYPE provetop_x gauge\n# TYPE provetop_x gauge\n",                // TYPE twice
        "# TYPE provetop_x blob\n",                                          // unknown type
        "# TYPE provetop_x gauge\n# TYPE provetop_y gauge\nprovetop_x 1\nprovetop_y 1\nprovetop_x 2\n", // interleaved
    ] {
        assert!(parse_exposition(bad).is_err(), "accepted: {bad:?}");
    }
    let e = parse_exposition(
        "# HELP provetop_x_seconds X.\n# TYPE provetop_x_seconds counter\nprovetop_x_seconds 1\n",
    )
    .unwrap();
    assert!(e.check_conventions().is_err(), "a counter without _total");
}

fn scrape(url: &str) -> Result<(String, String), String> {
    let mut resp = ureq::get(url).call().map_err(|e| e.to_string())?;
    if resp.status() != 200 {
        return Err(format!("status {}", resp.status()));
    }
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    Ok((ctype, body))
}

#[test]
fn metrics_endpoint_serves_the_exposition_during_a_bench() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Kill(
        provetop(dir.path())
            .args([
                "bench",
                "--backend",
                "cpu",
                "--workload",
                "synthetic",
                "--log2-constraints",
                "10",
                "--proofs",
                "100000",
                "--synthesis-threads",
                "1",
                "--prover-threads",
                "1",
                "--metrics-addr",
                "127.0.0.1:0",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting provetop bench"),
    );
    // The endpoint's address is the first thing on stderr; keep draining it afterwards.
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("metrics: serving ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the endpoint's address on stderr");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/metrics"),
        "{url}"
    );

    let deadline = Instant::now() + Duration::from_secs(120);
    let (ctype, body, e) = loop {
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "the bench ended before the checks"
        );
        if let Ok((ctype, body)) = scrape(&url) {
            let e = parse_exposition(&body).unwrap_or_else(|m| panic!("{m}\n{body}"));
            let verified = e
                .get("provetop_proofs_total", &[("result", "verified")])
                .unwrap_or(0.0);
            let settled = e
                .get("provetop_device_busy_seconds_total", &[("device", "cpu0")])
                .unwrap_or(0.0);
            let samples = e.get("provetop_pipeline_partitions", &[("state", "pending")]);
            if verified >= 2.0 && settled > 0.0 && samples.is_some() {
                break (ctype, body, e);
            }
        }
        assert!(Instant::now() < deadline, "no settled metrics in time");
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    e.check_conventions()
        .unwrap_or_else(|m| panic!("{m}\n{body}"));

    let ty = |n: &str| e.types.get(n).map(String::as_str);
    assert_eq!(ty("provetop_proofs_total"), Some("counter"));
    assert_eq!(ty("provetop_partition_stage_seconds"), Some("histogram"));
    assert_eq!(ty("provetop_device_busy_ratio"), Some("gauge"));
    assert_eq!(ty("provetop_gpu_idle_seconds_total"), Some("counter"));
    assert_eq!(ty("provetop_vram_used_bytes"), Some("gauge"));
    assert_eq!(ty("provetop_pcie_bytes_total"), Some("counter"));
    assert_eq!(
        ty("provetop_host_memory_bandwidth_bytes_per_second"),
        Some("gauge")
    );
    assert_eq!(ty("provetop_config_info"), Some("gauge"));

    assert!(e
        .get(
            "provetop_partition_stage_seconds_count",
            &[("stage", "msm_h")]
        )
        .is_some_and(|c| c >= 2.0));
    let busy = e
        .get("provetop_device_busy_ratio", &[("device", "cpu0")])
        .unwrap();
    assert!((0.0..=1.0).contains(&busy), "{busy}");
    for cause in [
        "waiting_synthesis",
        "lock_held",
        "upload",
        "prep",
        "alloc",
        "no_work",
    ] {
        assert!(
            e.get(
                "provetop_gpu_idle_seconds_total",
                &[("device", "cpu0"), ("cause", cause)]
            )
            .is_some(),
            "idle seconds for {cause}"
        );
    }
    // No counters on this VM: the probe is the source, beside the engine's own accounting.
    let sources: BTreeSet<&str> = e
        .samples
        .iter()
        .filter(|s| s.name == "provetop_host_memory_bandwidth_bytes_per_second")
        .filter_map(|s| s.labels.get("source").map(String::as_str))
        .collect();
    assert!(sources.contains("engine"), "{sources:?}");
    assert!(
        sources
            .iter()
            .any(|s| ["probe", "intel_imc", "amd_umc", "resctrl_mbm"].contains(s)),
        "{sources:?}"
    );
    let duty = e.get("provetop_host_memory_probe_duty_ratio", &[]).unwrap();
    assert!(duty < 0.05, "the probe costs {duty} of a core");

    let info = e
        .samples
        .iter()
        .find(|s| s.name == "provetop_config_info")
        .unwrap();
    assert_eq!(info.value, 1.0);
    for key in provetop_telemetry::config::KEYS {
        assert!(info.labels.contains_key(key), "config_info lacks {key}");
    }
    assert_eq!(info.labels["synthesis_threads"], "1");

    // Anything but /metrics is refused.
    let other = url.replace("/metrics", "/nope");
    assert!(scrape(&other).is_err());
}

#[test]
fn bad_metrics_addresses_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = busy.local_addr().unwrap().to_string();
    for (args, needle) in [
        (vec!["--metrics-addr", "not-an-address"], "--metrics-addr"),
        (vec!["--metrics-addr", "127.0.0.1:99999"], "--metrics-addr"),
        (vec!["--metrics-addr", taken.as_str()], "cannot listen"),
        (
            vec!["--metrics-addr", "9464", "--telemetry", "off"],
            "--telemetry off",
        ),
    ] {
        let mut all = vec!["bench", "--backend", "cpu", "--proofs", "1"];
        all.extend(args.iter());
        let out = run(dir.path(), &all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(needle), "{all:?}: {err}");
    }
}

fn bench_json(cache: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "bench",
        "--backend",
        "cpu",
        "--workload",
        "synthetic",
        "--log2-constraints",
        "10",
        "--proofs",
        "3",
        "--concurrency",
        "2",
        "--json",
    ];
    args.extend(extra);
    let out = run(cache, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn bench_json_carries_gaps_per_device_and_telemetry_off_drops_them() {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(dir.path(), &[]);
    let d = &v["devices"][0];
    assert_eq!(d["id"], "cpu0");
    let gaps = d["gaps"].as_object().expect("devices[].gaps");
    for key in [
        "waiting_synthesis",
        "lock_held",
        "upload",
        "prep",
        "alloc",
        "no_work",
    ] {
        assert!(gaps[key].as_f64().unwrap() >= 0.0, "{key}");
    }
    let idle: f64 = gaps.values().map(|g| g.as_f64().unwrap()).sum();
    let busy = d["busy_seconds"].as_f64().unwrap();
    let wall = v["summary"]["wall_seconds"].as_f64().unwrap();
    assert!(
        (idle + busy - wall).abs() < 1e-3,
        "busy {busy} + gaps {idle} = wall {wall}"
    );
    assert!((d["idle_seconds"].as_f64().unwrap() - idle).abs() < 1e-6);
    // Before the first partition is synthesised the device waits for synthesis.
    assert!(gaps["waiting_synthesis"].as_f64().unwrap() > 0.0);
    // `gap_detail` splits the causes with reasons; each split adds up to its cause.
    let detail = &d["gap_detail"];
    let sum = |v: &serde_json::Value| {
        v.as_object()
            .map_or(0.0, |m| m.values().map(|x| x.as_f64().unwrap()).sum())
    };
    assert!(detail["waiting_synthesis"].is_object(), "{detail}");
    for key in ["waiting_synthesis", "no_work", "lock_held"] {
        let want = gaps[key].as_f64().unwrap();
        assert!((sum(&detail[key]) - want).abs() < 1e-6, "{key}: {detail}");
    }

    let off = bench_json(dir.path(), &["--telemetry", "off"]);
    assert_eq!(off["summary"]["verified"], 3);
    assert!(
        off["proofs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["verified"] == true),
        "proofs are verified and reported with telemetry off"
    );
    assert!(
        off.get("devices").is_none(),
        "no devices with telemetry off"
    );

    // The table has a gap line per device.
    let out = run(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--workload",
            "synthetic",
            "--log2-constraints",
            "10",
            "--proofs",
            "2",
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.lines().any(|l| l.starts_with("gaps cpu0: idle ")),
        "{table}"
    );
}
