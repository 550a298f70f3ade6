//! A panic inside Filecoin's crates on a client's malformed vanilla proof is that check's
//! error: `guarded` returns it, and nothing reaches stderr (the panic hook stays quiet), while
//! any other panic still reaches the hook that was installed before.

use std::sync::atomic::{AtomicUsize, Ordering};

static HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn a_panic_in_a_guarded_check_is_its_error_and_prints_nothing() {
    std::panic::set_hook(Box::new(|_| {
        HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
    }));
    let r: anyhow::Result<()> = provetop_porep::guarded(|| panic!("index out of bounds"));
    let msg = format!("{:#}", r.expect_err("a panic is an error"));
    assert_eq!(msg, "malformed (index out of bounds)");
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), 0, "the hook printed it");
    // Nested, and on a thread of its own: still quiet.
    let r = std::thread::spawn(|| {
        provetop_porep::guarded(|| {
            provetop_porep::guarded(|| -> anyhow::Result<()> { panic!("x") })
        })
    })
    .join()
    .expect("the thread ends");
    assert!(r.is_err());
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), 0);
    // A panic outside a check is still everyone's business.
    assert!(std::panic::catch_unwind(|| panic!("elsewhere")).is_err());
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), 1);
}
