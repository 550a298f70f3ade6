//! `bench --mix porep:8,window-post:1,winning-post:1`: the kinds of Filecoin proofs a run
//! submits and their weights, and the order jobs of each are submitted in: spread evenly
//! (smooth weighted round robin), so a WindowPoSt arrives among the PoReps as on a rig, not
//! after them.

use provetop_porep::Kind;

/// The kinds and their weights, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix(pub Vec<(Kind, u32)>);

impl std::str::FromStr for Mix {
    type Err = String;

    fn from_str(s: &str) -> Result<Mix, String> {
        let mut parts: Vec<(Kind, u32)> = vec![];
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (kind, weight) = item.split_once(':').unwrap_or((item, "1"));
            let kind: Kind = kind.parse().map_err(|e| format!("{e:#}"))?;
            let weight: u32 = match weight.trim().parse() {
                Ok(w) if (1..=1000).contains(&w) => w,
                _ => {
                    return Err(format!(
                        "`{item}`: a weight is a whole number from 1 to 1000"
                    ))
                }
            };
            if parts.iter().any(|(k, _)| *k == kind) {
                return Err(format!("{kind} is named twice"));
            }
            parts.push((kind, weight));
        }
        if parts.is_empty() {
            return Err(
                "expected KIND:WEIGHT[,KIND:WEIGHT…], such as porep:8,window-post:1".into(),
            );
        }
        Ok(Mix(parts))
    }
}

/// Which part each submitted job is, in order: of weights 8, 1, 1 every ten jobs hold eight of
/// the first, spread out, and one of each other.
pub struct Sequence {
    weights: Vec<i64>,
    current: Vec<i64>,
}

impl Sequence {
    /// The sequence of parts with these weights.
    pub fn new(weights: &[u32]) -> Sequence {
        Sequence {
            weights: weights.iter().map(|w| i64::from(*w)).collect(),
            current: vec![0; weights.len()],
        }
    }

    /// The first `n` parts of the sequence.
    pub fn first(weights: &[u32], n: u64) -> Vec<usize> {
        let mut s = Sequence::new(weights);
        (0..n).map(|_| s.next_part()).collect()
    }

    /// The next job's part.
    pub fn next_part(&mut self) -> usize {
        let total: i64 = self.weights.iter().sum();
        for (c, w) in self.current.iter_mut().zip(&self.weights) {
            *c += w;
        }
        let best = (0..self.current.len())
            .max_by_key(|&i| (self.current[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        if let Some(c) = self.current.get_mut(best) {
            *c -= total;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_bad_ones_are_named() {
        let m: Mix = "porep:8,window-post:1,winning-post".parse().unwrap();
        assert_eq!(
            m.0,
            vec![
                (Kind::Porep, 8),
                (Kind::WindowPost, 1),
                (Kind::WinningPost, 1)
            ]
        );
        assert!("porep:0".parse::<Mix>().unwrap_err().contains("weight"));
        assert!("sealing:1"
            .parse::<Mix>()
            .unwrap_err()
            .contains("unknown proof kind"));
        assert!("snap:1,snap:2"
            .parse::<Mix>()
            .unwrap_err()
            .contains("twice"));
        assert!("".parse::<Mix>().is_err());
    }

    #[test]
    fn the_sequence_keeps_the_weights_and_spreads_them() {
        let s = Sequence::first(&[8, 1, 1], 20);
        for (part, want) in [(0, 16), (1, 2), (2, 2)] {
            assert_eq!(s.iter().filter(|p| **p == part).count(), want, "{s:?}");
        }
        // The rare kinds come inside each ten, not bunched at its end.
        let first_window = s.iter().position(|p| *p == 1).unwrap();
        assert!(first_window < 9, "{s:?}");
        assert_ne!(s[..10].iter().position(|p| *p == 2), None);
        assert_eq!(Sequence::first(&[1], 3), vec![0, 0, 0]);
    }
}
