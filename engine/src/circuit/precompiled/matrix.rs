//! One constraint matrix in compressed sparse rows, in the layout the CPU and GPU evaluators
//! share (CSR-FORMAT.md): row r's entries are `row_ptr[r]..row_ptr[r + 1]` of `cols` and
//! `coeff`; a column indexes the full assignment [inputs (the constant one first)…, aux…], a
//! coefficient the circuit's table.

use anyhow::{bail, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::circuit::Density;

/// One constraint matrix in CSR (CSR-FORMAT.md): row offsets, and per entry a column of the
/// assignment and an index into the coefficient table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr {
    pub(super) row_ptr: Vec<u32>,
    pub(super) cols: Vec<u32>,
    pub(super) coeff: Vec<u32>,
}

impl Default for Csr {
    fn default() -> Self {
        Csr {
            row_ptr: vec![0],
            cols: vec![],
            coeff: vec![],
        }
    }
}

impl Csr {
    /// Row r's entries are `row_ptr[r]..row_ptr[r + 1]`; `rows() + 1` offsets starting at 0.
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    /// Each entry's column in the assignment [inputs (the constant one first)…, aux…].
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// Each entry's coefficient, as an index into the circuit's table.
    pub fn coeff(&self) -> &[u32] {
        &self.coeff
    }

    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Entries (non-zero terms).
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Host bytes of its three arrays.
    pub fn bytes(&self) -> usize {
        4 * (self.row_ptr.len() + self.cols.len() + self.coeff.len())
    }

    /// Appends a row of `(column, coefficient index)` entries; false when the entries no
    /// longer fit a u32 offset.
    pub(super) fn push_row(&mut self, entries: impl Iterator<Item = (u32, u32)>) -> bool {
        for (col, k) in entries {
            self.cols.push(col);
            self.coeff.push(k);
        }
        match u32::try_from(self.cols.len()) {
            Ok(end) => {
                self.row_ptr.push(end);
                true
            }
            Err(_) => false,
        }
    }

    /// The matrix is well formed for `rows` rows over `columns` columns and a table of
    /// `table` coefficients: what an evaluator may then index without checking.
    pub(super) fn check(&self, rows: usize, columns: usize, table: usize) -> Result<()> {
        if self.row_ptr.len() != rows + 1 || self.row_ptr[0] != 0 {
            bail!("{} row offsets for {rows} rows", self.row_ptr.len());
        }
        if self.cols.len() != self.coeff.len() || self.row_ptr[rows] as usize != self.cols.len() {
            bail!("row offsets end past the entries");
        }
        if self.row_ptr.par_windows(2).any(|w| w[0] > w[1]) {
            bail!("row offsets that decrease");
        }
        if self.cols.par_iter().any(|c| *c as usize >= columns) {
            bail!("a column past the {columns} variables");
        }
        if self.coeff.par_iter().any(|k| *k as usize >= table) {
            bail!("a coefficient past the table of {table}");
        }
        Ok(())
    }
}

/// The variables `m` uses, as an input and an aux density (bellperson's trackers: A's aux,
/// B's inputs and aux), marked in parallel.
pub(super) fn densities(m: &Csr, num_inputs: usize, num_aux: usize) -> (Density, Density) {
    let atomics =
        |n: usize| -> Vec<AtomicU64> { (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect() };
    let (input, aux) = (atomics(num_inputs), atomics(num_aux));
    m.cols.par_chunks(1 << 16).for_each(|cols| {
        for &c in cols {
            let (d, i) = match (c as usize).checked_sub(num_inputs) {
                None => (&input, c as usize),
                Some(k) => (&aux, k),
            };
            d[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
        }
    });
    let words = |d: Vec<AtomicU64>| d.into_iter().map(AtomicU64::into_inner).collect();
    (
        Density::from_words(words(input), num_inputs),
        Density::from_words(words(aux), num_aux),
    )
}
