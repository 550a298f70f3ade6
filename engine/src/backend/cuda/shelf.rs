//! What a GPU keeps resident per parameter set or circuit (SRS queries, constraint matrices),
//! several at once: a rig proves PoRep, SnapDeals and PoSt side by side, and with one set on the
//! device at a time each change of kind uploaded its set again (a WinningPoSt among 8MiB PoReps
//! spent 100 ms of its 345 ms on it). Sets stay until memory runs short; then the least recently
//! used one that no region holds makes room (`CudaExecutor::alloc`).

use parking_lot::Mutex;
use std::sync::Arc;

/// Resident items by key, least recently used first.
pub(super) struct Shelf<K, T> {
    items: Mutex<Vec<(K, Arc<T>)>>,
    /// Held while an item is loaded, so two workers do not upload the same set; the items'
    /// own lock stays free meanwhile, for `evict_idle` from an allocation.
    loading: Mutex<()>,
}

impl<K, T> Default for Shelf<K, T> {
    fn default() -> Self {
        Shelf {
            items: Mutex::default(),
            loading: Mutex::default(),
        }
    }
}

impl<K: PartialEq + Clone, T> Shelf<K, T> {
    /// The item of `key`, now the most recently used.
    pub(super) fn get(&self, key: &K) -> Option<Arc<T>> {
        let mut items = self.items.lock();
        let i = items.iter().position(|(k, _)| k == key)?;
        let item = items.remove(i);
        let found = item.1.clone();
        items.push(item);
        Some(found)
    }

    /// The item of `key`, loaded by `load` when it is not resident (one load of a kept item at
    /// a time); `keep` says whether it stays resident afterwards.
    pub(super) fn get_or_load<E>(
        &self,
        key: &K,
        keep: bool,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if let Some(found) = self.get(key) {
            return Ok(found);
        }
        if !keep {
            // each region loads its own copy: nothing to share, so nothing to wait for
            return load().map(Arc::new);
        }
        let _loading = self.loading.lock();
        // another worker may have loaded it while this one waited
        if let Some(found) = self.get(key) {
            return Ok(found);
        }
        let item = Arc::new(load()?);
        self.items.lock().push((key.clone(), item.clone()));
        Ok(item)
    }

    /// Drops the least recently used item that nobody else holds; false when there is none.
    pub(super) fn evict_idle(&self) -> bool {
        let mut items = self.items.lock();
        match items.iter().position(|(_, t)| Arc::strong_count(t) == 1) {
            Some(i) => {
                items.remove(i);
                true
            }
            None => false,
        }
    }

    /// How many items are resident.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.items.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_items_stay_and_the_least_recently_used_idle_one_goes_first() {
        let shelf: Shelf<&str, u32> = Shelf::default();
        let load = |v| move || Ok::<_, ()>(v);
        let porep = shelf.get_or_load(&"porep", true, load(1)).unwrap();
        drop(shelf.get_or_load(&"winning", true, load(2)).unwrap());
        drop(shelf.get_or_load(&"window", true, load(3)).unwrap());
        assert_eq!(shelf.len(), 3);
        // loaded once: a second ask finds it, and it becomes the most recently used
        let again = shelf
            .get_or_load(&"winning", true, || Err::<u32, ()>(()))
            .unwrap();
        assert_eq!(*again, 2);
        drop(again);
        // porep is held by a region: the eviction skips it and takes window (older than winning)
        assert!(shelf.evict_idle());
        assert!(shelf.get(&"window").is_none());
        assert!(shelf.get(&"winning").is_some());
        assert!(shelf.evict_idle());
        assert!(!shelf.evict_idle(), "only the held one is left");
        assert_eq!(shelf.len(), 1);
        drop(porep);
        assert!(shelf.evict_idle());
    }

    #[test]
    fn an_item_not_kept_is_loaded_each_time_and_a_failed_load_leaves_nothing() {
        let shelf: Shelf<u8, u8> = Shelf::default();
        assert_eq!(*shelf.get_or_load(&1, false, || Ok::<_, ()>(7)).unwrap(), 7);
        assert!(shelf.get(&1).is_none());
        assert!(shelf
            .get_or_load(&2, true, || Err::<u8, &str>("no room"))
            .is_err());
        assert_eq!(shelf.len(), 0);
    }
}
