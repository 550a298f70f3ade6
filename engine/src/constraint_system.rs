//! What every constraint system that only counts or hashes repeats: allocation that numbers
//! variables without looking at their values, and namespaces ignored. A leaf, so both
//! `circuit` and `params` use it without importing each other.

/// Namespaces only name things: none of our constraint systems keeps names.
macro_rules! namespaces_ignored {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
pub(crate) use namespaces_ignored;

/// Allocation for constraint systems that count variables and never look at their values.
macro_rules! counting_alloc {
    () => {
        fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            self.num_aux += 1;
            Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
        }

        fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            self.num_inputs += 1;
            Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
        }
    };
}
pub(crate) use counting_alloc;
