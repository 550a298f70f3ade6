//! Names of `Sample` metrics: the contract between samplers, the dashboard, the recorder and
//! the Prometheus exporter. Values are in base units (bytes, bytes per second, ratios 0..1,
//! hertz, watts, degrees Celsius). `device` is a device id (`gpu0`, `cpu0`) or `None` for the
//! host. Add names; never rename them.

/// VRAM in use by the engine's allocator, per device (bytes).
pub const VRAM_USED: &str = "vram.used";
/// VRAM in use per purpose: `vram.used.srs`, `vram.used.abc`, `vram.used.buckets`, `vram.used.scratch`.
pub const VRAM_USED_PREFIX: &str = "vram.used.";
/// VRAM reserved on the device as NVML sees it, all processes (bytes).
pub const VRAM_RESERVED: &str = "vram.reserved";
/// The device's memory, NVML's total (bytes).
pub const VRAM_TOTAL: &str = "vram.total";
/// Host-to-device rate from the engine's own copy accounting (bytes per second).
pub const PCIE_H2D: &str = "pcie.h2d";
/// Device-to-host rate from the engine's own copy accounting (bytes per second).
pub const PCIE_D2H: &str = "pcie.d2h";
/// Rate out of the GPU as NVML reports it (bytes per second).
pub const NVML_PCIE_TX: &str = "nvml.pcie.tx";
/// Rate into the GPU as NVML reports it (bytes per second).
pub const NVML_PCIE_RX: &str = "nvml.pcie.rx";
/// The link's ceiling for the generation and width in use (bytes per second).
pub const PCIE_CEILING: &str = "pcie.ceiling";
/// Fraction of time a kernel ran on the device (0..1).
pub const GPU_UTIL: &str = "gpu.util";
/// SM clock (hertz).
pub const GPU_SM_CLOCK: &str = "gpu.clock.sm";
/// Memory clock (hertz).
pub const GPU_MEM_CLOCK: &str = "gpu.clock.mem";
/// Board power draw (watts).
pub const GPU_POWER: &str = "gpu.power";
/// GPU die temperature (degrees Celsius).
pub const GPU_TEMP: &str = "gpu.temp";
/// Hopper GPM: DRAM bandwidth utilisation (0..1).
pub const GPU_DRAM_UTIL: &str = "gpu.dram_util";
/// Host memory bandwidth achieved by the probe or read from counters (bytes per second).
pub const HOST_DDR: &str = "host.ddr";
/// Pressure on host memory bandwidth, 0 (idle) .. 1 (saturated).
pub const HOST_DDR_PRESSURE: &str = "host.ddr.pressure";
/// Host memory traffic the engine itself accounts for (bytes per second).
pub const HOST_ENGINE_BYTES: &str = "host.engine_bytes";
/// Busy fraction of a CPU pool: `cpu.pool.synthesis`, `cpu.pool.prover`, `cpu.pool.cpu0`.
pub const CPU_POOL_PREFIX: &str = "cpu.pool.";
/// Busy fraction of one core: `cpu.core.0`, …
pub const CPU_CORE_PREFIX: &str = "cpu.core.";
/// Host RAM in use by all processes (bytes).
pub const HOST_RAM_USED: &str = "host.ram.used";
/// Host RAM installed (bytes).
pub const HOST_RAM_TOTAL: &str = "host.ram.total";
/// This process's resident set (bytes).
pub const PROCESS_RSS: &str = "process.rss";
/// Partitions submitted and not yet in synthesis (a count, host-wide).
pub const PIPELINE_PENDING: &str = "pipeline.pending";
/// Partitions in synthesis (a count, host-wide).
pub const PIPELINE_SYNTHESIZING: &str = "pipeline.synthesizing";
/// Partitions synthesised and waiting for a device (a count, host-wide).
pub const PIPELINE_QUEUED: &str = "pipeline.queued";
/// Partitions on a device or in their finalizer (a count, host-wide).
pub const PIPELINE_PROVING: &str = "pipeline.proving";

/// A parameter set's tier, by the workload it was made for: `params.tier.porep-8MiB`; 0 hot
/// (in memory, a proof starts at once), 1 warm (its file mapped), 2 cold (its file only), the
/// numbers of cuzk's `SRSStatus.Tier`.
pub const PARAMS_TIER_PREFIX: &str = "params.tier.";
/// A parameter set's bytes in memory when hot: `params.bytes.porep-8MiB`.
pub const PARAMS_BYTES_PREFIX: &str = "params.bytes.";
/// Jobs and partitions holding a parameter set now: `params.users.porep-8MiB`.
pub const PARAMS_USERS_PREFIX: &str = "params.users.";

/// Bytes copied host-to-device since the start, from the engine's copy accounting.
pub const PCIE_H2D_TOTAL: &str = "pcie.h2d.total";
/// Bytes copied device-to-host since the start, from the engine's copy accounting.
pub const PCIE_D2H_TOTAL: &str = "pcie.d2h.total";
/// The PCIe generation of the link in use (5 for Gen5).
pub const PCIE_LINK_GEN: &str = "pcie.link.gen";
/// The lane count of the link in use (16 for x16).
pub const PCIE_LINK_WIDTH: &str = "pcie.link.width";
/// Hopper GPM rate out of the GPU (bytes per second): finer than `nvml.pcie.tx`, where the
/// driver allows.
pub const NVML_GPM_PCIE_TX: &str = "nvml.gpm.pcie.tx";
/// Hopper GPM rate into the GPU (bytes per second): finer than `nvml.pcie.rx`.
pub const NVML_GPM_PCIE_RX: &str = "nvml.gpm.pcie.rx";
/// NVML memory-controller utilisation (0..1): time device memory was read or written.
pub const GPU_MEM_UTIL: &str = "gpu.mem_util";
/// Hopper GPM: fraction of SMs busy (0..1).
pub const GPU_SM_UTIL: &str = "gpu.sm_util";
/// Hopper GPM: warps resident per SM against the most it holds (0..1).
pub const GPU_SM_OCCUPANCY: &str = "gpu.sm_occupancy";
/// Where `host.ddr` comes from: one of `host.ddr.source.probe`, `host.ddr.source.intel_imc`,
/// `host.ddr.source.amd_umc`, `host.ddr.source.resctrl_mbm`, with the value 1.
pub const HOST_DDR_SOURCE_PREFIX: &str = "host.ddr.source.";
/// The software probe's idle calibration: the bandwidth one thread streams with nothing else
/// running (bytes per second).
pub const HOST_DDR_IDLE: &str = "host.ddr.idle";
/// The probe's own cost: the fraction of one core it uses (0..1), averaged over its period.
pub const HOST_DDR_PROBE_DUTY: &str = "host.ddr.probe.duty";
/// The bytes per second the probe reads, averaged over its period.
pub const HOST_DDR_PROBE_BYTES: &str = "host.ddr.probe.bytes";
/// Cumulative host memory traffic the engine accounts for (bytes).
pub const HOST_ENGINE_BYTES_TOTAL: &str = "host.engine_bytes.total";
/// The bandwidth the probe's last burst achieved (bytes per second); `host.ddr` is the same
/// value when no counters exist.
pub const HOST_DDR_PROBE_ACHIEVED: &str = "host.ddr.probe.achieved";
