//! Independent cases of a slow test spread over threads.

/// `each` applied to `items` split into `workers` contiguous chunks, one thread per chunk,
/// the results concatenated in the items' order. A panic in a worker is the test's panic.
pub fn in_chunks<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    each: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let size = items.len().div_ceil(workers.max(1)).max(1);
    let each = &each;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|chunk| s.spawn(move || each(chunk)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}
