use super::*;
use crate::link::pin::{PinnedCaVerifier, pin_mismatch};
use crate::testing::pki::Pki;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::UnixTime;

#[test]
fn urls_parse_to_host_and_port() {
    let cases = [
        ("https://ctl.lan", "https://ctl.lan:8641"),
        ("https://ctl.lan:9000/", "https://ctl.lan:9000"),
        ("HTTPS://10.0.0.5:8641", "https://10.0.0.5:8641"),
        ("https://[::1]:8641", "https://[::1]:8641"),
        ("https://[fe80::1]", "https://[fe80::1]:8641"),
    ];
    for (input, want) in cases {
        assert_eq!(input.parse::<ControllerUrl>().unwrap().to_string(), want);
    }
    for bad in [
        "http://ctl",
        "ctl:8641",
        "https://",
        "https://ctl:0",
        "https://ctl:99999",
        "https://ctl/path",
        "https://user@ctl",
        "https://::1",
        "https://[::1",
    ] {
        assert!(
            matches!(bad.parse::<ControllerUrl>(), Err(Error::Usage(_))),
            "{bad}"
        );
    }
}

fn verify(
    verifier: &PinnedCaVerifier,
    chain: &[CertificateDer<'static>],
) -> Result<(), rustls::Error> {
    let name = ServerName::try_from(GATEWAY_SERVER_NAME).unwrap();
    verifier
        .verify_server_cert(&chain[0], &chain[1..], &name, &[], UnixTime::now())
        .map(|_| ())
}

#[test]
fn the_pinned_ca_must_be_in_the_chain_and_sign_the_gateway() {
    let pki = Pki::new();
    let pinned = PinnedCaVerifier::new(pki.fingerprint(), provider());
    let good = [pki.gateway.der().clone(), pki.ca.der().clone()];
    verify(&pinned, &good).unwrap();

    let missing_ca = verify(&pinned, &good[..1]).unwrap_err();
    assert!(pin_mismatch(&missing_ca).is_some(), "{missing_ca}");

    let other_fp = Pki::new().fingerprint();
    let other = PinnedCaVerifier::new(other_fp.clone(), provider());
    let wrong_pin = verify(&other, &good).unwrap_err();
    assert_eq!(
        pin_mismatch(&wrong_pin).map(|p| p.expected.clone()),
        Some(other_fp)
    );

    // An impostor sends our (public) CA certificate along with its own gateway certificate.
    let impostor = Pki::new();
    let forged = [impostor.gateway.der().clone(), pki.ca.der().clone()];
    let refused = verify(&pinned, &forged).unwrap_err();
    assert!(pin_mismatch(&refused).is_none(), "{refused}");
}

#[test]
fn link_config_requires_a_matching_key_and_parsable_pem() {
    let pki = Pki::new();
    let (key, csr) = crate::link::renew::new_key_and_csr().unwrap();
    let id = vigil_shared::ids::AgentId::new_random();
    let cert = pki.sign_agent(&csr, id, crate::state::now_unix(), 3600);
    link_config(&pki.ca.pem(), &cert, &key.serialize_pem()).unwrap();
    let (other, _) = crate::link::renew::new_key_and_csr().unwrap();
    assert!(link_config(&pki.ca.pem(), &cert, &other.serialize_pem()).is_err());
    assert!(link_config("nope", &cert, &key.serialize_pem()).is_err());
    assert!(parse_certs("", "x").is_err());
}
