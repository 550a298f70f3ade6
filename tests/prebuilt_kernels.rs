//! The prebuilt kernels (cuda/prebuilt) are what the default build makes of the sources in this
//! tree: a kernel changed without `scripts/cuda-prebuild.sh` fails here, not on a GPU later.

#[allow(dead_code)]
#[path = "../build/prebuilt.rs"]
mod prebuilt;

use std::path::Path;
use std::process::Command;

fn cuda() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda")
}

#[test]
fn the_prebuilt_fatbin_was_compiled_from_these_sources_with_the_default_recipe() {
    let recipe = prebuilt::recipe(&prebuilt::DEFAULT_ARCHS);
    if let Err(why) = prebuilt::current(&cuda(), &recipe) {
        panic!("{why}: run scripts/cuda-prebuild.sh and commit cuda/prebuilt");
    }
}

#[test]
fn the_shell_and_the_build_script_agree_on_the_sources_digest() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kernel-digest.sh");
    let out = Command::new("bash")
        .arg(script)
        .output()
        .expect("running scripts/kernel-digest.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let rust = prebuilt::sources_digest(&cuda()).expect("reading cuda/");
    assert_eq!(shell, rust);
    // a digest over something: the harness is left out, the kernels are in
    let files: Vec<String> = prebuilt::sources(&cuda())
        .expect("reading cuda/")
        .into_iter()
        .map(|(rel, _)| rel)
        .collect();
    assert!(files.contains(&"./provetop.cu".to_string()), "{files:?}");
    assert!(
        files.iter().all(|f| !f.starts_with("./harness")),
        "{files:?}"
    );
}

#[test]
fn the_recipe_groups_architectures_by_major_version_with_the_newest_ptx() {
    let r = prebuilt::recipe(&[80, 86, 89, 90]);
    assert!(r.contains(&"-gencode=arch=compute_80,code=[sm_80,sm_86,sm_89]".to_string()));
    assert!(r.contains(&"-gencode=arch=compute_90,code=[sm_90,compute_90]".to_string()));
    assert_eq!(
        prebuilt::arch_list(&[80, 86, 89, 90]),
        "sm_80,sm_86,sm_89,sm_90,compute_90"
    );
    assert_eq!(prebuilt::arch_list(&[86, 89]), "sm_86,sm_89,compute_86");
}

#[test]
fn a_manifest_reads_back_what_it_wrote_and_a_short_one_is_refused() {
    let m = prebuilt::Manifest {
        sources: "a".repeat(64),
        recipe: "--fatbin -O3".into(),
        archs: "sm_90,compute_90".into(),
        nvcc: "Build cuda_13.0".into(),
        fatbin: "b".repeat(64),
    };
    let back = prebuilt::Manifest::parse(&m.render()).expect("parses");
    assert_eq!((back.sources, back.recipe), (m.sources, m.recipe));
    assert!(prebuilt::Manifest::parse("sources abc\n").is_none());
}

#[test]
fn a_changed_kernel_or_a_damaged_fatbin_is_not_taken_for_the_prebuilt() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let copy = dir.path().join("cuda");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(cuda())
        .arg(&copy)
        .status()
        .expect("running cp");
    assert!(copied.success());
    let recipe = prebuilt::recipe(&prebuilt::DEFAULT_ARCHS);
    assert!(prebuilt::current(&copy, &recipe).is_ok());
    // a comment added to one header
    let header = copy.join("ff/mont.cuh");
    let mut text = std::fs::read_to_string(&header).expect("reading mont.cuh");
    text.push_str("// changed\n");
    std::fs::write(&header, &text).expect("writing mont.cuh");
    let why = prebuilt::current(&copy, &recipe).err().expect("stale");
    assert!(why.contains("sources changed"), "{why}");
    // the harness is not part of the fatbin: a change there keeps the prebuilt
    std::fs::write(&header, &text[..text.len() - "// changed\n".len()]).expect("restoring");
    std::fs::write(copy.join("harness/extra.cu"), "// a test\n").expect("writing");
    assert!(prebuilt::current(&copy, &recipe).is_ok());
    // another recipe, or a fatbin that is not the one the manifest names
    assert!(prebuilt::current(&copy, &prebuilt::recipe(&[90])).is_err());
    std::fs::write(copy.join(prebuilt::FATBIN), b"version https://git-lfs").expect("writing");
    let why = prebuilt::current(&copy, &recipe).err().expect("damaged");
    assert!(why.contains("not the file its manifest names"), "{why}");
}
