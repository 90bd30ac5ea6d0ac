//! Resource ids and exec targets from arbitrary text (they arrive from agents and API
//! callers): parsing never panics, and whatever parses prints back to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::ResourceId;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(id) = text.parse::<ResourceId>() {
        assert_eq!(id.to_string(), text);
        assert_eq!(id.to_string().parse::<ResourceId>().ok(), Some(id));
    }
    if let Ok(target) = text.parse::<ExecTarget>() {
        assert_eq!(target.to_string().parse::<ExecTarget>().ok(), Some(target));
    }
});
