//! What the size-sweeping benchmarks share.

/// The command line `K… [ROUNDS=N]` (cargo bench's own flags are ignored): the log2 sizes to
/// run, `sizes` when none is given, and the rounds a size, `rounds` when not given.
pub fn sizes_and_rounds(sizes: &[u32], rounds: usize) -> (Vec<u32>, usize) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args
        .iter()
        .find_map(|a| a.strip_prefix("ROUNDS=")?.parse().ok())
        .unwrap_or(rounds);
    let given: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
    match given.is_empty() {
        true => (sizes.to_vec(), rounds),
        false => (given, rounds),
    }
}
