//! Fuzz target: `classify` must never panic or crash on any input, and what it calls a
//! bounded read must stay one when classified again (determinism).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_shared::policy::classify;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let first = classify(&text);
    if first.allowed_as_read() {
        assert_eq!(classify(&text), first);
    }
});
