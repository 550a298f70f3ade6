//! Every metric the Grafana dashboard (deploy/grafana/) and the Prometheus rules
//! (deploy/prometheus/rules/) name is one the exporter really exports: provetop's families
//! (telemetry/src/export/prometheus/) or cuzk's names beside them (src/serve/cuzk_metrics.rs),
//! read from the exporter's own source, plus Prometheus' `up`.

use std::collections::BTreeSet;
use std::path::Path;

/// The `provetop_…` and `cuzk_…` names quoted in `text`.
fn quoted_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["\"provetop_", "\"cuzk_"] {
        for (i, _) in text.match_indices(prefix) {
            let name: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.ends_with('_') {
                out.insert(name);
            }
        }
    }
    out
}

/// Every metric name an expression mentions: identifiers starting `provetop_` or `cuzk_`, and
/// `up`; a histogram's `_bucket`, `_sum` and `_count` are its family.
fn named_in(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    for c in expr.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if word.starts_with("provetop_") || word.starts_with("cuzk_") {
            out.insert(word.clone());
        }
        word.clear();
    }
    out
}

fn read(dir: &Path, ext: &str) -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p.display().to_string(), text)
        })
        .collect()
}

#[test]
fn dashboards_and_rules_name_only_exported_metrics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut exported = BTreeSet::new();
    for (_, text) in read(&root.join("telemetry/src/export/prometheus"), "rs")
        .into_iter()
        .filter(|(p, _)| !p.ends_with("tests.rs"))
        .chain(read(&root.join("src/serve"), "rs"))
    {
        exported.extend(quoted_names(&text));
    }
    assert!(
        exported.contains("provetop_device_busy_ratio"),
        "{exported:?}"
    );
    assert!(
        exported.contains("cuzk_proofs_failed_total"),
        "{exported:?}"
    );
    let family = |n: &str| {
        ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| n.strip_suffix(s).filter(|f| exported.contains(*f)))
            .map_or(n.to_string(), str::to_string)
    };
    let mut exprs = vec![];
    for (path, text) in read(&root.join("deploy/grafana"), "json") {
        let v: serde_json::Value = serde_json::from_str(&text).expect("the dashboard's JSON");
        let panels = v["panels"].as_array().expect("panels");
        assert!(!panels.is_empty(), "{path} has no panels");
        for p in panels {
            for t in p["targets"].as_array().expect("targets") {
                exprs.push((path.clone(), t["expr"].as_str().expect("expr").to_string()));
            }
        }
    }
    for (path, text) in read(&root.join("deploy/prometheus/rules"), "yml") {
        exprs.extend(text.split("expr:").skip(1).map(|e| {
            (
                path.clone(),
                e.split("for:").next().unwrap_or(e).to_string(),
            )
        }));
    }
    assert!(
        exprs.len() >= 15,
        "too few expressions found: {}",
        exprs.len()
    );
    let mut checked = 0;
    for (path, e) in &exprs {
        for name in named_in(e) {
            assert!(
                exported.contains(&family(&name)),
                "{path}: `{name}` in `{}` is not a metric the exporter exports",
                e.trim()
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} names checked");
}

#[test]
fn a_made_up_name_is_caught() {
    assert_eq!(
        named_in("rate(provetop_no_such_total[5m]) / up"),
        ["provetop_no_such_total".to_string()].into()
    );
    assert!(quoted_names("\"provetop_a_b\" \"provetop_\"").contains("provetop_a_b"));
}
