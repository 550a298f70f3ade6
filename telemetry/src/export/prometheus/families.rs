//! The exposition's families fed by samples, and which family and labels each sample metric
//! feeds.

use crate::metrics;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Counter,
    Gauge,
}

/// Families fed by samples: name, type, help.
pub(super) const FAMILIES: &[(&str, Kind, &str)] = &[
    ("provetop_vram_used_bytes", Kind::Gauge, "VRAM the engine's allocator holds, by purpose."),
    ("provetop_pcie_bytes_total", Kind::Counter, "Bytes the engine copied over PCIe, by direction."),
    ("provetop_pcie_throughput_bytes_per_second", Kind::Gauge, "PCIe throughput by direction: source engine (copy accounting), nvml, nvml_gpm."),
    ("provetop_pcie_ceiling_bytes_per_second", Kind::Gauge, "The PCIe link's ceiling per direction for its generation and width."),
    ("provetop_pcie_link_generation", Kind::Gauge, "PCIe generation of the link in use."),
    ("provetop_pcie_link_width_lanes", Kind::Gauge, "PCIe lanes of the link in use."),
    ("provetop_gpu_memory_used_bytes", Kind::Gauge, "Device memory in use by all processes, as NVML reports it."),
    ("provetop_gpu_memory_total_bytes", Kind::Gauge, "Device memory installed, as NVML reports it."),
    ("provetop_gpu_utilization_ratio", Kind::Gauge, "Fraction of time a kernel ran, as NVML reports it."),
    ("provetop_gpu_memory_controller_utilization_ratio", Kind::Gauge, "Fraction of time device memory was read or written, as NVML reports it."),
    ("provetop_gpu_dram_bandwidth_utilization_ratio", Kind::Gauge, "DRAM bandwidth utilisation (GPM)."),
    ("provetop_gpu_sm_utilization_ratio", Kind::Gauge, "SM utilisation (GPM)."),
    ("provetop_gpu_sm_occupancy_ratio", Kind::Gauge, "SM occupancy (GPM)."),
    ("provetop_gpu_clock_hertz", Kind::Gauge, "GPU clocks: sm and memory."),
    ("provetop_gpu_power_watts", Kind::Gauge, "GPU power draw."),
    ("provetop_gpu_temperature_celsius", Kind::Gauge, "GPU temperature."),
    ("provetop_host_memory_bandwidth_bytes_per_second", Kind::Gauge, "Host DDR bandwidth: from counters (intel_imc, amd_umc, resctrl_mbm) or what the probe achieves (probe); engine is the traffic the engine accounts for."),
    ("provetop_host_memory_engine_bytes_total", Kind::Counter, "Host memory traffic the engine accounts for."),
    ("provetop_host_memory_pressure_ratio", Kind::Gauge, "Host DDR pressure from the probe: 0 streams as fast as idle, 1 starved."),
    ("provetop_host_memory_probe_idle_bytes_per_second", Kind::Gauge, "The probe's idle calibration."),
    ("provetop_host_memory_probe_achieved_bytes_per_second", Kind::Gauge, "What the probe's last burst achieved."),
    ("provetop_host_memory_probe_duty_ratio", Kind::Gauge, "The probe's own cost: fraction of one core."),
    ("provetop_host_memory_probe_read_bytes_per_second", Kind::Gauge, "The probe's own cost: bytes it reads per second."),
    ("provetop_cpu_pool_busy_ratio", Kind::Gauge, "Busy fraction of a CPU pool (its threads' CPU time over its size)."),
    ("provetop_cpu_core_busy_ratio", Kind::Gauge, "Busy fraction of one core."),
    ("provetop_host_memory_used_bytes", Kind::Gauge, "Host RAM in use."),
    ("provetop_host_memory_total_bytes", Kind::Gauge, "Host RAM installed."),
    ("provetop_process_resident_memory_bytes", Kind::Gauge, "Resident memory of the provetop process."),
    ("provetop_pipeline_partitions", Kind::Gauge, "Partitions by pipeline state: pending, synthesizing, queued, proving."),
];

fn family(name: &str) -> usize {
    FAMILIES
        .iter()
        .position(|f| f.0 == name)
        .expect("a family in the table")
}

pub(super) type Labels = Vec<(&'static str, String)>;

/// Which family a sample feeds, with its labels beyond `device`.
pub(super) fn classify(metric: &str, ddr_source: &str) -> Option<(usize, Labels)> {
    use metrics as m;
    let l = |k: &'static str, v: &str| vec![(k, v.to_string())];
    let (name, labels) = match metric {
        m::VRAM_RESERVED => ("provetop_gpu_memory_used_bytes", vec![]),
        m::VRAM_TOTAL => ("provetop_gpu_memory_total_bytes", vec![]),
        m::PCIE_H2D_TOTAL => ("provetop_pcie_bytes_total", l("direction", "h2d")),
        m::PCIE_D2H_TOTAL => ("provetop_pcie_bytes_total", l("direction", "d2h")),
        m::PCIE_H2D
        | m::PCIE_D2H
        | m::NVML_PCIE_RX
        | m::NVML_PCIE_TX
        | m::NVML_GPM_PCIE_RX
        | m::NVML_GPM_PCIE_TX => {
            let direction = match metric {
                m::PCIE_H2D | m::NVML_PCIE_RX | m::NVML_GPM_PCIE_RX => "h2d",
                _ => "d2h",
            };
            let source = match metric {
                m::PCIE_H2D | m::PCIE_D2H => "engine",
                m::NVML_PCIE_RX | m::NVML_PCIE_TX => "nvml",
                _ => "nvml_gpm",
            };
            (
                "provetop_pcie_throughput_bytes_per_second",
                vec![
                    ("direction", direction.to_string()),
                    ("source", source.to_string()),
                ],
            )
        }
        m::PCIE_CEILING => ("provetop_pcie_ceiling_bytes_per_second", vec![]),
        m::PCIE_LINK_GEN => ("provetop_pcie_link_generation", vec![]),
        m::PCIE_LINK_WIDTH => ("provetop_pcie_link_width_lanes", vec![]),
        m::GPU_UTIL => ("provetop_gpu_utilization_ratio", vec![]),
        m::GPU_MEM_UTIL => ("provetop_gpu_memory_controller_utilization_ratio", vec![]),
        m::GPU_DRAM_UTIL => ("provetop_gpu_dram_bandwidth_utilization_ratio", vec![]),
        m::GPU_SM_UTIL => ("provetop_gpu_sm_utilization_ratio", vec![]),
        m::GPU_SM_OCCUPANCY => ("provetop_gpu_sm_occupancy_ratio", vec![]),
        m::GPU_SM_CLOCK => ("provetop_gpu_clock_hertz", l("clock", "sm")),
        m::GPU_MEM_CLOCK => ("provetop_gpu_clock_hertz", l("clock", "memory")),
        m::GPU_POWER => ("provetop_gpu_power_watts", vec![]),
        m::GPU_TEMP => ("provetop_gpu_temperature_celsius", vec![]),
        m::HOST_DDR => (
            "provetop_host_memory_bandwidth_bytes_per_second",
            l("source", ddr_source),
        ),
        m::HOST_ENGINE_BYTES => (
            "provetop_host_memory_bandwidth_bytes_per_second",
            l("source", "engine"),
        ),
        m::HOST_ENGINE_BYTES_TOTAL => ("provetop_host_memory_engine_bytes_total", vec![]),
        m::HOST_DDR_PRESSURE => ("provetop_host_memory_pressure_ratio", vec![]),
        m::HOST_DDR_IDLE => ("provetop_host_memory_probe_idle_bytes_per_second", vec![]),
        m::HOST_DDR_PROBE_ACHIEVED => (
            "provetop_host_memory_probe_achieved_bytes_per_second",
            vec![],
        ),
        m::HOST_DDR_PROBE_DUTY => ("provetop_host_memory_probe_duty_ratio", vec![]),
        m::HOST_DDR_PROBE_BYTES => ("provetop_host_memory_probe_read_bytes_per_second", vec![]),
        m::HOST_RAM_USED => ("provetop_host_memory_used_bytes", vec![]),
        m::HOST_RAM_TOTAL => ("provetop_host_memory_total_bytes", vec![]),
        m::PROCESS_RSS => ("provetop_process_resident_memory_bytes", vec![]),
        m::PIPELINE_PENDING => ("provetop_pipeline_partitions", l("state", "pending")),
        m::PIPELINE_SYNTHESIZING => ("provetop_pipeline_partitions", l("state", "synthesizing")),
        m::PIPELINE_QUEUED => ("provetop_pipeline_partitions", l("state", "queued")),
        m::PIPELINE_PROVING => ("provetop_pipeline_partitions", l("state", "proving")),
        _ => {
            if let Some(p) = metric.strip_prefix(m::VRAM_USED_PREFIX) {
                ("provetop_vram_used_bytes", l("purpose", p))
            } else if let Some(p) = metric.strip_prefix(m::CPU_POOL_PREFIX) {
                ("provetop_cpu_pool_busy_ratio", l("pool", p))
            } else if let Some(c) = metric.strip_prefix(m::CPU_CORE_PREFIX) {
                ("provetop_cpu_core_busy_ratio", l("core", c))
            } else {
                return None;
            }
        }
    };
    Some((family(name), labels))
}
