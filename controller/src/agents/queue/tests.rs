use futures_util::FutureExt;

use super::*;

fn queue(concurrency: usize, bound: usize) -> Arc<AgentQueue> {
    AgentQueue::new(QueueLimits { concurrency, bound })
}

#[tokio::test]
async fn commands_past_the_limit_wait_for_a_free_slot() {
    let q = queue(2, 10);
    let a = q.acquire("x").await.unwrap();
    let _b = q.acquire("x").await.unwrap();
    let mut c = Box::pin(q.acquire("x"));
    assert!((&mut c).now_or_never().is_none(), "the third waits");
    assert_eq!((q.running(), q.waiting()), (2, 1));
    drop(a);
    let _c = c.await.unwrap();
    assert_eq!((q.running(), q.waiting()), (2, 0));
}

#[tokio::test]
async fn callers_take_turns() {
    let q = queue(1, 100);
    let first = q.acquire("flood").await.unwrap();
    let (tx, mut order) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..5 {
        let (q2, tx) = (q.clone(), tx.clone());
        tasks.push(tokio::spawn(async move {
            let slot = q2.acquire("flood").await.unwrap();
            tx.send(format!("flood{i}")).unwrap();
            drop(slot);
        }));
        // Each registers before the next, so the queue order is known.
        while q.waiting() < i + 1 {
            tokio::task::yield_now().await;
        }
    }
    let other = {
        let (q2, tx) = (q.clone(), tx.clone());
        tokio::spawn(async move {
            let slot = q2.acquire("other").await.unwrap();
            tx.send("other".to_owned()).unwrap();
            drop(slot);
        })
    };
    while q.waiting() < 6 {
        tokio::task::yield_now().await;
    }
    drop(first);
    for task in tasks {
        task.await.unwrap();
    }
    other.await.unwrap();
    drop(tx);
    let mut seen = Vec::new();
    while let Some(name) = order.recv().await {
        seen.push(name);
    }
    assert_eq!(
        seen[..2],
        ["flood0", "other"],
        "the other caller runs second: {seen:?}"
    );
    assert_eq!(seen.len(), 6);
    assert_eq!((q.running(), q.waiting()), (0, 0));
}

#[tokio::test]
async fn a_full_queue_answers_agent_busy_with_429() {
    let q = queue(1, 2);
    let _running = q.acquire("a").await.unwrap();
    let mut w1 = Box::pin(q.acquire("a"));
    let mut w2 = Box::pin(q.acquire("b"));
    assert!((&mut w1).now_or_never().is_none());
    assert!((&mut w2).now_or_never().is_none());
    let err = q.acquire("c").await.unwrap_err();
    assert_eq!(err.api_code(), "AGENT_BUSY");
    assert_eq!(err.http_status(), axum::http::StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(err.retry_after_s(), Some(1));
}

#[tokio::test]
async fn a_caller_that_goes_away_leaves_the_queue_at_once() {
    let q = queue(1, 1);
    let running = q.acquire("a").await.unwrap();
    let mut gone = Box::pin(q.acquire("a"));
    assert!((&mut gone).now_or_never().is_none());
    assert_eq!(q.waiting(), 1);
    drop(gone);
    assert_eq!(q.waiting(), 0, "no longer counted against the bound");
    let mut next = Box::pin(q.acquire("b"));
    assert!(
        (&mut next).now_or_never().is_none(),
        "room again in the queue"
    );
    drop(running);
    let _slot = next.await.unwrap();
    assert_eq!((q.running(), q.waiting()), (1, 0));
}

#[tokio::test]
async fn a_slot_handed_to_a_caller_that_just_left_passes_on() {
    let q = queue(1, 4);
    let running = q.acquire("a").await.unwrap();
    let mut left = Box::pin(q.acquire("b"));
    let mut after = Box::pin(q.acquire("c"));
    assert!((&mut left).now_or_never().is_none());
    assert!((&mut after).now_or_never().is_none());
    drop(running); // hands the slot to `left`, which never looks again
    drop(left);
    let slot = after.await.unwrap();
    assert_eq!((q.running(), q.waiting()), (1, 0));
    drop(slot);
    assert_eq!(q.running(), 0, "no slot leaked");
}
