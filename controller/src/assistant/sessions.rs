//! The chat sessions as the API reads and changes them (list, one, rename, delete, and
//! their messages), so that the handlers go through the assistant, never around it to the
//! store.

use super::service::Assistant;
use crate::clock::unix_now;
use crate::store::chat::{MessageRow, SessionRow};
use crate::{Error, Result};

/// The longest session title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

impl Assistant {
    /// Every session, newest first.
    pub async fn sessions(&self) -> Result<Vec<SessionRow>> {
        self.store().list_sessions().await
    }

    /// One session; `NOT_FOUND` when there is none.
    pub async fn session(&self, id: &str) -> Result<SessionRow> {
        self.store()
            .get_session(id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no chat session {id:?}")))
    }

    /// Gives a session a new title (1 to [`MAX_TITLE_CHARS`] characters after trimming).
    pub async fn rename_session(&self, id: &str, title: &str) -> Result<SessionRow> {
        let title = title.trim();
        if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
            return Err(Error::InvalidInput(format!(
                "a session title has 1 to {MAX_TITLE_CHARS} characters"
            )));
        }
        if !self.store().rename_session(id, title, unix_now()).await? {
            return Err(Error::NotFound(format!("no chat session {id:?}")));
        }
        self.session(id).await
    }

    /// Cancels a running turn, withdraws its approvals and deletes the session with its
    /// messages.
    pub async fn delete_session(&self, id: &str) -> Result<()> {
        self.cancel(id).await?;
        self.store().delete_session(id).await?;
        self.forget_session(id);
        Ok(())
    }

    /// A session's messages, oldest first; `NOT_FOUND` when there is no such session.
    pub async fn messages(&self, id: &str) -> Result<Vec<MessageRow>> {
        self.session(id).await?;
        self.store().list_messages(id).await
    }
}
