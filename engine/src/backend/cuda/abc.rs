//! a, b, c on the device: a pre-compiled circuit's matrices uploaded once and kept beside the
//! SRS (with each matrix's chunk plan, `pt_abc_plan`), then per partition three sparse products
//! over the witness (`pt_abc_eval`, `pt_abc_fixup`, cuda/abc/abc_eval.cuh) straight into the
//! NTT's input buffers, zero padding included. The host then computes only the witness.

use anyhow::Result;
use blstrs::Scalar;
use cudarc::driver::CudaStream;
use std::sync::Arc;
use std::time::Instant;

use super::consts::{PT_ABC_CHUNK, PT_ABC_THREADS, PT_FIX_THREADS};
use super::executor::CudaExecutor;
use super::gpu::{Arg, DevBuf, Gpu};
use super::pinned::Staging;
use super::workspace::FR;
use crate::backend::{Engine, Steps};
use crate::circuit::precompiled::{Csr, Precompiled};
use crate::config::Budget;
use crate::telemetry::accounting::VramPurpose;
use crate::telemetry::Stage;

/// One matrix on the device: CSR (u32 row offsets, columns, coefficient indices) and the
/// first row of each chunk of entries.
struct DevMatrix {
    rows: u32,
    nchunk: u32,
    row_ptr: DevBuf,
    cols: DevBuf,
    coeff: DevBuf,
    first: DevBuf,
}

/// A circuit's A, B and C and their coefficient table, resident on one GPU.
pub(super) struct DeviceCircuit {
    rows: usize,
    /// Inputs plus aux: the witness the products read.
    columns: usize,
    table: DevBuf,
    m: [DevMatrix; 3],
}

/// How many chunks of `PT_ABC_CHUNK` entries a matrix of `nnz` entries has (at least one).
fn chunks(nnz: usize) -> usize {
    nnz.div_ceil(PT_ABC_CHUNK as usize).max(1)
}

/// Device bytes of `pc`'s resident copy: the matrices, their plans and the table.
pub(super) fn resident_bytes(pc: &Precompiled) -> usize {
    let plans: usize = pc
        .matrices()
        .iter()
        .map(|m| 4 * (chunks(m.nnz()) + 1))
        .sum();
    pc.bytes() + plans
}

impl DeviceCircuit {
    /// Scratch one evaluation needs after the witness: the partial sums of rows cut by chunk
    /// edges (head and tail, an Fr a chunk) and each chunk's cut row, for the largest matrix.
    fn sums_bytes(&self) -> usize {
        let nchunk = self.m.iter().map(|m| m.nchunk as usize).max().unwrap_or(1);
        (2 * nchunk * FR + 4 * nchunk).next_multiple_of(256)
    }

    /// Scratch bytes of `eval_enqueue`: the witness, then the partial sums.
    pub fn scratch_bytes(&self) -> usize {
        (self.columns * FR).next_multiple_of(256) + self.sums_bytes()
    }

    /// Columns the products read: the witness's inputs plus aux.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Enqueues a, b, c = A·w, B·w, C·w into `out` (each `n` Fr, zero past the rows) on
    /// `stream`; the witness w lies at the start of `scratch` (`scratch_bytes` long).
    pub fn eval_enqueue(
        &self,
        gpu: &Gpu,
        stream: &CudaStream,
        scratch: u64,
        n: usize,
        out: [u64; 3],
    ) -> Result<()> {
        use Arg::{Ptr, U32};
        let w = scratch;
        let sums = scratch + (self.columns * FR).next_multiple_of(256) as u64;
        for (m, dst) in self.m.iter().zip(out) {
            let (head, tail) = (sums, sums + (m.nchunk as usize * FR) as u64);
            let edge = tail + (m.nchunk as usize * FR) as u64;
            let blocks = m.nchunk.div_ceil(PT_ABC_THREADS).max(1);
            gpu.launch(
                stream,
                &gpu.f.abc_eval,
                (blocks, 1),
                PT_ABC_THREADS,
                0,
                &[
                    Ptr(m.row_ptr.ptr),
                    Ptr(m.cols.ptr),
                    Ptr(m.coeff.ptr),
                    Ptr(self.table.ptr),
                    Ptr(w),
                    U32(m.rows),
                    U32(n as u32),
                    U32(PT_ABC_CHUNK),
                    U32(m.nchunk),
                    Ptr(m.first.ptr),
                    Ptr(dst),
                    Ptr(head),
                    Ptr(tail),
                    Ptr(edge),
                ],
            )?;
            gpu.launch(
                stream,
                &gpu.f.abc_fixup,
                (m.nchunk.div_ceil(PT_FIX_THREADS), 1),
                PT_FIX_THREADS,
                0,
                &[
                    Ptr(m.row_ptr.ptr),
                    Ptr(edge),
                    U32(m.rows),
                    U32(PT_ABC_CHUNK),
                    U32(m.nchunk),
                    Ptr(head),
                    Ptr(tail),
                    Ptr(dst),
                ],
            )?;
        }
        Ok(())
    }
}

impl CudaExecutor {
    /// `pc`'s matrices on the device, uploaded and planned on first use (an `h2d` step) and
    /// kept beside other circuits' until memory runs short (`shelf`). Allocated under the VRAM
    /// budget: out of memory is `OutOfMemory`, and the region then evaluates on the host.
    pub(super) fn device_circuit(
        &self,
        staging: &mut Staging,
        s: &CudaStream,
        pc: &Precompiled,
        budget: Budget,
        steps: &mut Steps,
    ) -> Result<Arc<DeviceCircuit>> {
        let key = pc.digest().to_string();
        self.circuits.get_or_load(&key, true, || {
            let start = Instant::now();
            let mut up = |v: &[u32]| -> Result<DevBuf> {
                let buf = self.alloc(4 * v.len().max(1), VramPurpose::Srs, budget)?;
                staging.upload(&self.gpu, s, buf.ptr, v)?;
                Ok(buf)
            };
            let mut upload = |m: &Csr| -> Result<DevMatrix> {
                let nchunk = chunks(m.nnz());
                Ok(DevMatrix {
                    rows: m.rows() as u32,
                    nchunk: nchunk as u32,
                    row_ptr: up(m.row_ptr())?,
                    cols: up(m.cols())?,
                    coeff: up(m.coeff())?,
                    first: self.alloc(4 * (nchunk + 1), VramPurpose::Srs, budget)?,
                })
            };
            let [a, b, c] = pc.matrices();
            let m = [upload(a)?, upload(b)?, upload(c)?];
            let table = self.alloc(pc.table().len().max(1) * FR, VramPurpose::Srs, budget)?;
            staging.upload::<Scalar>(&self.gpu, s, table.ptr, pc.table())?;
            for m in &m {
                self.gpu.launch(
                    s,
                    &self.gpu.f.abc_plan,
                    (m.rows / PT_ABC_THREADS + 1, 1),
                    PT_ABC_THREADS,
                    0,
                    &[
                        Arg::Ptr(m.row_ptr.ptr),
                        Arg::U32(m.rows),
                        Arg::U32(PT_ABC_CHUNK),
                        Arg::U32(m.nchunk),
                        Arg::Ptr(m.first.ptr),
                    ],
                )?;
            }
            self.gpu.sync(s)?;
            steps.push(Stage::H2d, Engine::H2d, start, resident_bytes(pc) as u64);
            tracing::info!(
                "{}: the circuit's matrices ({} entries, {:.2} GB) resident in {:.2} s",
                self.name,
                pc.nnz(),
                resident_bytes(pc) as f64 / 1e9,
                start.elapsed().as_secs_f64()
            );
            Ok(DeviceCircuit {
                rows: pc.rows(),
                columns: pc.num_inputs() + pc.num_aux(),
                table,
                m,
            })
        })
    }

    /// a, b, c of `pc` over the assignment [`input`…, `aux`…] on this GPU, read back (each
    /// `rows` long): for `provetop check` against the host's evaluation.
    pub fn abc_eval(
        &self,
        pc: &Precompiled,
        input: &[Scalar],
        aux: &[Scalar],
    ) -> Result<[Vec<Scalar>; 3]> {
        self.gpu.bind()?;
        let s = self.gpu.stream()?;
        let mut staging = Staging::new(&self.gpu)?;
        let circuit =
            self.device_circuit(&mut staging, &s, pc, Budget::Auto, &mut Steps::default())?;
        let rows = circuit.rows;
        let n = rows.next_power_of_two();
        let scratch = self
            .gpu
            .alloc(circuit.scratch_bytes(), VramPurpose::Scratch)?;
        let out = self.gpu.alloc(3 * n * FR, VramPurpose::Abc)?;
        staging.upload(&self.gpu, &s, scratch.ptr, input)?;
        staging.upload(&self.gpu, &s, scratch.ptr + (input.len() * FR) as u64, aux)?;
        let dst = [0, 1, 2].map(|i| out.at(i * n * FR));
        circuit.eval_enqueue(&self.gpu, &s, scratch.ptr, n, dst)?;
        let mut host = vec![Scalar::from(0u64); 3 * n];
        self.gpu.d2h(&s, &mut host, out.ptr)?.wait()?;
        let mut parts = host.chunks_exact(n).map(|c| c[..rows].to_vec());
        Ok([0, 1, 2].map(|_| parts.next().expect("three products")))
    }
}
