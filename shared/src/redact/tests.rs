use super::*;

fn r(text: &str) -> String {
    redact(text).text
}

#[test]
fn examples_from_the_api_doc() {
    assert_eq!(r("DB_PASSWORD=hunter2"), "DB_PASSWORD=[REDACTED]");
    assert_eq!(
        r("Authorization: Bearer abc.def-123"),
        "Authorization: Bearer [REDACTED]"
    );
    assert_eq!(
        r("https://user:pw@host/x"),
        "https://user:[REDACTED]@host/x"
    );
    assert_eq!(redact("a=1 b=2").count, 0);
}

#[test]
fn pem_block_across_lines() {
    let key =
        "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\ny\n";
    let want = "x\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----\ny\n";
    let got = redact(key);
    assert_eq!(got.text, want);
    assert_eq!(got.count, 1);
    assert_eq!(
        redact(want),
        Redacted {
            text: want.into(),
            count: 0
        }
    );
}

#[test]
fn stream_matches_whole_for_every_split() {
    let text = "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\npassword: x y\n";
    let whole = r(text);
    for i in 0..=text.len() {
        for j in i..=text.len() {
            let mut s = StreamRedactor::new();
            let mut out = s.push(&text[..i]);
            out += &s.push(&text[i..j]);
            out += &s.push(&text[j..]);
            out += &s.finish();
            assert_eq!(out, whole, "split at {i},{j}");
        }
    }
}

#[test]
fn long_lines_are_cut() {
    let line = "a".repeat(3 * MAX_SEGMENT);
    let mut s = StreamRedactor::new();
    let out = s.push(&line);
    assert!(out.len() >= 2 * MAX_SEGMENT);
    assert_eq!(out + &s.finish(), line);
}
