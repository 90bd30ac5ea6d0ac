//! The container engine's door: an HTTP/1.1 server on a UNIX socket that forwards to the
//! real engine socket only what [`vigil_shared::door_policy`] lets through, each request on its own
//! upstream connection, the answer streamed back as it comes (`docker logs`). A refused
//! request gets `403` with a JSON `message`, which the Docker CLI prints as the daemon's
//! error. hyper parses both sides, so what reaches the engine is a request rebuilt from
//! the parsed method, path and headers, never the client's bytes.

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING, UPGRADE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};
use tracing::{debug, info};
use vigil_shared::door_policy as policy;

type Body = BoxBody<Bytes, hyper::Error>;

/// Serve the door at `socket` for the engine at `upstream`, with the upstream socket's
/// owner and mode. Returns once it listens; the door runs for the life of the agent.
pub async fn serve(socket: &Path, upstream: &Path) -> std::io::Result<()> {
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::remove_file(socket) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let listener = UnixListener::bind(socket)?;
    let meta = std::fs::metadata(upstream)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(meta.mode() & 0o777))?;
    std::os::unix::fs::chown(socket, Some(meta.uid()), Some(meta.gid()))?;
    let upstream = upstream.to_owned();
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    debug!(%error, "door accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| handle(req, upstream.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(())
}

async fn handle(req: Request<Incoming>, upstream: PathBuf) -> Result<Response<Body>, Infallible> {
    let headers = req.headers();
    let has_body = headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    let upgrade = headers.contains_key(UPGRADE);
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    if let Err(why) = policy::check(&method, &path, has_body, upgrade) {
        info!(%method, %path, %why, "the read-only door refused a request");
        return Ok(answer(
            StatusCode::FORBIDDEN,
            &format!("refused by Vigil's read-only door: {why}"),
        ));
    }
    match forward(req, &upstream).await {
        Ok(response) => Ok(response.map(BodyExt::boxed)),
        Err(why) => Ok(answer(
            StatusCode::BAD_GATEWAY,
            &format!("Vigil's read-only door could not reach the engine: {why}"),
        )),
    }
}

/// Why a request that passed the door did not reach the engine.
#[derive(Debug, thiserror::Error)]
enum Unreached {
    #[error("{0}")]
    Connect(#[from] std::io::Error),
    #[error("{0}")]
    Http(#[from] hyper::Error),
    #[error("{0}")]
    Request(#[from] hyper::http::Error),
}

async fn forward(req: Request<Incoming>, upstream: &Path) -> Result<Response<Incoming>, Unreached> {
    let stream = UnixStream::connect(upstream).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let mut out = Request::builder()
        .method(req.method().clone())
        .uri(req.uri().clone());
    for (name, value) in req.headers() {
        if name != CONNECTION && name != UPGRADE && name != CONTENT_LENGTH {
            out = out.header(name, value);
        }
    }
    let out = out.body(Empty::<Bytes>::new())?;
    Ok(sender.send_request(out).await?)
}

fn answer(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "message": message }).to_string();
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never: Infallible| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}
