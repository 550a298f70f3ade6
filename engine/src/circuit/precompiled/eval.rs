//! a, b, c = A·w, B·w, C·w on the CPU, rows in parallel, into exactly the [`Assignment`] the
//! plain path builds. Coefficients ±1 are an addition or a subtraction; a witness value 0 or
//! 1 (most of a hash circuit's) takes no multiply, and ±1 times 1 not even a field addition.

use anyhow::{bail, Result};
use blstrs::Scalar;
use ff::Field;

use rayon::prelude::*;

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
        self.check_witness(&w)?;
        let [a, b, c] = self.abc(&w.input, &w.aux, abc)?;
        Ok(self.assignment([a, b, c], w))
    }

    /// The assignment of `w` with a, b and c left empty, to be evaluated where the region runs
    /// (the cuda backend: on the device, from its resident copy of the matrices; any executor:
    /// `RegionInput::restore_abc`).
    pub fn deferred(&self, w: Witness) -> Result<Assignment> {
        self.check_witness(&w)?;
        Ok(self.assignment([vec![], vec![], vec![]], w))
    }

    /// A, B and C times the assignment [`input`…, `aux`…], into `lent` when given (each at
    /// least as long as the rows; the vectors returned are then empty).
    pub fn abc(
        &self,
        input: &[Scalar],
        aux: &[Scalar],
        lent: Option<[&mut [Scalar]; 3]>,
    ) -> Result<[Vec<Scalar>; 3]> {
        let rows = self.rows();
        let lent = match lent {
            Some(d) if d.iter().any(|d| d.len() < rows) => {
                bail!("{rows} rows do not fit the {} lent for them", d[0].len())
            }
            Some([a, b, c]) => [Some(a), Some(b), Some(c)],
            None => [None, None, None],
        };
        let small = small();
        let v = Values {
            input,
            aux,
            table: &self.table,
            classes: Classes::of(input, aux),
            small: &small,
        };
        Ok(par_columns_into(
            rows,
            |r| [v.dot(&self.a, r), v.dot(&self.b, r), v.dot(&self.c, r)],
            lent,
        ))
    }

    fn check_witness(&self, w: &Witness) -> Result<()> {
        if w.input.len() != self.num_inputs || w.aux.len() != self.num_aux {
            bail!(
                "a witness of {} inputs and {} aux for a circuit of {} and {}",
                w.input.len(),
                w.aux.len(),
                self.num_inputs,
                self.num_aux
            );
        }
        Ok(())
    }

    fn assignment(&self, [a, b, c]: [Vec<Scalar>; 3], w: Witness) -> Assignment {
        Assignment {
            a,
            b,
            c,
            rows: self.rows(),
            input: w.input,
            aux: w.aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        }
    }
}

/// 0, 1, 2, … as field elements.
fn small() -> [Scalar; SMALL] {
    let mut s = [Scalar::ZERO; SMALL];
    for i in 1..SMALL {
        s[i] = s[i - 1] + Scalar::ONE;
    }
    s
}

/// What a row's products read: the witness, its values' classes and the coefficient table.
struct Values<'a> {
    input: &'a [Scalar],
    aux: &'a [Scalar],
    table: &'a [Scalar],
    classes: Classes,
    /// 0..SMALL as field elements, for the integer sums.
    small: &'a [Scalar; SMALL],
}

const SMALL: usize = 256;

/// Two bits a variable (0, 1 or any other value), packed: a hash circuit's witness is mostly
/// bits, and a variable's class is read without loading its 32 bytes, from an array a
/// sixteenth of the witness's size.
struct Classes(Vec<u64>);

const ZERO: u64 = 0;
const ONE: u64 = 1;

impl Classes {
    fn of(input: &[Scalar], aux: &[Scalar]) -> Classes {
        // Plain comparisons of the limbs (`is_zero` is constant-time, and slower).
        let class = |x: &Scalar| match *x {
            x if x == Scalar::ZERO => ZERO,
            x if x == Scalar::ONE => ONE,
            _ => 2,
        };
        let n = input.len() + aux.len();
        let words = (0..n.div_ceil(32))
            .into_par_iter()
            .map(|w| {
                (w * 32..(w * 32 + 32).min(n)).fold(0u64, |word, j| {
                    let x = match j.checked_sub(input.len()) {
                        None => &input[j],
                        Some(k) => &aux[k],
                    };
                    word | class(x) << (2 * (j % 32))
                })
            })
            .collect();
        Classes(words)
    }

    #[inline]
    fn get(&self, col: usize) -> u64 {
        self.0[col / 32] >> (2 * (col % 32)) & 3
    }
}

impl Values<'_> {
    /// Σ table[coeff[e]] · w[cols[e]] over row r's entries. Zeros are skipped; a ±1 times a
    /// one is counted as an integer, added once; nothing is multiplied but a coefficient other
    /// than ±1 by a value other than 0 and 1.
    #[inline]
    fn dot(&self, m: &Csr, r: usize) -> Scalar {
        let (s, e) = (m.row_ptr[r] as usize, m.row_ptr[r + 1] as usize);
        let mut acc = Scalar::ZERO;
        let mut ones = 0i64;
        for (&col, &k) in m.cols[s..e].iter().zip(&m.coeff[s..e]) {
            let col = col as usize;
            match (self.classes.get(col), k) {
                (ZERO, _) => {}
                (ONE, 0) => ones += 1,
                (ONE, 1) => ones -= 1,
                (ONE, k) => acc += &self.table[k as usize],
                (_, k) => {
                    let x = match col.checked_sub(self.input.len()) {
                        None => &self.input[col],
                        Some(i) => &self.aux[i],
                    };
                    match k {
                        0 => acc += x,
                        1 => acc -= x,
                        k => acc += self.table[k as usize] * x,
                    }
                }
            }
        }
        match ones.unsigned_abs() as usize {
            0 => acc,
            n if n < SMALL && ones > 0 => acc + self.small[n],
            n if n < SMALL => acc - self.small[n],
            n if ones > 0 => acc + Scalar::from(n as u64),
            n => acc - Scalar::from(n as u64),
        }
    }
}
