//! The synthetic circuit's witness and its parallel synthesis: values as a pure function of
//! (seed, variable), so rows evaluate in any order.

use super::*;

impl SyntheticCircuit {
    /// The circuit of size 2^`k` whose witness is drawn from `seed`; builds (or reuses) the shape's
    /// row structure.
    pub fn new(k: u32, seed: u64) -> Self {
        let st = Structure::of(k);
        SyntheticCircuit {
            k,
            seed,
            rows: st.rows,
            st,
        }
    }

    /// Its shape, computed from `k` without synthesis.
    pub fn shape(&self) -> Shape {
        shape(self.k)
    }

    /// Constraints including the input rows: the length of A, B and C.
    pub fn num_rows(&self) -> usize {
        self.rows + PUBLIC_INPUTS + 1
    }

    pub(super) fn src_bit(&self, j: usize) -> u8 {
        (mix(self.seed ^ (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) & 1) as u8
    }

    pub(super) fn input_value(&self, i: usize) -> Scalar {
        let limbs = [0, 1, 2, 3].map(|l| mix3(self.seed, 1 << 40 | i as u64, l));
        // Clear the top two bits so the integer is below the modulus.
        let limbs = [limbs[0], limbs[1], limbs[2], limbs[3] >> 2];
        Scalar::from_u64s_le(&limbs).unwrap()
    }

    /// The value of every bit variable, false elsewhere: sources first, then the gates on
    /// them, whose operands are all sources.
    pub(super) fn bits(&self) -> Bits {
        let st = &self.st;
        let src = Bits::build(self.rows, |j| {
            st.kinds[j] == Kind::Src && self.src_bit(j) == 1
        });
        Bits::build(self.rows, |j| {
            let o = st.operands(j);
            match st.kinds[j] {
                Kind::Src => src.get(j),
                Kind::Xor => src.get(o[0] as usize) ^ src.get(o[1] as usize),
                Kind::Mux if src.get(o[0] as usize) => src.get(o[1] as usize),
                Kind::Mux => src.get(o[2] as usize),
                _ => false,
            }
        })
    }

    /// The value of aux variable `j`, given the bit values of every bit variable.
    pub(super) fn value(&self, j: usize, bits: &Bits) -> Scalar {
        let st = &self.st;
        let o = st.operands(j);
        match st.kinds[j] {
            Kind::Input => self.input_value(j),
            Kind::Src | Kind::Xor | Kind::Mux => bit_scalar(bits.get(j)),
            Kind::Lin => {
                let sum = st.lin_sum(j, |x| bits.get(x));
                let (y, z) = (bits.get(o[13] as usize), bits.get(o[14] as usize));
                if y {
                    sum.double() + bit_scalar(z)
                } else {
                    sum + bit_scalar(z)
                }
            }
            Kind::Pack => Scalar::from(
                o.iter()
                    .enumerate()
                    .map(|(t, s)| (bits.get(*s as usize) as u64) << t)
                    .sum::<u64>(),
            ),
        }
    }

    pub(super) fn row(&self, j: usize) -> Row {
        let one = Scalar::ONE;
        let w = Var::Aux(j);
        let t = Terms::default;
        let st = &self.st;
        let o: Vec<Var> = st
            .operands(j)
            .iter()
            .map(|x| Var::Aux(*x as usize))
            .collect();
        match st.kinds[j] {
            Kind::Input => Row {
                a: t().add(Var::Input(j), one),
                b: t().add(Var::One, one),
                c: t().add(w, one),
            },
            Kind::Src => Row {
                a: t().add(w, one),
                b: t().add(Var::One, one).add(w, -one),
                c: t(),
            },
            Kind::Xor => Row {
                a: t().add(o[0], Scalar::from(2)),
                b: t().add(o[1], one),
                c: t().add(o[0], one).add(o[1], one).add(w, -one),
            },
            Kind::Mux => Row {
                a: t().add(o[0], one),
                b: t().add(o[1], one).add(o[2], -one),
                c: t().add(w, one).add(o[2], -one),
            },
            Kind::Lin => {
                let a = (0..LIN_TERMS as usize).fold(t(), |lc, i| {
                    lc.add(o[i], Scalar::from(st.lin_coeff(j, i as u64)))
                });
                Row {
                    a,
                    b: t().add(o[13], one).add(Var::One, one),
                    c: t().add(w, one).add(o[14], -one),
                }
            }
            Kind::Pack => {
                let a = o
                    .iter()
                    .enumerate()
                    .fold(t(), |lc, (i, s)| lc.add(*s, Scalar::from(1u64 << i)));
                Row {
                    a,
                    b: t().add(Var::One, one),
                    c: t().add(w, one),
                }
            }
        }
    }

    /// A(z), B(z), C(z) of row j and the value w of its own variable, straight from its kind,
    /// without building linear combinations: operands are bit variables, read from `bits`.
    /// Lin and pack rows compute their sum once for A and w. Must agree with `row` and `value`.
    pub(super) fn eval_row(&self, j: usize, wit: Witness<'_>) -> [Scalar; 4] {
        let (st, bits, inputs) = (&self.st, wit.bits, wit.inputs);
        let o = st.operands(j);
        // Bit rows' A, B, C are small integers (−1..2): looked up, not computed in the field.
        let b = |x: u32| bits.get(x as usize) as i64;
        let s = |i: i64| wit.small[(i + 1) as usize];
        let own = bits.get(j) as i64;
        match st.kinds[j] {
            Kind::Input => {
                let w = inputs[j + 1];
                [w, Scalar::ONE, w, w]
            }
            Kind::Src => [s(own), s(1 - own), s(0), s(own)],
            Kind::Xor => [
                s(2 * b(o[0])),
                s(b(o[1])),
                s(b(o[0]) + b(o[1]) - own),
                s(own),
            ],
            Kind::Mux => [s(b(o[0])), s(b(o[1]) - b(o[2])), s(own - b(o[2])), s(own)],
            Kind::Lin => {
                let sum = st.lin_sum(j, |x| bits.get(x));
                let (y, z) = (b(o[13]), s(b(o[14])));
                let w = if y == 1 { sum.double() } else { sum } + z;
                [sum, s(y + 1), w - z, w]
            }
            Kind::Pack => {
                let a = o.iter().enumerate().fold(0u64, |acc, (t, s)| {
                    acc + ((bits.get(*s as usize) as u64) << t)
                });
                let w = Scalar::from(a);
                [w, Scalar::ONE, w, w]
            }
        }
    }

    /// The witness alone, variables in parallel on the current rayon pool: the pre-compiled
    /// path's synthesis.
    pub fn witness(&self) -> precompiled::Witness {
        let bits = self.bits();
        let [aux] = par_columns(self.rows, |j| [self.value(j, &bits)]);
        precompiled::Witness {
            input: self.inputs(),
            aux,
        }
    }

    /// The constant one and the public inputs.
    pub(super) fn inputs(&self) -> Vec<Scalar> {
        std::iter::once(Scalar::ONE)
            .chain((0..PUBLIC_INPUTS).map(|i| self.input_value(i)))
            .collect()
    }

    /// Synthesises rows in parallel on the current rayon pool; equals the `Circuit` path.
    pub fn synthesize_parallel(&self) -> Assignment {
        self.synthesize_parallel_into(None)
    }

    /// `synthesize_parallel`, writing A, B and C into `abc` when given (each at least as long
    /// as the rows); the assignment's own a, b and c are then empty.
    pub fn synthesize_parallel_into(&self, abc: Option<[&mut [Scalar]; 3]>) -> Assignment {
        let n = self.rows;
        let inputs = self.inputs();
        let bits = self.bits();
        let small = [
            -Scalar::ONE,
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::ONE.double(),
        ];
        let wit = Witness {
            bits: &bits,
            inputs: &inputs,
            small: &small,
        };
        // One pass over the rows writes A, B, C and the witness; the input rows `x * 0 = 0`
        // come last and have no variable of their own.
        let rows = n + inputs.len();
        let lent = match abc {
            Some([a, b, c]) => [Some(a), Some(b), Some(c), None],
            None => [None, None, None, None],
        };
        let [a, b, c, mut aux] = par_columns_into(
            rows,
            |j| match j.checked_sub(n) {
                None => self.eval_row(j, wit),
                Some(i) => [inputs[i], Scalar::ZERO, Scalar::ZERO, Scalar::ZERO],
            },
            lent,
        );
        aux.truncate(n);
        let st = &self.st;
        Assignment {
            a,
            b,
            c,
            rows,
            a_aux_density: st.a_density.clone(),
            b_aux_density: st.b_density.clone(),
            b_input_density: Density::from_words(vec![st.b_one as u64], inputs.len()),
            input: inputs,
            aux,
        }
    }
}
