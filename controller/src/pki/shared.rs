//! The shared identity of a controller's replicas (`--secrets-dir`): the CA, the
//! grant-signing key and the internal-link CA (which signs only the replicas' own
//! certificates for the link between them) in a directory of their own, made once by `vigil-controller secrets
//! init` and then mounted by every replica (a Kubernetes Secret, a copied directory). A
//! replica only reads it: a missing or partial directory is an error, never a reason to
//! make new keys, which would split the fleet's trust.

use std::path::Path;

use time::OffsetDateTime;

use super::{CertificateAuthority, GrantKey};
use crate::data_dir::{CA_KEY, CA_PEM, CLUSTER_CA_KEY, CLUSTER_CA_PEM, DataDir, GRANT_KEY};
use crate::{Error, Result};

/// The files of a secrets directory.
pub const FILES: [&str; 5] = [CA_PEM, CA_KEY, GRANT_KEY, CLUSTER_CA_PEM, CLUSTER_CA_KEY];
/// The common name of the internal-link CA.
pub const CLUSTER_CA_NAME: &str = "Vigil replicas CA";

/// Makes the shared identity in `dir` (created 0700 when missing): a new CA, grant key and
/// internal-link CA. Refuses a directory that already holds any of them, except one made
/// before the internal-link CA existed (CA and grant key, nothing else): that one gets the
/// internal-link CA added and keeps the rest.
pub fn init(dir: &Path, now: OffsetDateTime) -> Result<CertificateAuthority> {
    let secrets = DataDir::new(dir);
    // Held across the check and the writes, so two inits at once cannot both write.
    let _lock = secrets.lock()?;
    let present: Vec<&str> = FILES
        .into_iter()
        .filter(|file| secrets.path(file).exists())
        .collect();
    if present == [CA_PEM, CA_KEY, GRANT_KEY] {
        CertificateAuthority::load_or_create_files(
            &secrets,
            (CLUSTER_CA_PEM, CLUSTER_CA_KEY),
            CLUSTER_CA_NAME,
            now,
        )?;
        tracing::info!(dir = %dir.display(), "added the internal-link CA to the shared secrets");
        return load_ca(dir);
    }
    if let Some(found) = present.first() {
        return Err(Error::Config(format!(
            "{} already holds {found}: the shared secrets are made once; give every replica \
             this directory, or remove it to start a new identity (every agent would have to \
             enroll again)",
            dir.display()
        )));
    }
    let ca = CertificateAuthority::load_or_create(&secrets, now)?;
    GrantKey::load_or_create(&secrets)?;
    CertificateAuthority::load_or_create_files(
        &secrets,
        (CLUSTER_CA_PEM, CLUSTER_CA_KEY),
        CLUSTER_CA_NAME,
        now,
    )?;
    Ok(ca)
}

/// Loads the internal-link CA from `dir`, if it holds one (a directory made before it
/// existed does not; `secrets init` adds it).
pub fn load_cluster_ca(dir: &Path) -> Result<Option<CertificateAuthority>> {
    let secrets = DataDir::new(dir);
    match (
        secrets.read_optional(CLUSTER_CA_PEM)?,
        secrets.read_optional(CLUSTER_CA_KEY)?,
    ) {
        (Some(cert), Some(key)) => CertificateAuthority::from_pem(&cert, &key).map(Some),
        (None, None) => Ok(None),
        _ => Err(Error::Certificate(format!(
            "--secrets-dir {} has only one of {CLUSTER_CA_PEM} and {CLUSTER_CA_KEY}",
            dir.display()
        ))),
    }
}

/// Loads the CA from `dir`.
pub fn load_ca(dir: &Path) -> Result<CertificateAuthority> {
    CertificateAuthority::from_pem(&read(dir, CA_PEM)?, &read(dir, CA_KEY)?)
}

/// Loads the CA and the grant key from `dir`.
pub fn load(dir: &Path) -> Result<(CertificateAuthority, GrantKey)> {
    Ok((load_ca(dir)?, GrantKey::parse(&read(dir, GRANT_KEY)?)?))
}

fn read(dir: &Path, file: &str) -> Result<String> {
    DataDir::new(dir).read_optional(file)?.ok_or_else(|| {
        Error::Config(format!(
            "--secrets-dir {}: no {file}; make the shared secrets once with `vigil-controller \
             secrets init --dir {}` and give every replica that directory",
            dir.display(),
            dir.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_makes_the_identity_once_and_load_reads_it_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("secrets");
        let now = OffsetDateTime::now_utc();
        let ca = init(&dir, now).unwrap();
        let (loaded, grant) = load(&dir).unwrap();
        let cluster = load_cluster_ca(&dir).unwrap().expect("an internal-link CA");
        assert_ne!(cluster.fingerprint(), ca.fingerprint());
        assert_eq!(loaded.fingerprint(), ca.fingerprint());
        assert_eq!(load_ca(&dir).unwrap().fingerprint(), ca.fingerprint());
        let again = GrantKey::parse(&std::fs::read_to_string(dir.join(GRANT_KEY)).unwrap());
        assert_eq!(again.unwrap().public_bytes(), grant.public_bytes());
        let err = init(&dir, now).unwrap_err().to_string();
        assert!(err.contains("already holds"), "{err}");
        assert_eq!(
            load(&dir).unwrap().0.fingerprint(),
            ca.fingerprint(),
            "unchanged"
        );
    }

    #[test]
    fn a_missing_or_partial_directory_is_an_error_not_new_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let err = load(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("secrets init"), "{err}");
        let dir = tmp.path().join("s");
        init(&dir, OffsetDateTime::now_utc()).unwrap();
        std::fs::remove_file(dir.join(GRANT_KEY)).unwrap();
        let err = load(&dir).unwrap_err().to_string();
        assert!(err.contains(GRANT_KEY), "{err}");
        assert!(!dir.join(GRANT_KEY).exists(), "nothing was made");
    }
}
