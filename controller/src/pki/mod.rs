//! The controller's keys and certificates: the CA ([`ca`]), the gateway's server
//! certificate ([`gateway_cert`]), the grant-signing key ([`grant_key`]) and join tokens
//! ([`join_token`]). [`Pki::load_or_init`] creates whatever is missing in the data
//! directory on first start and loads the rest; with a shared secrets directory
//! ([`shared`]) the CA and the grant key come from there and are never created.

pub mod ca;
pub mod gateway_cert;
pub mod grant_key;
pub mod join_token;
pub mod shared;

use std::path::Path;

use time::OffsetDateTime;

pub use ca::{CertificateAuthority, IssuedCert};
pub use gateway_cert::{GATEWAY_SERVER_NAME, GatewayIdentity, GatewaySan};
pub use grant_key::GrantKey;

use crate::Result;
use crate::data_dir::DataDir;

/// Everything the running controller signs with.
#[derive(Debug)]
pub struct Pki {
    /// The CA.
    pub ca: CertificateAuthority,
    /// The gateway's certificate chain and key.
    pub gateway: GatewayIdentity,
    /// The grant-signing key.
    pub grant: GrantKey,
    /// The internal-link CA of replicas (`--cluster-listen`), from the secrets directory;
    /// absent without one, or from one made before it existed.
    pub cluster_ca: Option<CertificateAuthority>,
}

impl Pki {
    /// Loads the CA, the grant key and the gateway certificate, creating what is missing
    /// and re-issuing the gateway certificate when its SANs changed or it expires soon.
    pub fn load_or_init(
        dir: &DataDir,
        secrets: Option<&Path>,
        extra_sans: &[GatewaySan],
        now: OffsetDateTime,
    ) -> Result<Pki> {
        let _lock = dir.lock()?;
        let (ca, grant, cluster_ca) = match secrets {
            Some(shared) => {
                let (ca, grant) = shared::load(shared)?;
                (ca, grant, shared::load_cluster_ca(shared)?)
            }
            None => (
                CertificateAuthority::load_or_create(dir, now)?,
                GrantKey::load_or_create(dir)?,
                None,
            ),
        };
        let sans =
            gateway_cert::gateway_sans(gateway_cert::local_hostname().as_deref(), extra_sans);
        let gateway = gateway_cert::load_or_issue(dir, &ca, &sans, now)?;
        Ok(Pki {
            ca,
            gateway,
            grant,
            cluster_ca,
        })
    }

    /// Loads the CA only, creating it on first use in the data directory (for `token
    /// create` and `ca show`); from `secrets` when the controller serves with them.
    pub fn load_or_create_ca(
        dir: &DataDir,
        secrets: Option<&Path>,
        now: OffsetDateTime,
    ) -> Result<CertificateAuthority> {
        if let Some(shared) = secrets {
            return shared::load_ca(shared);
        }
        let _lock = dir.lock()?;
        CertificateAuthority::load_or_create(dir, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn first_start_creates_private_keys_and_restart_keeps_the_ca() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("vigil"));
        let now = OffsetDateTime::now_utc();
        let first = Pki::load_or_init(&dir, None, &[], now).unwrap();
        for key in ["ca.key", "gateway.key", "grant.key"] {
            let mode = std::fs::metadata(dir.path(key))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{key}");
        }
        let again = Pki::load_or_init(&dir, None, &[], now).unwrap();
        assert_eq!(again.ca.fingerprint(), first.ca.fingerprint());
        assert_eq!(again.grant.public_bytes(), first.grant.public_bytes());
        assert_eq!(again.gateway.chain[0], first.gateway.chain[0]);
        assert_eq!(
            Pki::load_or_create_ca(&dir, None, now)
                .unwrap()
                .fingerprint(),
            first.ca.fingerprint()
        );
    }
}
