//! Cases for the sed script parser; the refused forms were run with GNU sed 4.9.

use super::script_writes;

#[test]
fn reads() {
    for s in [
        "1,20p",
        "s/a/b/g",
        "/^#/d; s|x|y|2",
        "$!N;P;D",
        "/start/,/end/{ /x/d; p }",
        "1{p}",
        "s/[]x]/y/",
        "s/[^]x]/y/",
        "s/[[:space:]]*$//",
        "s/\\[global\\]/x/",
        "y/abc/xyz/",
        "10q",
        "q5",
        "1~2p",
        "0,/re/p",
        "/a/,+3p",
        "/x/I,$ !d",
        "\\,a,p",
        ":a;N;$!ba;s/\\n/ /g",
        "s/x/[/",
        "1i header",
        "1a\\\nfirst\\\nsecond",
        "$a foo\\\\",
        "1r /etc/hostname",
        "s/#.*//\n/^$/d",
        "p # print",
    ] {
        assert_eq!(script_writes(s), None, "{s}");
    }
}

#[test]
fn writes() {
    for s in [
        "w /tmp/x",
        "s/a/b/w /etc/passwd",
        "1e rm x",
        "s/.*/id/e",
        "1W out",
        "s/a/b/gw x",
        "Z",
        "s/a/b/q",
        "v",
        // an escaped backslash ends the a/i/c text: the next line is a command
        "1a foo\\\\\n1w /tmp/out",
        "1i foo\\\\\n1e id",
        // brackets in the replacement are plain characters
        "s/x/[/;w /tmp/out\ns/]/x/",
        // ] first in a bracket expression is literal
        "s/[]/]/x/;w /tmp/out",
        // labels end at a blank in GNU sed and at the line end elsewhere
        "b x w /tmp/out\n:x",
        ":x w /tmp/out",
        "bx;}",
        "/x/{s/a/b/;b}",
        // a delimiter or backslash inside a bracket expression
        "s/[/]/x/",
        "s/[\\/]/x/",
        "s/[[:alpha:]/]/x/",
        // blocks must balance
        "1{p",
        "p}",
        "s/a\nb/x/",
        "s[a[b[",
    ] {
        assert!(script_writes(s).is_some(), "{s}");
    }
}
