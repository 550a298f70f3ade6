//! A bounded FIFO: the newest `cap` items, oldest first.

use std::collections::VecDeque;

/// A bounded FIFO holding the newest `cap` items, oldest first.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    items: VecDeque<T>,
    cap: usize,
}

impl<T> Ring<T> {
    /// An empty ring that keeps at most `cap` items (at least 1).
    pub fn new(cap: usize) -> Self {
        Ring {
            items: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Appends `item`, dropping the oldest when full.
    pub fn push(&mut self, item: T) {
        if self.items.len() == self.cap {
            self.items.pop_front();
        }
        self.items.push_back(item);
    }

    /// Inserts keeping the ring sorted by `key`, searching from the back: items mostly arrive
    /// in order, a little late at worst.
    pub fn insert_sorted<K: Ord>(&mut self, item: T, key: impl Fn(&T) -> K) {
        if self.items.len() == self.cap {
            self.items.pop_front();
        }
        let k = key(&item);
        let mut i = self.items.len();
        while i > 0 && key(&self.items[i - 1]) > k {
            i -= 1;
        }
        self.items.insert(i, item);
    }

    /// Drops items from the front while `f` holds for them.
    pub fn pop_front_while(&mut self, mut f: impl FnMut(&T) -> bool) {
        while self.items.front().is_some_and(&mut f) {
            self.items.pop_front();
        }
    }

    /// Items held, at most the capacity.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item is held.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        self.items.iter()
    }

    /// The newest item; `None` when empty.
    pub fn back(&self) -> Option<&T> {
        self.items.back()
    }

    /// The `i`th item, 0 the oldest; `None` past the end.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)
    }

    /// The index of the first item for which `pred` is false (items must be partitioned).
    pub fn partition_point(&self, pred: impl FnMut(&T) -> bool) -> usize {
        self.items.partition_point(pred)
    }

    /// The items from index `from` on, oldest first.
    pub fn range(&self, from: usize) -> impl Iterator<Item = &T> {
        self.items.range(from..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_stays_sorted() {
        let mut r = Ring::new(3);
        for x in [1, 3, 2, 5, 4] {
            r.insert_sorted(x, |v| *v);
        }
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
        r.pop_front_while(|v| *v < 4);
        assert_eq!(r.len(), 2);
    }
}
