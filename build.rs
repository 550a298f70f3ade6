//! The CUDA kernels the binary embeds, as one fatbin: the prebuilt one (cuda/prebuilt, see
//! build/prebuilt.rs) when it was made from these sources with the default architectures, else
//! cuda/provetop.cu compiled with nvcc, found through $NVCC, $CUDA_HOME/bin or PATH. Without
//! either the binary builds with no kernels and says why at run time; a kernel that does not
//! compile fails the build. PROVETOP_CUDA_ARCHS (e.g. "90") compiles those machine-code
//! targets from source, PTX for the newest always embedded so later GPUs can run it;
//! PROVETOP_CUDA_PREBUILD=1 (scripts/cuda-prebuild.sh) compiles the default ones and writes the
//! prebuilt fatbin anew. A compiled fatbin is kept in <target>/cuda-fatbin under a hash of the
//! sources and the nvcc command, so `cargo clippy` and `cargo test`, whose build scripts run
//! apart, compile the kernels once.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/prebuilt.rs"]
mod prebuilt;

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

/// Tells the crate that kernels are embedded: which architectures, and where they came from.
fn embedded(archs: &str, origin: &str) {
    println!("cargo:rustc-env=PROVETOP_KERNEL_ARCHS={archs}");
    println!("cargo:rustc-env=PROVETOP_KERNEL_ORIGIN={origin}");
    println!("cargo:rustc-cfg=provetop_kernels");
}

/// The architectures PROVETOP_CUDA_ARCHS names, sorted, or None for the defaults.
fn archs_asked() -> Option<Vec<u32>> {
    let asked = std::env::var("PROVETOP_CUDA_ARCHS").ok()?;
    let mut archs: Vec<u32> = asked
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
    Some(archs)
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(provetop_kernels)");
    for var in [
        "NVCC",
        "CUDA_HOME",
        "PROVETOP_CUDA_ARCHS",
        "PROVETOP_CUDA_PREBUILD",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let cuda = Path::new("cuda");
    let mut sources = Vec::new();
    rerun_on_sources(cuda, &mut sources);
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"))
            .join("provetop.fatbin");
    let asked = archs_asked();
    let prebuild = std::env::var_os("PROVETOP_CUDA_PREBUILD").is_some();
    let archs = asked.clone().unwrap_or(prebuilt::DEFAULT_ARCHS.to_vec());
    let recipe = prebuilt::recipe(&archs);
    // The prebuilt kernels unless other architectures are asked for or a new prebuilt is.
    let stale = match (
        asked.is_some() || prebuild,
        prebuilt::current(cuda, &recipe),
    ) {
        (false, Ok((bytes, m))) => {
            std::fs::write(&out, bytes).expect("writing the fatbin into OUT_DIR");
            let origin = format!("prebuilt from sources {}", &m.sources[..12]);
            return embedded(&m.archs, &origin);
        }
        (false, Err(why)) => Some(why),
        (true, _) => None,
    };
    let source = Path::new("cuda/provetop.cu");
    let Some(nvcc) = find_nvcc() else {
        let why = stale.map_or(String::new(), |w| format!("{w}, and "));
        println!("cargo:rustc-env=PROVETOP_KERNELS_MISSING={why}nvcc was not found when provetop was built (set NVCC or CUDA_HOME, or use scripts/run.sh)");
        println!("cargo:warning={why}nvcc not found: building without CUDA kernels (the cpu backend still works)");
        assert!(!prebuild, "PROVETOP_CUDA_PREBUILD needs nvcc");
        return;
    };
    if let Some(why) = &stale {
        println!("cargo:warning={why}: compiling the kernels with nvcc (scripts/cuda-prebuild.sh makes the prebuilt anew)");
    }
    let mut cmd = Command::new(&nvcc);
    cmd.args(&recipe).arg("-o").arg(&out).arg(source);
    let cache = cached_fatbin(&out, sources, &cmd);
    // Each architecture compiles on its own thread (as many as there are cores). Left out of
    // the cache key: it changes only how long nvcc takes.
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
    let archs_listed = prebuilt::arch_list(&archs);
    if prebuild {
        write_prebuilt(cuda, &out, &nvcc, &recipe, &archs_listed);
    }
    embedded(&archs_listed, "compiled from source with nvcc");
}

/// `PROVETOP_CUDA_PREBUILD`: the fatbin just compiled becomes cuda/prebuilt's, with its
/// manifest.
fn write_prebuilt(cuda: &Path, out: &Path, nvcc: &Path, recipe: &[String], archs: &str) {
    let bytes = std::fs::read(out).expect("reading the fatbin nvcc wrote");
    let version = Command::new(nvcc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let manifest = prebuilt::Manifest {
        sources: prebuilt::sources_digest(cuda).expect("reading the kernel sources"),
        recipe: recipe.join(" "),
        archs: archs.to_string(),
        nvcc: version
            .lines()
            .last()
            .unwrap_or("unknown")
            .trim()
            .to_string(),
        fatbin: prebuilt::sha256(&bytes),
    };
    std::fs::create_dir_all(cuda.join("prebuilt")).expect("making cuda/prebuilt");
    std::fs::write(cuda.join(prebuilt::FATBIN), &bytes).expect("writing the prebuilt fatbin");
    std::fs::write(cuda.join(prebuilt::MANIFEST), manifest.render())
        .expect("writing the prebuilt manifest");
    println!("cargo:warning=wrote {} and its manifest", prebuilt::FATBIN);
}
