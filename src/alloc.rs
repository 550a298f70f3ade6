//! The process's allocator: jemalloc, told to keep freed pages.
//!
//! A partition allocates gigabytes (a/b/c, the witness, its split) and frees them when it is
//! proved. The system allocator hands such blocks back to the kernel at once, so the next
//! partition faults every page in again, which on a virtual machine costs more than the
//! synthesis that fills them. jemalloc with decay off keeps freed pages mapped and reuses them;
//! the resident size stays at the high-water mark of the working set, which the engine's RAM
//! budget already bounds. `_RJEM_MALLOC_CONF` overrides this at run time (for example
//! `dirty_decay_ms:0,muzzy_decay_ms:0` to measure what the reuse buys).

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Read by jemalloc at its first allocation, before the environment's settings.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 36] = b"dirty_decay_ms:-1,muzzy_decay_ms:-1\0";
