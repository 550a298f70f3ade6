//! The CUDA kernels build.rs embedded, if nvcc was there to compile them.

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
