//! The web page, served at `/` with its assets under `/assets/`. The files in `assets/` are
//! plain ES modules, one stylesheet and one HTML page, compiled into the binary: there is no
//! JavaScript build step. Every answer carries a strict Content-Security-Policy (scripts
//! from this origin only, no inline script, no third-party requests, no framing).
//!
//! The page only uses the HTTP API, with the token in the `Authorization` header.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The policy of every page and asset.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One compiled-in file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// The page's files (every one the HTML and the modules refer to).
const ASSETS: &[Asset] = &[
    Asset {
        name: "app.js",
        content_type: JS,
        body: include_str!("assets/app.js"),
    },
    Asset {
        name: "api.js",
        content_type: JS,
        body: include_str!("assets/api.js"),
    },
    Asset {
        name: "cards.js",
        content_type: JS,
        body: include_str!("assets/cards.js"),
    },
    Asset {
        name: "chat.js",
        content_type: JS,
        body: include_str!("assets/chat.js"),
    },
    Asset {
        name: "complete.js",
        content_type: JS,
        body: include_str!("assets/complete.js"),
    },
    Asset {
        name: "dom.js",
        content_type: JS,
        body: include_str!("assets/dom.js"),
    },
    Asset {
        name: "markdown.js",
        content_type: JS,
        body: include_str!("assets/markdown.js"),
    },
    Asset {
        name: "turn.js",
        content_type: JS,
        body: include_str!("assets/turn.js"),
    },
    Asset {
        name: "findings.js",
        content_type: JS,
        body: include_str!("assets/findings.js"),
    },
    Asset {
        name: "views.js",
        content_type: JS,
        body: include_str!("assets/views.js"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("assets/style.css"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        body: include_str!("assets/favicon.svg"),
    },
];

const INDEX: &str = include_str!("assets/index.html");

/// The routes of the page (no authentication: the page holds no data until signed in).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/assets/{name}", get(asset))
}

async fn index() -> Response {
    respond("text/html; charset=utf-8", INDEX)
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => respond(asset.content_type, asset.body),
        None => {
            let mut response = (StatusCode::NOT_FOUND, "no such asset").into_response();
            secure(&mut response);
            response
        }
    }
}

fn respond(content_type: &'static str, body: &'static str) -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response();
    secure(&mut response);
    response
}

fn secure(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module another one imports is served.
    #[test]
    fn every_import_is_an_asset() {
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            for line in asset.body.lines().filter(|l| l.starts_with("import ")) {
                let from = line.rsplit("from '").next().unwrap_or_default();
                let name = from.trim_start_matches("./").trim_end_matches("';");
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "{} imports {name}, which is not served",
                    asset.name
                );
            }
        }
    }

    /// The page loads its script as a module from this origin, with no inline script or
    /// style, which the policy would block.
    #[test]
    fn the_page_has_no_inline_code() {
        assert!(INDEX.contains(r#"<script type="module" src="/assets/app.js"></script>"#));
        assert_eq!(INDEX.matches("<script").count(), 1);
        assert!(!INDEX.contains("<style") && !INDEX.contains("style="));
        let handler = INDEX.split(' ').any(|word| {
            word.starts_with("on")
                && word.split('=').next().is_some_and(|a| a.len() > 2)
                && word.contains('=')
        });
        assert!(!handler, "the page has an inline event handler");
        for asset in ASSETS {
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
            ] {
                assert!(!asset.body.contains(sink), "{} uses {sink}", asset.name);
            }
            // An SVG's namespace is a name, not a request.
            let body = asset
                .body
                .replace(r#"xmlns="http://www.w3.org/2000/svg""#, "");
            assert!(!body.contains("://"), "{} names another origin", asset.name);
        }
    }
}
