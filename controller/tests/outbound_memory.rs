//! What an agent's outbound queue keeps for as long as its stream lives. tokio's channel
//! allocates its slots in blocks of 32 and keeps them (two once 32 messages went through),
//! so the size of one queued message is paid 64 times per connected agent, for good. The
//! heap is counted by a global allocator (no `unsafe`), in a test binary of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use vigil_controller::agents::sessions::outbound_channel;
use vigil_proto::agent::v1::{ControllerMessage, ExecRequest, controller_message};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Agents simulated, and messages sent through each one's queue (a fan-out sends one).
const AGENTS: usize = 200;
const MESSAGES: usize = 100;
/// Most heap one idle queue may keep after many messages went through it.
const MOST_PER_QUEUE: usize = 2048;

fn request(i: usize) -> ControllerMessage {
    ControllerMessage {
        kind: Some(controller_message::Kind::ExecRequest(ExecRequest {
            request_id: format!("request-{i}"),
            command: "uname -s".into(),
            timeout_s: 20,
            ..ExecRequest::default()
        })),
    }
}

#[test]
fn an_idle_outbound_queue_keeps_little_after_many_messages() {
    let region = Region::new(GLOBAL);
    let mut queues = Vec::with_capacity(AGENTS);
    for _ in 0..AGENTS {
        let (tx, mut rx) = outbound_channel();
        for i in 0..MESSAGES {
            tx.try_send(Box::new(Ok(request(i)))).unwrap();
            let sent = rx.try_recv().unwrap();
            assert!(sent.is_ok());
        }
        queues.push((tx, rx));
    }
    let change = region.change();
    let held = change
        .bytes_allocated
        .saturating_sub(change.bytes_deallocated);
    let per_queue = held / AGENTS;
    println!("an idle queue keeps {per_queue} bytes after {MESSAGES} messages");
    assert!(
        per_queue <= MOST_PER_QUEUE,
        "an idle outbound queue keeps {per_queue} bytes (at most {MOST_PER_QUEUE}): \
         at 10,000 agents that is {} MiB",
        per_queue * 10_000 / (1 << 20)
    );
    drop(queues);
}
