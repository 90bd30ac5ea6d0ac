//! The JSON body extractor of the API: the body limit, unknown fields and malformed JSON
//! all become `400 INVALID_INPUT` with a message that says what is wrong.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::error::ApiCode;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON request body of type `T`.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(request: Request, state: &S) -> Result<Self, Error> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    Error::coded(
                        ApiCode::PayloadTooLarge,
                        format!("request body is larger than {MAX_BODY_BYTES} bytes"),
                    )
                } else {
                    Error::InvalidInput(format!(
                        "cannot read the request body: {}",
                        rejection.body_text()
                    ))
                }
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::InvalidInput(
                "request body is empty; send a JSON object".into(),
            ));
        }
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| Error::InvalidInput(format!("invalid JSON body: {e}")))
    }
}
