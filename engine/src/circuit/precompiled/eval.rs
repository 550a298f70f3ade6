//! a, b, c = A·w, B·w, C·w on the CPU, rows in parallel, into exactly the [`Assignment`] the
//! plain path builds. Coefficients ±1 are an addition or a subtraction; a witness value 0 or
//! 1 (most of a hash circuit's) takes no multiply either.

use anyhow::{bail, Result};
use blstrs::Scalar;
use ff::Field;

use super::matrix::Csr;
use super::{Precompiled, Witness};
use crate::circuit::{par_columns_into, Assignment};

impl Precompiled {
    /// The assignment of `w`, a partition's witness of this circuit.
    pub fn evaluate(&self, w: Witness) -> Result<Assignment> {
        self.evaluate_into(w, None)
    }

    /// `evaluate`, with a, b and c written into `abc` when given (each at least as long as
    /// the rows; the assignment's own a, b and c are then empty), as `synthesize_into` does.
    pub fn evaluate_into(&self, w: Witness, abc: Option<[&mut [Scalar]; 3]>) -> Result<Assignment> {
        if w.input.len() != self.num_inputs || w.aux.len() != self.num_aux {
            bail!(
                "a witness of {} inputs and {} aux for a circuit of {} and {}",
                w.input.len(),
                w.aux.len(),
                self.num_inputs,
                self.num_aux
            );
        }
        let rows = self.rows();
        let lent = match abc {
            Some(d) if d.iter().any(|d| d.len() < rows) => {
                bail!("{rows} rows do not fit the {} lent for them", d[0].len())
            }
            Some([a, b, c]) => [Some(a), Some(b), Some(c)],
            None => [None, None, None],
        };
        let v = Values {
            input: &w.input,
            aux: &w.aux,
            table: &self.table,
        };
        let [a, b, c] = par_columns_into(
            rows,
            |r| [v.dot(&self.a, r), v.dot(&self.b, r), v.dot(&self.c, r)],
            lent,
        );
        Ok(Assignment {
            a,
            b,
            c,
            rows,
            input: w.input,
            aux: w.aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        })
    }
}

/// What a row's products read: the witness and the coefficient table.
struct Values<'a> {
    input: &'a [Scalar],
    aux: &'a [Scalar],
    table: &'a [Scalar],
}

impl Values<'_> {
    /// Σ table[coeff[e]] · w[cols[e]] over row r's entries.
    #[inline]
    fn dot(&self, m: &Csr, r: usize) -> Scalar {
        let (s, e) = (m.row_ptr[r] as usize, m.row_ptr[r + 1] as usize);
        let mut acc = Scalar::ZERO;
        for (&col, &k) in m.cols[s..e].iter().zip(&m.coeff[s..e]) {
            let col = col as usize;
            let x = match col.checked_sub(self.input.len()) {
                None => &self.input[col],
                Some(i) => &self.aux[i],
            };
            match k {
                0 => acc += x,
                1 => acc -= x,
                k if *x == Scalar::ONE => acc += &self.table[k as usize],
                k if !bool::from(x.is_zero()) => acc += self.table[k as usize] * x,
                _ => {}
            }
        }
        acc
    }
}
