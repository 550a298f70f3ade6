//! `provetop devices`: the GPUs, the driver, the embedded kernels and what `auto` picks.

use provetop_engine::backend::{cuda, resolve, BackendKind};

pub fn main() -> anyhow::Result<i32> {
    let p = cuda::probe();
    match &p.driver {
        Ok(v) => println!("driver:   {v}"),
        Err(e) => println!("driver:   none ({e})"),
    }
    match &p.kernels {
        Ok(archs) => println!(
            "kernels:  embedded for {archs} ({})",
            crate::kernels::origin().unwrap_or("unknown origin")
        ),
        Err(e) => println!("kernels:  none ({e})"),
    }
    if p.gpus.is_empty() {
        println!("gpus:     none");
    }
    for g in &p.gpus {
        let (major, minor) = g.compute_capability;
        let usable = match &g.usable {
            Ok(()) => "usable".to_string(),
            Err(e) => format!("not usable: {e}"),
        };
        println!(
            "gpu{}:     {} · compute {major}.{minor} · {:.1} GiB · {usable}",
            g.ordinal,
            g.name,
            g.memory_bytes as f64 / (1u64 << 30) as f64
        );
    }
    println!("cpu:      {} cores", provetop_telemetry::config::cores());
    match resolve(BackendKind::Auto) {
        (BackendKind::Cuda, _) => println!("auto:     cuda on {} GPU(s)", p.usable().len()),
        (b, why) => println!("auto:     {b} ({})", why.unwrap_or_default()),
    }
    Ok(0)
}
