//! Cases for the awk tokenizer; the refused exploits were run with gawk 5.2 and mawk 1.3.4.

use super::program_writes;

#[test]
fn reads() {
    for p in [
        "{print $1}",
        "$3 > 100 {print $1, $3}",
        "/a|b/ {n++} END {print n}",
        "{ printf \"%s\\n\", ($2 > 5) }",
        "NR==1 || /x/",
        "{s+=$1/1024} END {print s}",
        "{ if ($3 > 100) print $1 }",
        "{print ($1 > 5)}",
        "NR>1 && $3==\"running\" {print $1}",
        "$9 ~ /^5/",
        "/MemAvailable/ {print $2/1024 \" MB\"}",
        "{print $3 \"/\" $2}",
        "{ n = (x) / 2; print n }",
        "{ print /#/ }",
        "/[[:digit:]]+/ { print }",
        "/[]x]/",
        "BEGIN { x = 1 } # comment > | system",
        "{ a[$1] += $2 } END { for (k in a) print k, a[k] }",
        "{print 1,\n2}\n$1 > 5 {print}",
    ] {
        assert_eq!(program_writes(p), None, "{p}");
    }
}

#[test]
fn writes() {
    for p in [
        "BEGIN { system(\"id > /tmp/id\") }",
        "{print > \"/tmp/x\"}",
        "{print $1 >> \"f\"}",
        "{print | \"sh\"}",
        "{print |& \"sh\"}",
        "BEGIN { \"date\" | getline d }",
        "BEGIN { getline line < \"/etc/shadow\" }",
        "@load \"x\"",
        "BEGIN { f = \"system\"; @f(\"id\") }",
        "{printf \"%s\", $1 > \"/etc/x\"}",
        "BEGIN{system (\"x\")}",
        // `print /#/` is a regular expression, not a division followed by a comment
        "{print /#/; system(\"touch /tmp/x\")}",
        // `x++ / 2` is a division in gawk and a regular expression in mawk
        "BEGIN{x=4} {print x++ / 2; system(\"touch /tmp/x\"); y = 1/2}",
        "{ print $ /x/ }",
        "{ if (1) / 2; system(\"x\"); y = 1 /}",
        // a slash or backslash inside a bracket expression
        "/[/]/ { print }",
        "/[\\/]/",
        "{ print \"unterminated }",
        "{ print 'x' }",
        "/a\\\nb/",
        // a print statement continues after a comma or inside parentheses
        "{print 1,\n2 > \"/tmp/f\"}",
        "{print (1,\n2) > \"/tmp/f\"}",
        "{print 1 ||\n2 > \"/tmp/f\"}",
    ] {
        assert!(program_writes(p).is_some(), "{p}");
    }
}
