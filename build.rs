//! Compiles cuda/provetop.cu with nvcc into one fatbin that the binary embeds. nvcc is found
//! through $NVCC, $CUDA_HOME/bin or PATH. Without nvcc the binary builds with no kernels and
//! says why at run time; with nvcc, a kernel that does not compile fails the build.
//! PROVETOP_CUDA_ARCHS narrows the machine-code targets (e.g. "90"); PTX for the newest is
//! always embedded so later GPUs can run it. A fatbin is kept in <target>/cuda-fatbin under a
//! hash of the sources and the nvcc command, so `cargo clippy` and `cargo test`, whose build
//! scripts run apart, compile the kernels once (two minutes of nvcc each on two cores).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCHS: &str = "80,86,89,90";

fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVCC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(home) = std::env::var_os("CUDA_HOME").or_else(|| std::env::var_os("CUDA_PATH")) {
        let p = Path::new(&home).join("bin").join("nvcc");
        if p.exists() {
            return Some(p);
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("nvcc"))
            .find(|p| p.exists())
    })
}

/// Asks for a rerun when any kernel source under `dir` changes; returns those sources.
fn rerun_on_sources(dir: &Path, found: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                rerun_on_sources(&p, found);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")) {
                println!("cargo:rerun-if-changed={}", p.display());
                found.push(p);
            }
        }
    }
}

/// Where a fatbin of these sources and this command (writing `out` in OUT_DIR) is kept:
/// <target>/cuda-fatbin/<hash> (OUT_DIR is <target>/<profile>/build/<package>/out), or None
/// when that cannot be told.
fn cached_fatbin(out: &Path, mut sources: Vec<PathBuf>, cmd: &Command) -> Option<PathBuf> {
    let target = out.ancestors().nth(5)?;
    let mut h = DefaultHasher::new();
    sources.sort();
    for p in &sources {
        p.hash(&mut h);
        std::fs::read(p).ok()?.hash(&mut h);
    }
    let nvcc = cmd.get_program();
    nvcc.hash(&mut h);
    // another nvcc installed at the same path
    let meta = std::fs::metadata(nvcc).ok()?;
    (meta.len(), meta.modified().ok()).hash(&mut h);
    // the output path differs between the build scripts' runs
    cmd.get_args()
        .filter(|a| Path::new(a) != out)
        .for_each(|a| a.hash(&mut h));
    Some(
        target
            .join("cuda-fatbin")
            .join(format!("{:016x}.fatbin", h.finish())),
    )
}

/// The architectures (sorted) grouped by major version under the first of each: 80, 86, 89,
/// 90 → [(80, [80, 86, 89]), (90, [90])].
fn virtual_archs(archs: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let mut groups: Vec<(u32, Vec<u32>)> = vec![];
    for &a in archs {
        match groups.last_mut() {
            Some((v, reals)) if *v / 10 == a / 10 => reals.push(a),
            _ => groups.push((a, vec![a])),
        }
    }
    groups
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(provetop_kernels)");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    println!("cargo:rerun-if-env-changed=PROVETOP_CUDA_ARCHS");
    let mut sources = Vec::new();
    rerun_on_sources(Path::new("cuda"), &mut sources);
    let source = Path::new("cuda/provetop.cu");
    let Some(nvcc) = find_nvcc() else {
        println!("cargo:rustc-env=PROVETOP_KERNELS_MISSING=nvcc was not found when provetop was built (set NVCC or CUDA_HOME, or use scripts/run.sh)");
        println!("cargo:warning=nvcc not found: building without CUDA kernels (the cpu backend still works)");
        return;
    };
    let archs = std::env::var("PROVETOP_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string());
    let mut archs: Vec<u32> = archs
        .split(',')
        .map(|a| {
            a.trim()
                .trim_start_matches("sm_")
                .parse()
                .expect("PROVETOP_CUDA_ARCHS: numbers like 80,90")
        })
        .collect();
    archs.sort_unstable();
    archs.dedup();
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"))
            .join("provetop.fatbin");
    let mut cmd = Command::new(&nvcc);
    cmd.args(["--fatbin", "-O3", "-std=c++17", "-Xptxas", "-O3", "-o"])
        .arg(&out)
        .arg(source);
    // One PTX per major version, assembled for each of its architectures: sm_86 and sm_89
    // add nothing the kernels use over compute_80, and cicc, the longer half of each
    // architecture's compile (190 s against ptxas's 136 s on the 2-core VM), runs twice instead
    // of four times. The newest architecture's PTX is embedded for GPUs newer than all of them.
    let virtuals = virtual_archs(&archs);
    // The archs are sorted, so the newest is in the last group.
    let ptx = virtuals.last().expect("at least one architecture").0;
    for (v, reals) in &virtuals {
        let mut codes: Vec<String> = reals.iter().map(|a| format!("sm_{a}")).collect();
        if *v == ptx {
            codes.push(format!("compute_{v}"));
        }
        cmd.arg(format!(
            "-gencode=arch=compute_{v},code=[{}]",
            codes.join(",")
        ));
    }
    let cache = cached_fatbin(&out, sources, &cmd);
    // Each architecture compiles on its own thread (as many as there are cores): the first
    // build of a default checkout compiles five. Left out of the cache key: it changes only
    // how long nvcc takes.
    cmd.args(["--threads", "0"]);
    let reused = cache
        .as_ref()
        .is_some_and(|c| std::fs::copy(c, &out).is_ok());
    if !reused {
        let status = cmd
            .status()
            .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
        assert!(
            status.success(),
            "nvcc failed to compile {}: see the errors above",
            source.display()
        );
        if let Some(c) = cache {
            // best effort: a copy under a temporary name, then renamed into place
            let tmp = c.with_extension("tmp");
            let _ =
                std::fs::create_dir_all(c.parent().expect("the cache file is inside cuda-fatbin/"))
                    .and_then(|_| std::fs::copy(&out, &tmp))
                    .and_then(|_| std::fs::rename(&tmp, &c));
        }
    }
    let list: Vec<String> = archs
        .iter()
        .map(|a| format!("sm_{a}"))
        .chain([format!("compute_{ptx}")])
        .collect();
    println!("cargo:rustc-env=PROVETOP_KERNEL_ARCHS={}", list.join(","));
    println!("cargo:rustc-cfg=provetop_kernels");
}
