//! The client against local servers on 127.0.0.1: API errors keep the server's status,
//! credentials are sent (a token file is read per request), bad answers are errors, and a
//! kubeconfig's CA and client certificate carry a real mutual-TLS connection.

use super::client::read_body;
use super::*;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

async fn serve(app: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn status_json(code: u16, reason: &str, message: &str) -> String {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{message}","reason":"{reason}","code":{code}}}"#
    )
}

fn app() -> axum::Router {
    let forbidden = || async {
        (
            StatusCode::FORBIDDEN,
            status_json(403, "Forbidden", "pods is forbidden: no"),
        )
    };
    axum::Router::new()
        .route("/api/v1/namespaces/x/pods/secret", get(forbidden))
        .route("/api/v1/namespaces/x/pods/secret/exec", get(forbidden))
        .route(
            "/api/v1/namespaces/x/pods/ghost",
            get(|| async { (StatusCode::NOT_FOUND, "no such thing") }),
        )
        .route("/garbage", get(|| async { "this is not json" }))
        .route("/big", get(|| async { "x".repeat(100_000) }))
        .route(
            "/version",
            get(|headers: HeaderMap| async move {
                let auth = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or("none")
                    .to_owned();
                format!(r#"{{"gitVersion":"{auth}"}}"#).into_response()
            }),
        )
}

fn client(url: &str, auth: Auth) -> Client {
    let mut config = Config::new(url.parse().unwrap_or_else(|e| panic!("{e}")));
    config.auth = auth;
    Client::new(config).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn api_errors_keep_the_servers_code_and_message() {
    let url = serve(app()).await;
    let c = client(&url, Auth::None);
    match c.get_pod("x", "secret").await {
        Err(Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
            assert_eq!(e.message, "pods is forbidden: no");
        }
        other => panic!("{other:?}"),
    }
    // A 404 of a pod is "no such pod", not an error.
    assert!(matches!(c.get_pod("x", "ghost").await, Ok(None)));
    match c
        .get_json::<types::Version>("/api/v1/namespaces/x/pods/ghost")
        .await
    {
        Err(Error::Api(e)) => assert_eq!((e.code, e.message.as_str()), (404, "no such thing")),
        other => panic!("{other:?}"),
    }
    // The exec upgrade refused: the same error, not a websocket failure.
    match c.exec("x", "secret", None, &["true"]).await {
        Err(Error::Api(e)) => assert_eq!(e.code, 403),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("the upgrade was refused, yet a socket opened"),
    }
    let garbage = c.get_json::<types::Version>("/garbage").await;
    assert!(matches!(garbage, Err(Error::Decode(_))), "{garbage:?}");
    let big = c.get("/big", "*/*").await.unwrap_or_else(|e| panic!("{e}"));
    let read = read_body(big.into_body(), 1000).await;
    assert!(matches!(read, Err(Error::TooLarge(1000))), "{read:?}");
    let refused = client("http://127.0.0.1:9", Auth::None)
        .apiserver_version()
        .await;
    assert!(matches!(refused, Err(Error::Connect(..))), "{refused:?}");
}

#[tokio::test]
async fn credentials_are_sent_and_a_token_file_is_read_per_request() {
    let url = serve(app()).await;
    let seen = |c: Client| async move {
        c.apiserver_version()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .git_version
    };
    assert_eq!(seen(client(&url, Auth::None)).await, "none");
    assert_eq!(
        seen(client(&url, Auth::Bearer("t1".into()))).await,
        "Bearer t1"
    );
    assert_eq!(
        seen(client(&url, Auth::Basic("dTpw".into()))).await,
        "Basic dTpw"
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("token");
    std::fs::write(&path, "first\n").unwrap_or_else(|e| panic!("{e}"));
    let c = client(&url, Auth::TokenFile(path.clone()));
    assert_eq!(seen(c.clone()).await, "Bearer first");
    std::fs::write(&path, "rotated").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen(c).await, "Bearer rotated");
}

struct Pki {
    ca_pem: String,
    server: (String, String),
    client: (String, String),
    ca_der: rustls::pki_types::CertificateDer<'static>,
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let mut ca_params = CertificateParams::default();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    let ca = ca_params
        .self_signed(&ca_key)
        .unwrap_or_else(|e| panic!("{e}"));
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let leaf = |names: Vec<String>, usage| {
        let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
        let mut params = CertificateParams::new(names).unwrap_or_else(|e| panic!("{e}"));
        params.extended_key_usages = vec![usage];
        let cert = params
            .signed_by(&key, &issuer)
            .unwrap_or_else(|e| panic!("{e}"));
        (cert.pem(), key.serialize_pem())
    };
    Pki {
        ca_pem: ca.pem(),
        server: leaf(
            vec!["127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        ),
        client: leaf(vec!["robot".into()], ExtendedKeyUsagePurpose::ClientAuth),
        ca_der: ca.der().clone(),
    }
}

/// A TLS server that requires a client certificate from the CA and answers every
/// connection with one fixed `/version`.
async fn tls_server(pki: &Pki) -> String {
    use rustls::pki_types::pem::PemObject;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots
        .add(pki.ca_der.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let chain = rustls::pki_types::CertificateDer::pem_slice_iter(pki.server.0.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{e}"));
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(pki.server.1.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap_or_else(|e| panic!("{e}"));
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                continue;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match tls.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let body = r#"{"gitVersion":"v-tls"}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tls.write_all(answer.as_bytes()).await;
            let _ = tls.shutdown().await;
        }
    });
    format!("https://{addr}")
}

fn kubeconfig(url: &str, ca_pem: &str, client: &(String, String)) -> Kubeconfig {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let text = format!(
        "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: {url}\n    certificate-authority-data: {}\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nusers:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        b64(ca_pem),
        b64(&client.0),
        b64(&client.1)
    );
    Kubeconfig::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_kubeconfig_ca_and_client_certificate_carry_mutual_tls() {
    let pki = pki();
    let url = tls_server(&pki).await;
    let kc = kubeconfig(&url, &pki.ca_pem, &pki.client);
    let c = Client::new(Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let version = c
        .apiserver_version()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(version.git_version, "v-tls");

    // Another CA: the server is not trusted.
    let other = self::pki();
    let kc = kubeconfig(&url, &other.ca_pem, &pki.client);
    let c = Client::new(Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = c.apiserver_version().await;
    assert!(matches!(refused, Err(Error::Tls(..))), "{refused:?}");
}
