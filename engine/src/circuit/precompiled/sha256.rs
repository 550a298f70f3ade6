//! The witness of bellpepper's SHA-256 gadget (and bellperson's copy, which Filecoin's PoRep
//! uses) without running it: the values it allocates, in its order, from native bit and u32
//! operations. Under a witness-only system the gadget still builds the linear combinations of
//! its additions outside `enforce` (UInt32::addmany, MultiEq) and a vector of booleans per
//! word operation; that is nine tenths of a PoRep partition's witness.
//!
//! The gadget allocates a bit wherever an operation meets no constant operand, so the model
//! tracks, per bit, what bellpepper's `Boolean` would be: a constant, or an allocated bit's
//! value taken as is or negated. Must agree with the gadget: `tests` compares the two on inputs
//! that mix constant, allocated and negated bits.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::SynthesisError;
use blstrs::Scalar;
use ff::Field;

/// A bit as the gadget's `Boolean` holds it, by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    /// A constant bit, never allocated.
    Constant(bool),
    /// An allocated bit holding `value`, used negated (`Boolean::Not`) or not (`Boolean::Is`).
    Var {
        /// The allocated bit's value.
        value: bool,
        /// Whether the bit is used negated (`Boolean::Not`).
        negated: bool,
    },
}

impl Bit {
    /// The bit of a gadget's `Boolean`, which must have its value (a witness has).
    pub fn of(b: &Boolean) -> Result<Bit, SynthesisError> {
        let value = |v: Option<bool>| v.ok_or(SynthesisError::AssignmentMissing);
        Ok(match b {
            Boolean::Constant(c) => Bit::Constant(*c),
            Boolean::Is(a) => Bit::Var {
                value: value(a.get_value())?,
                negated: false,
            },
            Boolean::Not(a) => Bit::Var {
                value: value(a.get_value())?,
                negated: true,
            },
        })
    }

    /// The bit's value as the circuit uses it (negation applied).
    pub fn value(self) -> bool {
        match self {
            Bit::Constant(c) => c,
            Bit::Var { value, negated } => value ^ negated,
        }
    }

    fn not(self) -> Bit {
        match self {
            Bit::Constant(c) => Bit::Constant(!c),
            Bit::Var { value, negated } => Bit::Var {
                value,
                negated: !negated,
            },
        }
    }
}

/// Where allocated values go: the witness's aux, in order.
pub type Aux = Vec<Scalar>;

fn alloc(aux: &mut Aux, v: bool) -> Bit {
    aux.push(if v { Scalar::ONE } else { Scalar::ZERO });
    Bit::Var {
        value: v,
        negated: false,
    }
}

/// `Boolean::xor`.
fn xor(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Constant(false), x) | (x, Bit::Constant(false)) => x,
        (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x.not(),
        // The gadget xors the two variables and negates the result when one operand was.
        (
            Bit::Var {
                value: va,
                negated: na,
            },
            Bit::Var {
                value: vb,
                negated: nb,
            },
        ) => match alloc(aux, va ^ vb) {
            x if na ^ nb => x.not(),
            x => x,
        },
    }
}

/// `Boolean::and` (and_not and nor for negated operands allocate the same one bit).
fn and(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Constant(false), _) | (_, Bit::Constant(false)) => Bit::Constant(false),
        (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x,
        _ => alloc(aux, a.value() & b.value()),
    }
}

/// `Boolean::sha256_ch`: (a ∧ b) ⊕ (¬a ∧ c), its cases in the gadget's order.
fn ch(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    use Bit::Constant as K;
    let v = (a.value() & b.value()) ^ (!a.value() & c.value());
    match (a, b, c) {
        (K(_), K(_), K(_)) => K(v),
        (K(false), _, c) => c,
        (a, K(false), c) => and(aux, a.not(), c),
        (a, b, K(false)) => and(aux, a, b),
        (a, b, K(true)) => and(aux, a, b.not()).not(),
        (a, K(true), c) => and(aux, a.not(), c.not()).not(),
        _ => alloc(aux, v),
    }
}

/// `Boolean::sha256_maj`: (a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c), its cases in the gadget's order.
fn maj(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    use Bit::Constant as K;
    let (x, y, z) = (a.value(), b.value(), c.value());
    let v = (x & y) ^ (x & z) ^ (y & z);
    match (a, b, c) {
        (K(_), K(_), K(_)) => K(v),
        (K(false), b, c) => and(aux, b, c),
        (a, K(false), c) => and(aux, a, c),
        (a, b, K(false)) => and(aux, a, b),
        (a, b, K(true)) => and(aux, a.not(), b.not()).not(),
        (a, K(true), c) => and(aux, a.not(), c.not()).not(),
        (K(true), b, c) => and(aux, b.not(), c.not()).not(),
        _ => {
            // The result first, then b ∧ c for its constraint.
            let m = alloc(aux, v);
            and(aux, b, c);
            m
        }
    }
}

/// `UInt32`: bits least significant first.
#[derive(Clone, Copy)]
struct Word([Bit; 32]);

impl Word {
    fn constant(v: u32) -> Word {
        Word(std::array::from_fn(|i| Bit::Constant(v >> i & 1 == 1)))
    }

    /// `UInt32::from_bits_be`.
    fn from_bits_be(bits: &[Bit]) -> Word {
        Word(std::array::from_fn(|i| bits[31 - i]))
    }

    fn value(&self) -> u32 {
        (0..32).fold(0, |v, i| v | (self.0[i].value() as u32) << i)
    }

    fn rotr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| self.0[(i + by) % 32]))
    }

    fn shr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| match self.0.get(i + by) {
            Some(b) => *b,
            None => Bit::Constant(false),
        }))
    }

    fn xor(&self, aux: &mut Aux, other: &Word) -> Word {
        let mut out = self.0;
        for (o, b) in out.iter_mut().zip(&other.0) {
            *o = xor(aux, *o, *b);
        }
        Word(out)
    }

    fn triop(aux: &mut Aux, [a, b, c]: [&Word; 3], f: fn(&mut Aux, Bit, Bit, Bit) -> Bit) -> Word {
        let mut out = a.0;
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(aux, a.0[i], b.0[i], c.0[i]);
        }
        Word(out)
    }

    /// `UInt32::addmany`: the sum's bits, carries included, unless every operand is constant.
    fn addmany(aux: &mut Aux, ops: &[Word]) -> Word {
        let sum: u64 = ops.iter().map(|w| w.value() as u64).sum();
        if ops
            .iter()
            .all(|w| w.0.iter().all(|b| matches!(b, Bit::Constant(_))))
        {
            return Word::constant(sum as u32);
        }
        let max = ops.len() as u64 * u32::MAX as u64;
        // The carries past bit 31 are allocated and dropped.
        let mut bits = [Bit::Constant(false); 64];
        let used = (64 - max.leading_zeros()) as usize;
        for (i, b) in bits.iter_mut().enumerate().take(used) {
            *b = alloc(aux, sum >> i & 1 == 1);
        }
        Word(std::array::from_fn(|i| bits[i]))
    }
}

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// A working variable of the rounds: a word, or the operands of an addition the gadget defers
/// until the word is read (`Maybe`).
enum Maybe {
    Concrete(Word),
    Deferred(Vec<Word>),
}

impl Maybe {
    fn compute(self, aux: &mut Aux, others: &[Word]) -> Word {
        match self {
            Maybe::Concrete(w) => w,
            Maybe::Deferred(mut v) => {
                v.extend_from_slice(others);
                Word::addmany(aux, &v)
            }
        }
    }
}

/// `sha256_compression_function`.
fn compress(aux: &mut Aux, block: &[Bit], cur: &[Word; 8]) -> [Word; 8] {
    let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
    for i in 16..64 {
        let x = &w[i - 15];
        let s0 = x.rotr(7).xor(aux, &x.rotr(18)).xor(aux, &x.shr(3));
        let x = &w[i - 2];
        let s1 = x.rotr(17).xor(aux, &x.rotr(19)).xor(aux, &x.shr(10));
        let t = Word::addmany(aux, &[w[i - 16], s0, w[i - 7], s1]);
        w.push(t);
    }
    let mut a = Maybe::Concrete(cur[0]);
    let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *cur;
    let mut e = Maybe::Concrete(cur[4]);
    for i in 0..64 {
        let new_e = e.compute(aux, &[]);
        let s1 = new_e
            .rotr(6)
            .xor(aux, &new_e.rotr(11))
            .xor(aux, &new_e.rotr(25));
        let chv = Word::triop(aux, [&new_e, &f, &g], ch);
        let temp1 = [h, s1, chv, Word::constant(ROUND_CONSTANTS[i]), w[i]];
        let new_a = a.compute(aux, &[]);
        let s0 = new_a
            .rotr(2)
            .xor(aux, &new_a.rotr(13))
            .xor(aux, &new_a.rotr(22));
        let majv = Word::triop(aux, [&new_a, &b, &c], maj);
        h = g;
        g = f;
        f = new_e;
        e = Maybe::Deferred(temp1.iter().copied().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Maybe::Deferred(temp1.iter().copied().chain([s0, majv]).collect());
    }
    let h0 = a.compute(aux, &[cur[0]]);
    let h1 = Word::addmany(aux, &[cur[1], b]);
    let h2 = Word::addmany(aux, &[cur[2], c]);
    let h3 = Word::addmany(aux, &[cur[3], d]);
    let h4 = e.compute(aux, &[cur[4]]);
    let h5 = Word::addmany(aux, &[cur[5], f]);
    let h6 = Word::addmany(aux, &[cur[6], g]);
    let h7 = Word::addmany(aux, &[cur[7], h]);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}

/// What `sha256(cs, input)` allocates, appended to `aux`, and the digest's bits it returns
/// (most significant first).
pub fn sha256(aux: &mut Aux, input: &[Bit]) -> Vec<Bit> {
    assert!(input.len() % 8 == 0);
    let mut padded = input.to_vec();
    let len = padded.len() as u64;
    padded.push(Bit::Constant(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Bit::Constant(false));
    }
    padded.extend((0..64).rev().map(|i| Bit::Constant(len >> i & 1 == 1)));
    let mut cur = IV.map(Word::constant);
    for block in padded.chunks(512) {
        cur = compress(aux, block, &cur);
    }
    cur.iter().flat_map(|w| w.0.iter().rev().copied()).collect()
}

/// Σ 2^i · bits[i] for at most 254 bits: the number `multipack::pack_bits` allocates.
pub fn pack(bits: &[Bit]) -> Scalar {
    assert!(bits.len() <= 254);
    let mut limbs = [0u64; 4];
    for (i, b) in bits.iter().enumerate() {
        limbs[i / 64] |= (b.value() as u64) << (i % 64);
    }
    Scalar::from_u64s_le(&limbs).expect("below 2^254")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::precompiled::WitnessCs;
    use bellpepper::gadgets::sha256::sha256 as gadget;
    use bellpepper_core::boolean::AllocatedBit;
    use bellpepper_core::ConstraintSystem;

    /// Inputs of every kind of bit, several blocks long, against the gadget itself: the same
    /// allocations and the same digest, bit kinds included.
    #[test]
    fn the_model_allocates_what_the_gadget_does() {
        for (bytes, seed) in [(0usize, 1u64), (3, 2), (64, 3), (120, 4)] {
            let mut cs = WitnessCs::default();
            let mut rand = seed;
            let mut next = || {
                rand = crate::circuit::synthetic::mix(rand);
                rand
            };
            let input: Vec<Boolean> = (0..bytes * 8)
                .map(|_| {
                    let r = next();
                    let v = r & 1 == 1;
                    match r >> 1 & 3 {
                        0 => Boolean::Constant(v),
                        1 => Boolean::from(AllocatedBit::alloc(&mut cs, Some(v)).unwrap()).not(),
                        _ => Boolean::from(AllocatedBit::alloc(&mut cs, Some(v)).unwrap()),
                    }
                })
                .collect();
            let before = cs.aux_slice().len();
            let want = gadget(&mut cs, &input).unwrap();
            let want_aux = cs.aux_slice()[before..].to_vec();
            let bits: Vec<Bit> = input.iter().map(|b| Bit::of(b).unwrap()).collect();
            let mut aux = vec![];
            let got = sha256(&mut aux, &bits);
            assert_eq!(aux.len(), want_aux.len(), "{bytes} bytes");
            assert!(aux == want_aux, "{bytes} bytes: different values");
            let want: Vec<Bit> = want.iter().map(|b| Bit::of(b).unwrap()).collect();
            assert_eq!(got, want, "{bytes} bytes");
        }
    }
}
