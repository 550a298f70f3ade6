//! The CUDA kernels build.rs embedded: the prebuilt fatbin, or one nvcc compiled.

/// Where the embedded kernels came from (`prebuilt from sources <digest>`, or compiled from
/// source with nvcc), or None without kernels.
pub fn origin() -> Option<&'static str> {
    #[cfg(provetop_kernels)]
    {
        Some(env!("PROVETOP_KERNEL_ORIGIN"))
    }
    #[cfg(not(provetop_kernels))]
    {
        None
    }
}

/// The fatbin and the architectures it holds, or why there is none.
pub fn embedded() -> Result<(&'static [u8], &'static str), &'static str> {
    #[cfg(provetop_kernels)]
    {
        Ok((
            include_bytes!(concat!(env!("OUT_DIR"), "/provetop.fatbin")),
            env!("PROVETOP_KERNEL_ARCHS"),
        ))
    }
    #[cfg(not(provetop_kernels))]
    {
        Err(env!("PROVETOP_KERNELS_MISSING"))
    }
}
