//! The kernels compiled ahead of time: `cuda/prebuilt/provetop.fatbin` and its manifest, which
//! names the sources it was compiled from (a digest of every `.cu` and `.cuh` under `cuda/`
//! outside the test harness) and the nvcc arguments. A fresh checkout embeds it without
//! compiling anything (nvcc's four architectures took most of a first build's 20 minutes on
//! two cores); a changed kernel is compiled from source until `scripts/cuda-prebuild.sh`
//! makes the prebuilt anew. Shared by build.rs and the test that keeps the two in step.

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The machine-code targets of a default build. sm_86 and sm_89 could run sm_80's code; they
/// get their own, which the prebuilt fatbin makes free.
pub const DEFAULT_ARCHS: [u32; 4] = [80, 86, 89, 90];

/// The prebuilt fatbin and its manifest, relative to `cuda/`.
pub const FATBIN: &str = "prebuilt/provetop.fatbin";
pub const MANIFEST: &str = "prebuilt/manifest.txt";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// sha256 of some bytes, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The kernel sources under `cuda`, as `./dir/file` paths sorted bytewise (the harness, a test
/// program, is not part of the fatbin).
pub fn sources(cuda: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            let (path, rel) = (e.path(), format!("{rel}/{name}"));
            if path.is_dir() {
                if rel != "./harness" {
                    walk(&path, &rel, out)?;
                }
            } else if name.ends_with(".cu") || name.ends_with(".cuh") {
                out.push((rel, path));
            }
        }
        Ok(())
    }
    let mut out = vec![];
    walk(cuda, ".", &mut out)?;
    out.sort();
    Ok(out)
}

/// The sources' digest: sha256 of `sha256sum`'s lines for them, in path order, so that
/// `scripts/kernel-digest.sh` computes the same in the shell.
pub fn sources_digest(cuda: &Path) -> std::io::Result<String> {
    let mut lines = String::new();
    for (rel, path) in sources(cuda)? {
        let _ = writeln!(lines, "{}  {rel}", sha256(&std::fs::read(path)?));
    }
    Ok(sha256(lines.as_bytes()))
}

/// nvcc's arguments for `archs` (sorted), before the output and the source: one PTX per major
/// version, assembled for each of its architectures (sm_86 and sm_89 add nothing the kernels
/// use over compute_80, so cicc, the longer half of a compile, runs twice instead of four
/// times), and the newest PTX embedded for GPUs newer than all of them.
pub fn recipe(archs: &[u32]) -> Vec<String> {
    let mut groups: Vec<(u32, Vec<u32>)> = vec![];
    for &a in archs {
        match groups.last_mut() {
            Some((v, reals)) if *v / 10 == a / 10 => reals.push(a),
            _ => groups.push((a, vec![a])),
        }
    }
    let mut args: Vec<String> = ["--fatbin", "-O3", "-std=c++17", "-Xptxas", "-O3"]
        .map(String::from)
        .to_vec();
    // zstd at its strongest: four architectures and PTX in 8 MB instead of 22
    args.push("--compress-mode=size".into());
    let newest = groups.last().map(|g| g.0);
    for (v, reals) in &groups {
        let mut codes: Vec<String> = reals.iter().map(|a| format!("sm_{a}")).collect();
        if Some(*v) == newest {
            codes.push(format!("compute_{v}"));
        }
        args.push(format!(
            "-gencode=arch=compute_{v},code=[{}]",
            codes.join(",")
        ));
    }
    args
}

/// The architectures a fatbin of `recipe(archs)` holds, as `provetop devices` lists them.
pub fn arch_list(archs: &[u32]) -> String {
    let newest = archs.iter().max().map(|a| {
        let major = a / 10;
        archs
            .iter()
            .find(|x| *x / 10 == major)
            .copied()
            .unwrap_or(*a)
    });
    archs
        .iter()
        .map(|a| format!("sm_{a}"))
        .chain(newest.map(|v| format!("compute_{v}")))
        .collect::<Vec<_>>()
        .join(",")
}

/// What the manifest records.
pub struct Manifest {
    pub sources: String,
    pub recipe: String,
    pub archs: String,
    pub nvcc: String,
    pub fatbin: String,
}

impl Manifest {
    pub fn render(&self) -> String {
        format!(
            "# Written by scripts/cuda-prebuild.sh; checked by build.rs and tests/prebuilt_kernels.rs.\n\
             sources {}\nrecipe {}\narchs {}\nnvcc {}\nfatbin {}\n",
            self.sources, self.recipe, self.archs, self.nvcc, self.fatbin
        )
    }

    pub fn parse(text: &str) -> Option<Manifest> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::to_string)
        };
        Some(Manifest {
            sources: field("sources")?,
            recipe: field("recipe")?,
            archs: field("archs")?,
            nvcc: field("nvcc")?,
            fatbin: field("fatbin")?,
        })
    }
}

/// The prebuilt fatbin's bytes and manifest when they are what `recipe` makes of the sources
/// under `cuda` now; else why not.
pub fn current(cuda: &Path, recipe: &[String]) -> Result<(Vec<u8>, Manifest), String> {
    let text = std::fs::read_to_string(cuda.join(MANIFEST))
        .map_err(|e| format!("no prebuilt kernels ({MANIFEST}: {e})"))?;
    let m = Manifest::parse(&text).ok_or_else(|| format!("{MANIFEST} lacks a field"))?;
    let digest = sources_digest(cuda).map_err(|e| format!("reading the kernel sources: {e}"))?;
    if m.sources != digest {
        return Err(format!(
            "the kernel sources changed since the prebuilt fatbin was made (sources {}, prebuilt from {})",
            &digest[..12],
            &m.sources[..m.sources.len().min(12)]
        ));
    }
    if m.recipe != recipe.join(" ") {
        return Err(format!(
            "the prebuilt fatbin was compiled with `{}`, a build now asks for `{}`",
            m.recipe,
            recipe.join(" ")
        ));
    }
    let bytes = std::fs::read(cuda.join(FATBIN)).map_err(|e| format!("{FATBIN}: {e}"))?;
    if sha256(&bytes) != m.fatbin {
        return Err(format!(
            "{FATBIN} is not the file its manifest names (damaged, or a stand-in of git LFS)"
        ));
    }
    Ok((bytes, m))
}
