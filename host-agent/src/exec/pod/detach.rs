//! Stopping a pod command: the API gives no way to kill the process in the pod, so the
//! pump's kill action aborts the task reading the exec websocket (or the log), which
//! closes the connection.

use crate::exec::ExecError;
use crate::exec::pump::{Kill, Stop};
use futures_util::future::BoxFuture;
use tokio::task::JoinHandle;

/// The pump's kill action for a pod command: drop the exec stream (or the log read) and
/// the tasks reading it; also done when the command ends or its request is dropped.
pub(super) struct Detach {
    pub tasks: Vec<JoinHandle<()>>,
    /// The pump stopped the command before it ended.
    pub stopped: bool,
}

impl Detach {
    pub fn new(tasks: Vec<JoinHandle<()>>) -> Self {
        Detach {
            tasks,
            stopped: false,
        }
    }

    fn close(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Kill for Detach {
    fn kill(&mut self, _why: Stop) -> BoxFuture<'_, Result<bool, ExecError>> {
        self.stopped = true;
        self.close();
        Box::pin(async { Ok(true) })
    }
}

impl Drop for Detach {
    fn drop(&mut self) {
        self.close();
    }
}
