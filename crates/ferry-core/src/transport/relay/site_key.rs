//! The site key: the secret a launcher proves to a proxy before it may register jobs. It is
//! a file readable by its owner only, holding at least [`MIN_SITE_KEY_LEN`] bytes of key,
//! written as hex text (what `ferry proxy --make-key` writes; surrounding whitespace is
//! ignored) or as raw bytes (any file that is not entirely hex text).

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::wire::hex;
use super::RelayError;

pub const MIN_SITE_KEY_LEN: usize = 32;

/// Read the key in `path`, refusing a file that group or others may read or write, and a key
/// shorter than [`MIN_SITE_KEY_LEN`] bytes.
pub fn read_site_key(path: impl AsRef<Path>) -> Result<Vec<u8>, RelayError> {
    let path = path.as_ref();
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| RelayError::SiteKey(format!("{shown}: {e}")))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(RelayError::SiteKey(format!("{shown} has mode {mode:04o}: others may read it; it must be 0600 or 0400 (chmod 600 {shown})")));
    }
    let raw = std::fs::read(path).map_err(|e| RelayError::SiteKey(format!("{shown}: {e}")))?;
    let key = parse(&raw);
    if key.len() < MIN_SITE_KEY_LEN {
        return Err(RelayError::SiteKey(format!("{shown} holds {} bytes of key, at least {MIN_SITE_KEY_LEN} are needed", key.len())));
    }
    Ok(key)
}

/// Hex text (even length, whitespace around it ignored) decodes; anything else is the key.
fn parse(raw: &[u8]) -> Vec<u8> {
    let text = raw.trim_ascii();
    if !text.is_empty() && text.len().is_multiple_of(2) && text.iter().all(u8::is_ascii_hexdigit) {
        let digit = |c: u8| (c as char).to_digit(16).expect("checked hex digit") as u8;
        return text.chunks(2).map(|p| digit(p[0]) << 4 | digit(p[1])).collect();
    }
    raw.to_vec()
}

/// Write a new key of 32 random bytes as hex to `path`, mode 0600; never replaces a file.
pub fn write_site_key(path: impl AsRef<Path>) -> Result<(), RelayError> {
    let path = path.as_ref();
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key).map_err(|e| RelayError::SiteKey(format!("no random bytes: {e}")))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| RelayError::SiteKey(format!("{}: {e}", path.display())))?;
    // The umask may have taken bits away, never added them; set the mode exactly anyway.
    f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|e| RelayError::SiteKey(format!("{}: {e}", path.display())))?;
    writeln!(f, "{}", hex(&key)).map_err(|e| RelayError::SiteKey(format!("{}: {e}", path.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let mut n = [0u8; 8];
        getrandom::getrandom(&mut n).unwrap();
        let d = std::env::temp_dir().join(format!("ferry-sitekey-{}", hex(&n)));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn file(d: &Path, name: &str, bytes: &[u8], mode: u32) -> std::path::PathBuf {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn made_keys_read_back_and_are_private() {
        let d = dir();
        let p = d.join("site.key");
        write_site_key(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let k = read_site_key(&p).unwrap();
        assert_eq!(k.len(), 32);
        assert_eq!(std::fs::read_to_string(&p).unwrap().trim(), hex(&k));
        // Never overwrites.
        assert!(write_site_key(&p).is_err());
        write_site_key(d.join("other.key")).unwrap();
        assert_ne!(read_site_key(d.join("other.key")).unwrap(), k);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn hex_and_raw_keys() {
        let d = dir();
        let h = file(&d, "h", format!("  {}\n", "ab".repeat(40)).as_bytes(), 0o400);
        assert_eq!(read_site_key(&h).unwrap(), vec![0xab; 40]);
        let raw: Vec<u8> = (0..48u8).map(|i| i.wrapping_mul(97) | 0x80).collect();
        let r = file(&d, "r", &raw, 0o600);
        assert_eq!(read_site_key(&r).unwrap(), raw);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn open_or_short_files_are_refused() {
        let d = dir();
        for mode in [0o644, 0o640, 0o604, 0o660, 0o666] {
            let p = file(&d, "open", "ab".repeat(32).as_bytes(), mode);
            let e = read_site_key(&p).unwrap_err().to_string();
            assert!(e.contains("must be 0600 or 0400"), "{mode:o}: {e}");
        }
        let p = file(&d, "short", "ab".repeat(31).as_bytes(), 0o600);
        assert!(read_site_key(&p).unwrap_err().to_string().contains("31 bytes"));
        assert!(read_site_key(d.join("missing")).is_err());
        std::fs::remove_dir_all(d).unwrap();
    }
}
