//! The exit-code table at the end of README.md, checked against the program: every code it
//! lists is produced by the example it gives, with the message it quotes, and no other code is
//! listed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The table's rows: (code, the row's text).
fn table() -> Vec<(i32, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let begin = readme
        .find("<!-- exit-codes:begin -->")
        .expect("the table's begin marker");
    let end = readme
        .find("<!-- exit-codes:end -->")
        .expect("the table's end marker");
    assert!(
        readme[end..].trim_end() == "<!-- exit-codes:end -->",
        "the table is not at the very end of README.md"
    );
    readme[begin..end]
        .lines()
        .filter_map(|l| {
            let code = l
                .strip_prefix("| ")?
                .split(" |")
                .next()?
                .trim()
                .parse()
                .ok()?;
            Some((code, l.to_string()))
        })
        .collect()
}

fn provetop(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_provetop"));
    c.current_dir(dir)
        .env("XDG_CACHE_HOME", dir)
        .env("XDG_STATE_HOME", dir)
        .env("XDG_CONFIG_HOME", dir);
    c
}

fn run(c: &mut Command) -> (Option<i32>, String) {
    let out: Output = c.output().expect("running provetop");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A well-formed proof whose A has a valid encoding off the curve.
fn tampered() -> Vec<u8> {
    use group::prime::PrimeCurveAffine;
    let a = (1u8..)
        .map(|x| {
            let mut b = [0u8; 48];
            b[0] = 0x80;
            b[47] = x;
            b
        })
        .find(|b| {
            blst::min_pk::PublicKey::uncompress(b) == Err(blst::BLST_ERROR::BLST_POINT_NOT_ON_CURVE)
        })
        .expect("an x off the curve");
    let mut v = a.to_vec();
    v.extend(blstrs::G2Affine::generator().to_compressed());
    v.extend(blstrs::G1Affine::generator().to_compressed());
    v
}

/// The row's quoted messages: the backticked text inside parentheses.
fn quoted(row: &str) -> Vec<String> {
    row.split("(`")
        .skip(1)
        .filter_map(|s| s.split("`)").next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_exit_code_table_is_what_the_program_does() {
    let rows = table();
    let codes: Vec<i32> = rows.iter().map(|r| r.0).collect();
    assert_eq!(codes, vec![0, 1, 2, 3], "the table's codes");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("request.json"), r#"{"proofKind":"WINNING_POST"}"#).unwrap();
    std::fs::write(d.join("tampered.bin"), tampered()).unwrap();
    std::fs::write(d.join("short.bin"), [0u8; 100]).unwrap();
    let verify = |proof: &str| {
        run(provetop(d).args(["verify", "--request", "request.json", "--proof", proof]))
    };
    for (code, row) in &rows {
        let mut seen: Vec<(Option<i32>, String)> = vec![];
        match code {
            0 => seen.push(run(provetop(d).args([
                "--headless",
                "--proofs",
                "1",
                "--log2-constraints",
                "8",
            ]))),
            1 => seen.push(verify("tampered.bin")),
            2 => {
                seen.push(verify("short.bin"));
                // No usable GPU: nothing was checked, which is not a GPU that miscomputed.
                seen.push(run(provetop(d)
                    .args(["check", "--max-log2", "1"])
                    .env("CUDA_VISIBLE_DEVICES", "")));
            }
            3 => seen.push(stopped(d)),
            _ => unreachable!(),
        }
        for (got, text) in &seen {
            assert_eq!(*got, Some(*code), "{row}\n{text}");
        }
        let all: String = seen.iter().map(|s| s.1.as_str()).collect();
        for q in quoted(row) {
            assert!(all.contains(&q), "`{q}` not said\n{row}\n{all}");
        }
    }
}

/// A headless run of many proofs, sent SIGTERM after its first proof.
fn stopped(d: &Path) -> (Option<i32>, String) {
    let mut child = provetop(d)
        .args(["--headless", "--proofs", "1000", "--log2-constraints", "8"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting provetop");
    let stderr = child.stderr.take().expect("its stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut text = String::new();
    let start = Instant::now();
    for l in lines.by_ref() {
        let l = l.unwrap_or_default();
        text.push_str(&l);
        text.push('\n');
        if l.starts_with("proof 1/") || start.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    for l in lines {
        text.push_str(&l.unwrap_or_default());
        text.push('\n');
    }
    let status = child.wait().expect("waiting for provetop");
    (status.code(), text)
}
