//! The synthetic circuit's A, B and C at a point, for setup: every variable's polynomials
//! from the rows' Lagrange values, in parallel.

use super::*;

/// Coefficients of operand `t` of a row of kind `k` in A, B and C (`lin` is the row's lin
/// coefficient for t < 13). Must agree with `SyntheticCircuit::row`.
pub(super) fn operand_coeffs(k: Kind, t: usize, lin: impl Fn() -> u64) -> [i128; 3] {
    match (k, t) {
        (Kind::Xor, 0) => [2, 0, 1],
        (Kind::Xor, _) => [0, 1, 1],
        (Kind::Mux, 0) => [1, 0, 0],
        (Kind::Mux, 1) => [0, 1, 0],
        (Kind::Mux, _) => [0, -1, -1],
        (Kind::Lin, 13) => [0, 1, 0],
        (Kind::Lin, 14) => [0, 0, -1],
        (Kind::Lin, _) => [lin() as i128, 0, 0],
        (Kind::Pack, t) => [1 << t, 0, 0],
        (Kind::Input | Kind::Src, _) => [0, 0, 0],
    }
}

/// A small integer (|v| < 2^64) times `x`.
pub(super) fn times(v: i128, x: Scalar) -> Scalar {
    match v {
        0 => Scalar::ZERO,
        1 => x,
        -1 => -x,
        2 => x.double(),
        v if v > 0 => x * Scalar::from(v as u64),
        v => -(x * Scalar::from(v.unsigned_abs() as u64)),
    }
}

impl SyntheticCircuit {
    /// Every variable's A, B and C polynomials at a point, from the rows' Lagrange values
    /// there (`lagrange[j]` for row j): the constant one and the inputs first, then aux — what
    /// setup's evaluating constraint system accumulates row by row, here in parallel. Each
    /// variable gathers the rows that use it as an operand (an inverted index of the operand
    /// lists), plus its own row.
    pub fn evaluate_at(&self, lagrange: &[Scalar]) -> [Vec<Scalar>; 3] {
        let st = &self.st;
        let (n, first_aux) = (self.rows, PUBLIC_INPUTS + 1);
        assert!(lagrange.len() >= n);
        // The operand positions of each variable, by a counting sort (any order: field sums
        // do not depend on it).
        let zeros = |len: usize| -> Vec<AtomicU64> {
            (0..len)
                .into_par_iter()
                .map(|_| AtomicU64::new(0))
                .collect()
        };
        let counts = zeros(n + 1);
        st.ops.par_iter().for_each(|v| {
            counts[*v as usize + 1].fetch_add(1, Ordering::Relaxed);
        });
        let mut at = 0u64;
        let first: Vec<u64> = counts
            .iter()
            .map(|c| {
                at += c.load(Ordering::Relaxed);
                at
            })
            .collect();
        let cursor: Vec<AtomicU64> = first.par_iter().map(|f| AtomicU64::new(*f)).collect();
        let used_by = zeros(st.ops.len());
        // Each use: its row, its kind and its operand position (< 32), so the gather below
        // reads no row's kind at random.
        (0..n).into_par_iter().for_each(|j| {
            let kind = (st.kinds[j] as u64) << 5;
            for (t, v) in st.operands(j).iter().enumerate() {
                let slot = cursor[*v as usize].fetch_add(1, Ordering::Relaxed);
                used_by[slot as usize].store((j as u64) << 8 | kind | t as u64, Ordering::Relaxed);
            }
        });
        let kinds = [
            Kind::Input,
            Kind::Src,
            Kind::Xor,
            Kind::Mux,
            Kind::Lin,
            Kind::Pack,
        ];
        debug_assert!(kinds.iter().enumerate().all(|(i, k)| *k as usize == i));
        let own = |j: usize| -> [i128; 3] {
            match st.kinds[j] {
                Kind::Input => [0, 0, 1],
                Kind::Src => [1, -1, 0],
                Kind::Xor => [0, 0, -1],
                Kind::Mux | Kind::Lin | Kind::Pack => [0, 0, 1],
            }
        };
        let mut cols = par_columns(n, |v| {
            let mut sum = own(v).map(|c| times(c, lagrange[v]));
            let refs = &used_by[first[v] as usize..first[v + 1] as usize];
            for r in refs {
                let r = r.load(Ordering::Relaxed);
                let (j, kind, t) = ((r >> 8) as usize, kinds[(r >> 5 & 7) as usize], r & 31);
                let c = operand_coeffs(kind, t as usize, || st.lin_coeff(j, t));
                for (s, c) in sum.iter_mut().zip(c) {
                    *s += times(c, lagrange[j]);
                }
            }
            sum
        });
        // The constant one (B of input, src, lin and pack rows) and each input (A of its row).
        let one_in_b = (0..n)
            .into_par_iter()
            .filter(|j| {
                matches!(
                    st.kinds[*j],
                    Kind::Input | Kind::Src | Kind::Lin | Kind::Pack
                )
            })
            .map(|j| lagrange[j])
            .reduce(|| Scalar::ZERO, |a, b| a + b);
        for (k, col) in cols.iter_mut().enumerate() {
            let mut head = vec![Scalar::ZERO; first_aux];
            if k == 0 {
                for (i, h) in head[1..].iter_mut().enumerate() {
                    *h = lagrange[i];
                }
            } else if k == 1 {
                head[0] = one_in_b;
            }
            head.append(col);
            *col = head;
        }
        cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::setup::evaluate;
    use ff::Field;
    use rand::SeedableRng;

    #[test]
    fn the_synthetic_circuit_evaluates_in_parallel_as_row_by_row() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for k in [4, 6, 10] {
            let circuit = SyntheticCircuit::new(k, 1);
            let shape = circuit.shape();
            let lagrange: Vec<Scalar> = (0..1 << k).map(|_| Scalar::random(&mut rng)).collect();
            let want = evaluate(circuit.clone(), &shape, &lagrange).unwrap();
            assert_eq!(circuit.evaluate_at(&lagrange), want, "k = {k}");
        }
    }
}
