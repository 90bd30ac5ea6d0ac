//! Fuzz target: the container engine door's policy never panics, and whatever it lets
//! through is a bodyless, non-upgraded `GET`/`HEAD` on a plain path (no `..`, no `//`, no
//! percent-encoding), whatever the method and path bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_shared::door_policy::check;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (method, path) = text.split_once(' ').unwrap_or(("GET", &text));
    let flags = data.first().copied().unwrap_or(0);
    let (body, upgrade) = (flags & 1 == 1, flags & 2 == 2);
    if check(method, path, body, upgrade).is_ok() {
        assert!(method == "GET" || method == "HEAD");
        assert!(!body && !upgrade);
        assert!(path.starts_with('/') && !path.contains("..") && !path.contains("//"));
        assert!(!path.contains('%') && !path.contains('?'));
    }
});
